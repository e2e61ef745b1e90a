-- What recording-finalize migrate left in this database, and what the functions are now.

create or replace function recording_finalize.schema_state()
returns table (
    kind text,
    name text,
    sha256 text,
    recorded_md5 text,
    live_md5 text,
    package_version text,
    recorded_at timestamptz
)
language sql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
    -- Every migration yoyo applied, with the checksum migrate recorded for its file (if any).
    select 'migration', m.migration_id::text, c.sha256::text, null, null,
        c.package_version, m.applied_at_utc at time zone 'UTC'
    from recording_finalize_migrations._yoyo_migration as m
    left join recording_finalize_migrations.file_checksums as c
        on c.kind = 'migration' and m.migration_id = c.file_name
    union all
    -- Every function file migrate applied: as recorded then, and the definitions as they are.
    select 'function', c.file_name, c.sha256::text, c.definition_md5::text,
        recording_finalize_internal.function_fingerprint(c.file_name), c.package_version,
        c.recorded_at
    from recording_finalize_migrations.file_checksums as c
    where c.kind = 'function'
    union all
    -- The last successful migrate: name is the schema version it left.
    select 'migrate', s.schema_version, null, null, null, s.package_version, s.migrated_at
    from recording_finalize_migrations.migrate_state as s
    union all
    -- The adapter: the reference file's sha256 and fingerprint migrate recorded when it
    -- installed it (NULL: it never did, the adapter is a DBA's), and the fingerprint now (NULL:
    -- no adapter schema).
    select 'adapter', 'recording_finalize_adapter', s.adapter_sha256::text, s.adapter_md5::text,
        recording_finalize_internal.adapter_fingerprint(), s.package_version, s.migrated_at
    from recording_finalize_migrations.migrate_state as s
$$;

comment on function recording_finalize.schema_state() is
'Schema drift check: one row per applied migration (kind migration: id, file sha256 recorded '
'by migrate), per applied function file (kind function: file name, sha256 and definition '
'fingerprint recorded right after applying it, live_md5 = the fingerprint now) and one row '
'kind migrate (name = schema version, package_version of the last migrate). The driver '
'compares it with the installed package before run/run-once touch a row, and status shows '
'it. Read-only. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.schema_state() from public;
grant execute on function recording_finalize.schema_state()
to recording_finalize_worker, recording_finalize_operator;
