-- As the worker login: discover_unpublished refuses a bad window, limit or scan (RF001, the
-- window's COLUMN field naming republish_window), opening nothing.
begin;
select plan(8);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as rec \gset
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

set local role rfr_pgtap_worker_login;
select throws_ok($$select recording_finalize.discover_unpublished('-1 hour')$$, 'RF001', null,
    'a negative window is refused');
select throws_ok($$select recording_finalize.discover_unpublished('31 days')$$, 'RF001', null,
    'a window above 30 days is refused');
select throws_ok('select recording_finalize.discover_unpublished(null)', 'RF001', null,
    'a null window is refused');
select throws_ok($$select recording_finalize.discover_unpublished('1 day', 0)$$, 'RF001', null,
    'a limit of 0 is refused');
select throws_ok($$select recording_finalize.discover_unpublished('1 day', 100, 0)$$,
    'RF001', null, 'a scan of 0 is refused');
reset role;
create function pg_temp.column_of(p_sql text) returns text language plpgsql as $f$
declare
    v_column text;
begin
    execute p_sql;
    return '(no error)';
exception when others then
    get stacked diagnostics v_column = column_name;
    return nullif(v_column, '');
end
$f$;
select is(pg_temp.column_of($$select recording_finalize.discover_unpublished('31 days')$$),
    'republish_window', 'the window''s error names RFR_REPUBLISH_WINDOW''s key in COLUMN');
select is((select count(*) from messenger.recording_finalize_attempts), 0::bigint,
    'nothing was opened');
select lives_ok($$select recording_finalize.discover_unpublished('30 days', 10000, 100000)$$,
    'the largest window, limit and scan are admitted');

select * from finish();
rollback;
