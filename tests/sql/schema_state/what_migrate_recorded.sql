-- schema_state: every applied migration with its recorded checksum, every applied function
-- file with the fingerprint recorded then and now, the last migrate's versions, the adapter
-- migrate installed (its file's sha256, its fingerprint then and now); callable by
-- the worker and the operator, who cannot read the bookkeeping tables themselves; a function
-- changed by hand, or a file whose functions are gone, shows as drift.
begin;
select plan(13);

create role rfr_pgtap_state_login login in role recording_finalize_worker;
create role rfr_pgtap_state_operator login in role recording_finalize_operator;

select results_eq(
    $$select name, sha256 ~ '^[0-9a-f]{64}$' from recording_finalize.schema_state()
    where kind = 'migration' and name < '0006'$$,
    $$values ('0001_baseline'::text, true), ('0002_own_outbox', true),
        ('0003_believed_404', true), ('0004_republish_hold', true),
        ('0005_incident_kind', true)$$,
    'the baseline and each later migration, with the sha256 migrate recorded for its file'
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
    $$select max(name), true from recording_finalize.schema_state() where kind = 'migration'$$,
    'one row for the last migrate: the schema version it left and the package'
);
select results_eq(
    $$select name, sha256 ~ '^[0-9a-f]{64}$', recorded_md5 = live_md5
    from recording_finalize.schema_state() where kind = 'adapter'$$,
    $$values ('recording_finalize_adapter'::text, true, true)$$,
    'one row for the adapter: the reference file migrate installed, its fingerprint unchanged'
);
-- A DBA edits a port: the adapter is theirs now (migrate will keep it).
create or replace function recording_finalize_adapter.enqueue_realtime(
    p_kind text, p_session_kind text, p_session_id uuid, p_reference_id uuid, p_payload jsonb
)
returns void language sql volatile security invoker set search_path = pg_catalog, pg_temp
as $f$
    insert into messenger.realtime_outbox (kind, session_kind, session_id, reference_id, payload)
    values (p_kind, p_session_kind, p_session_id, p_reference_id, p_payload || '{"dba": 1}')
$f$;
select results_eq(
    $$select recorded_md5 is distinct from live_md5, live_md5 = recording_finalize_internal.
        adapter_fingerprint()
    from recording_finalize.schema_state() where kind = 'adapter'$$,
    $$values (true, true)$$,
    'an adapter a DBA edited shows as live <> recorded'
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
