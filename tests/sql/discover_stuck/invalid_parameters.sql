-- As the worker login: discover_stuck refuses a bad limit or policy (RF001), another topic
-- (RF009) and a policy outside the server's bounds (RF010), opening nothing.
begin;
select plan(8);

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
select throws_ok($$select recording_finalize.discover_stuck(10, '{"sla_timeout_seconds": 0}')$$,
    'RF001', null, 'an SLA of 0 is refused');
select throws_ok(
    $$select recording_finalize.discover_stuck(10, '{"topic": "pin.billing.invoice-paid.v1"}')$$,
    'RF009', null, 'another topic is refused');
select throws_ok(
    $$select recording_finalize.discover_stuck(10, '{"sla_timeout_seconds": 864000}')$$,
    'RF010', null, 'an SLA beyond the server''s bound is refused');
reset role;
select is((select count(*) from messenger.recording_finalize_attempts), 0::bigint,
    'nothing was opened');
set local role rfr_pgtap_worker_login;
select is(recording_finalize.discover_stuck(), 1, 'the worker runs it with the defaults');
reset role;

select * from finish();
rollback;
