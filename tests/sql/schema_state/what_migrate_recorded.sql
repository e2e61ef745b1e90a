-- schema_state: every applied migration with its recorded checksum, every applied function
-- file with the fingerprint recorded then and now, the last migrate's versions; callable by
-- the worker and the operator, who cannot read the bookkeeping tables themselves; a function
-- changed by hand, or a file whose functions are gone, shows as drift.
begin;
select plan(11);

create role rfr_pgtap_state_login login in role recording_finalize_worker;
create role rfr_pgtap_state_operator login in role recording_finalize_operator;

select results_eq(
    $$select name, sha256 ~ '^[0-9a-f]{64}$' from recording_finalize.schema_state()
    where kind = 'migration'$$,
    $$values ('0001_baseline'::text, true)$$,
    'the baseline, with the sha256 migrate recorded for its file'
);
select is(
    (select count(*) from recording_finalize.schema_state() where kind = 'function'),
    (select count(*) from recording_finalize_migrations.file_checksums where kind = 'function'),
    'one row per applied function file'
);
select cmp_ok(
    (select count(*) from recording_finalize.schema_state() where kind = 'function'),
    '>=', 49::bigint, 'every function file of sql/functions was applied'
);
select is_empty(
    $$select name from recording_finalize.schema_state()
    where kind = 'function' and live_md5 is distinct from recorded_md5$$,
    'after migrate every function file''s definitions are as recorded'
);
select results_eq(
    $$select name, package_version is not null from recording_finalize.schema_state()
    where kind = 'migrate'$$,
    $$values ('0001_baseline'::text, true)$$,
    'one row for the last migrate: the schema version it left and the package'
);

comment on function recording_finalize.requeue(uuid, text) is 'changed by hand';
select results_eq(
    $$select name from recording_finalize.schema_state()
    where kind = 'function' and live_md5 is distinct from recorded_md5$$,
    $$values ('recording_finalize.requeue.sql')$$,
    'a function changed by hand shows as live <> recorded'
);
drop function recording_finalize.failed_recordings(integer);
select results_eq(
    $$select live_md5 from recording_finalize.schema_state()
    where kind = 'function' and name = 'recording_finalize.failed_recordings.sql'$$,
    $$values (null::text)$$,
    'a file whose functions were dropped shows no live fingerprint'
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
reset role;
set local role rfr_pgtap_state_operator;
select lives_ok(
    'select * from recording_finalize.schema_state()',
    'the operator may call it too'
);
select throws_ok(
    'select * from recording_finalize_migrations.migrate_state', '42501', null,
    'and cannot read the bookkeeping either'
);
reset role;

select * from finish();
rollback;
