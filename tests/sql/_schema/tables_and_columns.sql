-- The product's own tables (SPEC section 8): exactly these tables in the product's schemas and
-- messenger.recording_finalize_attempts, each with exactly these columns (type, nullability,
-- default, identity), keys, and no reference into the service's tables. The service's tables
-- are the service's: their shape is the contract (driver/install/contract.py), not checked here.
begin;
select plan(17);

-- One line per column: 'type[ not null][ default ...][ identity]'.
create temp table contract (tbl text, col text, spec text);
insert into contract values
    ('messenger.recording_finalize_attempts', 'id', 'uuid not null default gen_random_uuid()'),
    ('messenger.recording_finalize_attempts', 'recording_id', 'uuid not null'),
    ('messenger.recording_finalize_attempts', 'session_kind', 'character varying(12) not null'),
    ('messenger.recording_finalize_attempts', 'session_id', 'uuid not null'),
    ('messenger.recording_finalize_attempts', 'status',
        'character varying(16) not null default ''Pending''::character varying'),
    ('messenger.recording_finalize_attempts', 'attempts', 'integer not null default 0'),
    ('messenger.recording_finalize_attempts', 'next_attempt_at',
        'timestamp with time zone not null'),
    ('messenger.recording_finalize_attempts', 'last_error', 'character varying(512)'),
    ('messenger.recording_finalize_attempts', 'claim_token', 'uuid'),
    ('messenger.recording_finalize_attempts', 'claimed_at', 'timestamp with time zone'),
    ('messenger.recording_finalize_attempts', 'last_outcome', 'character varying(24)'),
    ('messenger.recording_finalize_attempts', 'quarantine_reason', 'character varying(24)'),
    ('messenger.recording_finalize_attempts', 'opened_by',
        'character varying(16) not null default ''lifecycle''::character varying'),
    ('messenger.recording_finalize_attempts', 'created_at',
        'timestamp with time zone not null default now()'),
    ('messenger.recording_finalize_attempts', 'updated_at',
        'timestamp with time zone not null default now()'),

    ('recording_finalize.settings', 'singleton', 'boolean not null default true'),
    ('recording_finalize.settings', 'topic',
        'text not null default ''pin.messenger.call-recording-available.v1''::text'),
    ('recording_finalize.settings', 'max_attempts_min', 'integer not null default 1'),
    ('recording_finalize.settings', 'max_attempts_max', 'integer not null default 20000'),
    ('recording_finalize.settings', 'sla_timeout_min',
        'interval not null default ''00:00:01''::interval'),
    ('recording_finalize.settings', 'sla_timeout_max',
        'interval not null default ''24:00:00''::interval'),
    ('recording_finalize.settings', 'backoff_base_min',
        'interval not null default ''00:00:00.1''::interval'),
    ('recording_finalize.settings', 'backoff_base_max',
        'interval not null default ''01:00:00''::interval'),
    ('recording_finalize.settings', 'backoff_factor_max',
        'double precision not null default 10'),
    ('recording_finalize.settings', 'backoff_cap_max',
        'interval not null default ''24:00:00''::interval'),
    ('recording_finalize.settings', 'backoff_jitter_max',
        'double precision not null default 0.5'),
    ('recording_finalize.settings', 'upload_grace_min',
        'interval not null default ''00:00:01''::interval'),
    ('recording_finalize.settings', 'upload_grace_max',
        'interval not null default ''24:00:00''::interval'),
    ('recording_finalize.settings', 'relay_lease_max',
        'interval not null default ''00:15:00''::interval'),
    ('recording_finalize.settings', 'relay_batch_max', 'integer not null default 10000'),
    ('recording_finalize.settings', 'retention_min',
        'interval not null default ''1 day''::interval'),
    ('recording_finalize.settings', 'policy_seal_key', 'uuid not null default gen_random_uuid()'),
    ('recording_finalize.settings', 'updated_at',
        'timestamp with time zone not null default now()'),

    ('recording_finalize.storage_incidents', 'id', 'bigint not null identity always'),
    ('recording_finalize.storage_incidents', 'source', 'character varying(64) not null'),
    ('recording_finalize.storage_incidents', 'started_at', 'timestamp with time zone not null'),
    ('recording_finalize.storage_incidents', 'ended_at', 'timestamp with time zone'),
    ('recording_finalize.storage_incidents', 'reason', 'character varying(512)'),
    ('recording_finalize.storage_incidents', 'opened_by', 'text not null default SESSION_USER'),
    ('recording_finalize.storage_incidents', 'closed_by', 'text'),
    ('recording_finalize.storage_incidents', 'created_at',
        'timestamp with time zone not null default now()'),
    ('recording_finalize.storage_incidents', 'updated_at',
        'timestamp with time zone not null default now()'),

    ('recording_finalize.operator_actions', 'id', 'bigint not null identity always'),
    ('recording_finalize.operator_actions', 'recording_id', 'uuid'),
    ('recording_finalize.operator_actions', 'action_kind', 'character varying(16) not null'),
    ('recording_finalize.operator_actions', 'operator_name', 'text not null'),
    ('recording_finalize.operator_actions', 'reason', 'text not null'),
    ('recording_finalize.operator_actions', 'detail', 'jsonb not null default ''{}''::jsonb'),
    ('recording_finalize.operator_actions', 'login_role', 'text not null default SESSION_USER'),
    ('recording_finalize.operator_actions', 'created_at',
        'timestamp with time zone not null default now()'),

    ('recording_finalize.pause', 'part', 'character varying(16) not null'),
    ('recording_finalize.pause', 'paused_at', 'timestamp with time zone not null default now()'),
    ('recording_finalize.pause', 'paused_by', 'text not null'),
    ('recording_finalize.pause', 'reason', 'text not null'),
    ('recording_finalize.pause', 'login_role', 'text not null default SESSION_USER'),

    ('recording_finalize.relay_leases', 'outbox_id', 'bigint not null'),
    ('recording_finalize.relay_leases', 'lease_token', 'uuid not null'),
    ('recording_finalize.relay_leases', 'leased_until', 'timestamp with time zone not null'),
    ('recording_finalize.relay_leases', 'holder_pid', 'integer'),
    ('recording_finalize.relay_leases', 'leased_at',
        'timestamp with time zone not null default now()'),

    ('recording_finalize.discovery_sweep', 'singleton', 'boolean not null default true'),
    ('recording_finalize.discovery_sweep', 'after_session_kind', 'text'),
    ('recording_finalize.discovery_sweep', 'after_session_id', 'uuid'),
    ('recording_finalize.discovery_sweep', 'sweeps', 'bigint not null default 0'),
    ('recording_finalize.discovery_sweep', 'updated_at',
        'timestamp with time zone not null default now()'),
    ('recording_finalize.discovery_sweep', 'republish_after_at', 'timestamp with time zone'),
    ('recording_finalize.discovery_sweep', 'republish_after_id', 'uuid'),

    ('recording_finalize.outbox', 'id', 'bigint not null identity always'),
    ('recording_finalize.outbox', 'recording_id', 'uuid not null'),
    ('recording_finalize.outbox', 'topic', 'text not null'),
    ('recording_finalize.outbox', 'message_key', 'text not null'),
    ('recording_finalize.outbox', 'headers', 'jsonb not null'),
    ('recording_finalize.outbox', 'payload', 'jsonb not null'),
    ('recording_finalize.outbox', 'created_at', 'timestamp with time zone not null default now()'),
    ('recording_finalize.outbox', 'published_at', 'timestamp with time zone'),

    ('recording_finalize_migrations.file_checksums', 'kind', 'character varying(12) not null'),
    ('recording_finalize_migrations.file_checksums', 'file_name', 'text not null'),
    ('recording_finalize_migrations.file_checksums', 'sha256', 'character varying(64) not null'),
    ('recording_finalize_migrations.file_checksums', 'definition_md5', 'character varying(32)'),
    ('recording_finalize_migrations.file_checksums', 'package_version', 'text not null'),
    ('recording_finalize_migrations.file_checksums', 'recorded_at',
        'timestamp with time zone not null default now()'),

    ('recording_finalize_migrations.migrate_state', 'singleton', 'boolean not null default true'),
    ('recording_finalize_migrations.migrate_state', 'schema_version', 'text not null'),
    ('recording_finalize_migrations.migrate_state', 'package_version', 'text not null'),
    ('recording_finalize_migrations.migrate_state', 'migrated_at',
        'timestamp with time zone not null default now()'),
    ('recording_finalize_migrations.migrate_state', 'adapter_sha256', 'character varying(64)'),
    ('recording_finalize_migrations.migrate_state', 'adapter_md5', 'character varying(32)');

-- What the catalog says, in the same form.
create temp table actual as
select c.oid::regclass::text as tbl, a.attname::text as col,
    pg_catalog.format_type(a.atttypid, a.atttypmod)
        || case when a.attnotnull then ' not null' else '' end
        || coalesce(' default ' || pg_catalog.pg_get_expr(d.adbin, d.adrelid), '')
        || case a.attidentity when 'a' then ' identity always' when 'd' then ' identity by default'
            else '' end
        || case when a.attgenerated <> '' then ' generated' else '' end as spec
from pg_catalog.pg_class as c
join pg_catalog.pg_attribute as a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
left join pg_catalog.pg_attrdef as d on d.adrelid = c.oid and d.adnum = a.attnum
where c.oid in (select distinct tbl::regclass from contract);

-- 1: the product's tables, and nothing else, in the schemas it owns (yoyo-migrations keeps
-- its own four beside migrate's bookkeeping, by migrate's choice of schema).
select set_eq(
    $$select c.oid::regclass::text from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where c.relkind in ('r', 'p', 'v', 'm', 'f')
        and (n.nspname in ('recording_finalize', 'recording_finalize_internal',
                'recording_finalize_migrations')
            or c.oid = 'messenger.recording_finalize_attempts'::regclass)$$,
    $$select distinct tbl from contract
    union all values ('recording_finalize_migrations._yoyo_log'),
        ('recording_finalize_migrations._yoyo_migration'),
        ('recording_finalize_migrations._yoyo_version'),
        ('recording_finalize_migrations.yoyo_lock')$$,
    'the product''s schemas hold exactly its tables (and yoyo''s bookkeeping)'
);

-- 9: exactly these columns, one assertion per table (extra, missing or changed columns fail).
select set_eq(
    format('select col, spec from actual where tbl = %L', t.tbl),
    format('select col, spec from contract where tbl = %L', t.tbl),
    format('%s has exactly its columns, types, nullability and defaults', t.tbl)
)
from (select distinct tbl from contract order by tbl) as t;

-- 5: primary keys.
select results_eq(
    $$select c.conrelid::regclass::text, array_agg(a.attname::text collate "default" order by k.ord)
    from pg_catalog.pg_constraint as c
    cross join lateral unnest(c.conkey) with ordinality as k(attnum, ord)
    join pg_catalog.pg_attribute as a on a.attrelid = c.conrelid and a.attnum = k.attnum
    where c.contype = 'p' and c.conrelid in (
        'messenger.recording_finalize_attempts'::regclass,
        'recording_finalize.settings'::regclass, 'recording_finalize.storage_incidents'::regclass,
        'recording_finalize.operator_actions'::regclass, 'recording_finalize.pause'::regclass,
        'recording_finalize.relay_leases'::regclass,
        'recording_finalize.discovery_sweep'::regclass,
        'recording_finalize.outbox'::regclass)
    group by c.conrelid
    order by 1$$,
    $$values ('messenger.recording_finalize_attempts', array['id']),
        ('recording_finalize.discovery_sweep', array['singleton']),
        ('recording_finalize.operator_actions', array['id']),
        ('recording_finalize.outbox', array['id']),
        ('recording_finalize.pause', array['part']),
        ('recording_finalize.relay_leases', array['outbox_id']),
        ('recording_finalize.settings', array['singleton']),
        ('recording_finalize.storage_incidents', array['id'])$$,
    'the product''s API tables have their primary keys'
);
select results_eq(
    $$select c.conname::text collate "default" from pg_catalog.pg_constraint as c
    where c.contype = 'p' and c.conrelid in (
        'recording_finalize_migrations.file_checksums'::regclass,
        'recording_finalize_migrations.migrate_state'::regclass)
    order by 1$$,
    $$values ('file_checksums_pk'), ('migrate_state_pkey')$$,
    'migrate''s bookkeeping tables have their primary keys'
);

-- 1: the product references nothing of the service: no foreign key at all (the recording
-- and outbox ids are logical references, the service's rows are the service's to delete).
select is_empty(
    $$select c.conrelid::regclass::text || ' -> ' || c.confrelid::regclass::text
    from pg_catalog.pg_constraint as c
    join pg_catalog.pg_class as t on t.oid = c.conrelid
    join pg_catalog.pg_namespace as n on n.oid = t.relnamespace
    where c.contype = 'f'
        and (n.nspname like 'recording\_finalize%'
            or c.conrelid = 'messenger.recording_finalize_attempts'::regclass)$$,
    'no foreign key from a product table (none into the service''s tables)'
);

-- 1: the product's tables are the product owner's (the owner of schema recording_finalize).
select is_empty(
    $$select c.oid::regclass::text || ' owned by ' || c.relowner::regrole::text
    from pg_catalog.pg_class as c
    where c.oid in (select distinct tbl::regclass from contract)
        and c.relowner <> (select n.nspowner from pg_catalog.pg_namespace as n
            where n.nspname = 'recording_finalize')$$,
    'every product table is owned by the product''s owner role'
);

-- 1: enumerations are varchar + CHECK, never enum types (nor domains) of the product.
select is_empty(
    $$select t.oid::regtype::text from pg_catalog.pg_type as t
    join pg_catalog.pg_namespace as n on n.oid = t.typnamespace
    where t.typtype in ('e', 'd')
        and n.nspname in ('messenger', 'recording_finalize', 'recording_finalize_internal',
            'recording_finalize_migrations')$$,
    'no enum or domain type: enumerations are varchar with CHECK constraints'
);
-- 1: the binary never lives in the database.
select is_empty(
    $$select a.attrelid::regclass::text || '.' || a.attname from pg_catalog.pg_attribute as a
    join pg_catalog.pg_class as c on c.oid = a.attrelid
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.nspname in ('messenger', 'recording_finalize', 'recording_finalize_migrations')
        and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped
        and a.atttypid in ('bytea'::regtype, 'oid'::regtype)$$,
    'no bytea or large-object column: only file_id and metadata are stored'
);

select * from finish();
rollback;
