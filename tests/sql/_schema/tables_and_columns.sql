-- The data contract of SPEC §2: tables, column types, nullability, keys and defaults.
-- Extra columns are allowed (the spec says so); these must exist with these types.
begin;
select plan(85);

create temp table contract (tbl text, col text, typ text, not_null boolean);
insert into contract values
    ('call_sessions', 'id', 'uuid', true),
    ('call_sessions', 'chat_id', 'uuid', false),
    ('call_sessions', 'deal_id', 'uuid', false),
    ('call_sessions', 'tenant_id', 'uuid', false),
    ('call_sessions', 'started_at', 'timestamp with time zone', true),
    ('call_sessions', 'ended_at', 'timestamp with time zone', false),
    ('conference_sessions', 'id', 'uuid', true),
    ('conference_sessions', 'chat_id', 'uuid', false),
    ('conference_sessions', 'deal_id', 'uuid', false),
    ('conference_sessions', 'tenant_id', 'uuid', false),
    ('conference_sessions', 'started_at', 'timestamp with time zone', true),
    ('conference_sessions', 'ended_at', 'timestamp with time zone', false),
    ('call_recordings', 'id', 'uuid', true),
    ('call_recordings', 'session_kind', 'character varying(12)', true),
    ('call_recordings', 'session_id', 'uuid', true),
    ('call_recordings', 'media_type', 'character varying(8)', true),
    ('call_recordings', 'trigger', 'character varying(16)', true),
    ('call_recordings', 'status', 'character varying(16)', true),
    ('call_recordings', 'file_id', 'text', false),
    ('call_recordings', 'size_bytes', 'bigint', false),
    ('call_recordings', 'duration_seconds', 'integer', false),
    ('call_recordings', 'format', 'character varying(8)', false),
    ('call_recordings', 'failure_reason', 'character varying(24)', false),
    ('call_recordings', 'started_at', 'timestamp with time zone', false),
    ('call_recordings', 'ended_at', 'timestamp with time zone', false),
    ('call_recordings', 'available_at', 'timestamp with time zone', false),
    ('call_recordings', 'failed_at', 'timestamp with time zone', false),
    ('call_recordings', 'version', 'integer', true),
    ('call_recordings', 'created_at', 'timestamp with time zone', true),
    ('call_recordings', 'updated_at', 'timestamp with time zone', true),
    ('recording_finalize_attempts', 'id', 'uuid', true),
    ('recording_finalize_attempts', 'recording_id', 'uuid', true),
    ('recording_finalize_attempts', 'session_kind', 'character varying(12)', true),
    ('recording_finalize_attempts', 'session_id', 'uuid', true),
    ('recording_finalize_attempts', 'status', 'character varying(16)', true),
    ('recording_finalize_attempts', 'attempts', 'integer', true),
    ('recording_finalize_attempts', 'next_attempt_at', 'timestamp with time zone', true),
    ('recording_finalize_attempts', 'last_error', 'character varying(512)', false),
    ('recording_finalize_attempts', 'created_at', 'timestamp with time zone', true),
    ('recording_finalize_attempts', 'updated_at', 'timestamp with time zone', true),
    ('integration_outbox', 'id', 'bigint', true),
    ('integration_outbox', 'topic', 'text', true),
    ('integration_outbox', 'message_key', 'text', true),
    ('integration_outbox', 'event_type', 'text', true),
    ('integration_outbox', 'dedupe_key', 'text', true),
    ('integration_outbox', 'payload', 'jsonb', true),
    ('integration_outbox', 'headers', 'jsonb', true),
    ('integration_outbox', 'created_at', 'timestamp with time zone', true),
    ('integration_outbox', 'published_at', 'timestamp with time zone', false),
    ('realtime_outbox', 'id', 'bigint', true),
    ('realtime_outbox', 'kind', 'character varying(32)', true),
    ('realtime_outbox', 'session_kind', 'character varying(12)', true),
    ('realtime_outbox', 'session_id', 'uuid', true),
    ('realtime_outbox', 'reference_id', 'uuid', true),
    ('realtime_outbox', 'payload', 'jsonb', true),
    ('realtime_outbox', 'created_at', 'timestamp with time zone', true),
    ('realtime_outbox', 'dispatched_at', 'timestamp with time zone', false);

-- 6 tables
select has_table('messenger', t, format('table messenger.%s exists', t))
from unnest(array[
    'call_sessions', 'conference_sessions', 'call_recordings', 'recording_finalize_attempts',
    'integration_outbox', 'realtime_outbox'
]) as t;

-- 57 columns: type and nullability in one assertion each
select is(
    (select format_type(a.atttypid, a.atttypmod) || case when a.attnotnull then ' not null' else ''
        end
    from pg_catalog.pg_attribute as a
    where a.attrelid = ('messenger.' || c.tbl)::regclass and a.attname = c.col
        and not a.attisdropped),
    c.typ || case when c.not_null then ' not null' else '' end,
    format('messenger.%s.%s is %s%s', c.tbl, c.col, c.typ,
        case when c.not_null then ' not null' else ' null' end)
)
from contract as c
order by c.tbl, c.col;

-- 6 primary keys
select col_is_pk('messenger', t, 'id', format('messenger.%s has primary key id', t))
from unnest(array[
    'call_sessions', 'conference_sessions', 'call_recordings', 'recording_finalize_attempts',
    'integration_outbox', 'realtime_outbox'
]) as t;

-- 2 identity columns
select is(
    (select attidentity from pg_catalog.pg_attribute
        where attrelid = ('messenger.' || t)::regclass and attname = 'id'),
    'a'::"char",
    format('messenger.%s.id is generated always as identity', t)
)
from unnest(array['integration_outbox', 'realtime_outbox']) as t;

-- 12 defaults
select col_default_is('messenger', 'call_recordings', 'version', '1', 'version defaults to 1');
select col_default_is(
    'messenger', 'call_recordings', 'created_at', 'now()', 'call_recordings.created_at = now()'
);
select col_default_is(
    'messenger', 'call_recordings', 'updated_at', 'now()', 'call_recordings.updated_at = now()'
);
select col_default_is(
    'messenger', 'recording_finalize_attempts', 'id', 'gen_random_uuid()',
    'finalize row id defaults to gen_random_uuid()'
);
select col_default_is(
    'messenger', 'recording_finalize_attempts', 'status', 'Pending',
    'finalize status defaults to Pending'
);
select col_default_is(
    'messenger', 'recording_finalize_attempts', 'attempts', '0', 'attempts defaults to 0'
);
select col_default_is(
    'messenger', 'recording_finalize_attempts', 'created_at', 'now()',
    'recording_finalize_attempts.created_at = now() (the SLO-lag base)'
);
select col_default_is(
    'messenger', 'recording_finalize_attempts', 'updated_at', 'now()',
    'recording_finalize_attempts.updated_at = now()'
);
select col_default_is(
    'messenger', 'integration_outbox', 'headers', '{}'::jsonb, 'headers default to {}'
);
select col_default_is(
    'messenger', 'integration_outbox', 'created_at', 'now()', 'integration_outbox.created_at'
);
select col_default_is(
    'messenger', 'realtime_outbox', 'payload', '{}'::jsonb, 'realtime payload defaults to {}'
);
select col_default_is(
    'messenger', 'realtime_outbox', 'created_at', 'now()', 'realtime_outbox.created_at'
);

-- 1: enumerations are varchar + CHECK, never enum types
select is_empty(
    $$select t.typname from pg_catalog.pg_type as t
    join pg_catalog.pg_namespace as n on n.oid = t.typnamespace
    where t.typtype = 'e' and n.nspname in ('messenger', 'recording_finalize')$$,
    'no PostgreSQL enum type: enumerations are varchar with CHECK constraints'
);
-- 1: the binary never lives in the database
select is_empty(
    $$select a.attrelid::regclass, a.attname from pg_catalog.pg_attribute as a
    join pg_catalog.pg_class as c on c.oid = a.attrelid
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.nspname = 'messenger' and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped
        and a.atttypid in ('bytea'::regtype, 'oid'::regtype)$$,
    'no bytea or large-object column: only file_id and metadata are stored'
);

select * from finish();
rollback;
