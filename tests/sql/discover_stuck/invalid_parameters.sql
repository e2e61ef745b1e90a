-- As the worker login: discover_stuck refuses a bad limit (RF001), opening nothing; it runs
-- with the stored policy.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session('Direct', '2 hours'), 'Uploading')
    as rec \gset
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

set local role rfr_pgtap_worker_login;
select throws_ok('select recording_finalize.discover_stuck(0)', 'RF001', null,
    'a limit of 0 is refused');
select throws_ok('select recording_finalize.discover_stuck(10001)', 'RF001', null,
    'a limit above 10000 is refused');
select throws_ok('select recording_finalize.discover_stuck(null)', 'RF001', null,
    'a null limit is refused');
reset role;
select is((select count(*) from messenger.recording_finalize_attempts), 0::bigint,
    'nothing was opened');
set local role rfr_pgtap_worker_login;
select is(recording_finalize.discover_stuck(), 1, 'the worker runs it with the stored policy');
reset role;

select * from finish();
rollback;
