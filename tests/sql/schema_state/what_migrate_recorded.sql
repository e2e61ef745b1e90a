-- schema_state: every applied migration with its recorded checksum, every applied function
-- file with the fingerprint recorded then and now, the last migrate's versions; callable by
-- the worker, who cannot read the bookkeeping tables themselves.
begin;
select plan(8);

create role rfr_pgtap_state_login login in role recording_finalize_worker;

select ok(
    (select count(*) from recording_finalize.schema_state() where kind = 'migration') >= 4,
    'one row per applied migration'
);
select is_empty(
    $$select name from recording_finalize.schema_state()
    where kind = 'migration' and sha256 !~ '^[0-9a-f]{64}$'$$,
    'every applied migration has the sha256 migrate recorded'
);
select is_empty(
    $$select name from recording_finalize.schema_state()
    where kind = 'function' and live_md5 is distinct from recorded_md5$$,
    'after migrate every function file''s definitions are as recorded'
);
select is(
    (select count(*) from recording_finalize.schema_state() where kind = 'migrate'), 1::bigint,
    'one row for the last migrate'
);

comment on function recording_finalize.requeue(uuid) is 'changed by hand';
select results_eq(
    $$select name from recording_finalize.schema_state()
    where kind = 'function' and live_md5 is distinct from recorded_md5$$,
    $$values ('recording_finalize.requeue.sql')$$,
    'a function changed by hand shows as live <> recorded'
);

set local role rfr_pgtap_state_login;
select lives_ok(
    'select * from recording_finalize.schema_state()',
    'the worker may call schema_state'
);
select throws_ok(
    'select * from recording_finalize_migrations.file_checksums', '42501', null,
    'the worker cannot read the bookkeeping tables'
);
select throws_ok(
    $$select recording_finalize.function_fingerprint('recording_finalize.stats.sql')$$,
    '42501', null, 'the worker cannot call the internal function_fingerprint'
);

select * from finish();
rollback;
