-- GRANTs for the product's owner role {{ role }}, to be run by the owner of schema messenger
-- and its tables: each statement touches only the service's own objects. The product's functions
-- run as {{ role }} (SECURITY DEFINER): these are the rows they read and write, column by
-- column; the worker's, operators' and service's logins get none of them.

-- First the database and schema messenger, before anything else: a DBA's adapter is created as
-- the product's owner, who needs them. CONNECT on the database and USAGE on the schema for good;
-- CREATE on both only to install (see the end): on the database for the product's schemas
-- (recording_finalize, recording_finalize_internal, recording_finalize_migrations,
-- recording_finalize_adapter), on schema messenger for messenger.recording_finalize_attempts, the
-- product's one table here. Only the database's owner (or a superuser) can grant the database's;
-- anyone else is told who must.
do $$
begin
    if pg_catalog.pg_has_role(current_user, (select d.datdba from pg_catalog.pg_database
        as d where d.datname = pg_catalog.current_database()), 'USAGE') then
        execute pg_catalog.format('grant {{ database_privileges }} on database %I to %I',
            pg_catalog.current_database(), {{ role_literal }});
    else
        raise notice 'the owner of database % must run: grant {{ database_privileges }} on '
            'database % to {{ role_in_literal }}', pg_catalog.current_database(),
            pg_catalog.current_database();
    end if;
end
$$;
{{ create_schema }}
-- Reach the tables.
grant {{ schema_privileges }} on schema messenger to {{ role }};

-- messenger.call_sessions: a Direct recording's session (the adapter's sessions view): its end
-- starts the SLA.
grant select (id, chat_id, deal_id, tenant_id, started_at, ended_at)
on messenger.call_sessions to {{ role }};

-- messenger.conference_sessions: a Conference recording's session, as call_sessions.
grant select (id, chat_id, deal_id, tenant_id, started_at, ended_at)
on messenger.conference_sessions to {{ role }};

-- messenger.call_recordings: the recording (the adapter's recordings view): make_available and
-- make_failed move a stuck one to Available or Failed under a status guard.
grant select (
    id, session_kind, session_id, media_type, trigger, status, file_id, size_bytes,
    duration_seconds, format, failure_reason, started_at, ended_at, available_at, version
)
on messenger.call_recordings to {{ role }};
grant update (
    status, file_id, size_bytes, duration_seconds, format, failure_reason, started_at,
    ended_at, available_at, failed_at, version, updated_at
)
on messenger.call_recordings to {{ role }};

-- messenger.integration_outbox: only read (the adapter's service_events view): a recording whose
-- event the service enqueued itself gets none from the product; the product never writes, marks
-- or deletes a row here (its events are in recording_finalize.outbox).
grant select (topic, dedupe_key, created_at, published_at)
on messenger.integration_outbox to {{ role }};

-- messenger.realtime_outbox: the RecordingAvailable / RecordingFailed pushes, written with the
-- transition (the adapter's enqueue_realtime).
grant insert (kind, session_kind, session_id, reference_id, payload)
on messenger.realtime_outbox to {{ role }};
{{ lifecycle }}
-- The sequences behind the defaults of the columns the product's INSERTs leave to the table (a
-- serial or bigserial key): USAGE, so that their nextval() works. An identity column needs none,
-- and then this grants nothing.
do $$
declare
    v_sequence text;
begin
    for v_sequence in
        select distinct s.oid::pg_catalog.regclass::text
        from pg_catalog.pg_attrdef as d
        join pg_catalog.pg_attribute as a
            on a.attrelid = d.adrelid and a.attnum = d.adnum
        join pg_catalog.pg_depend as p
            on p.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass
            and p.objid = d.oid
            and p.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
        join pg_catalog.pg_class as s on s.oid = p.refobjid and s.relkind = 'S'
        where (d.adrelid = pg_catalog.to_regclass('messenger.realtime_outbox')
            and a.attname <> all (array['kind', 'session_kind', 'session_id', 'reference_id',
                'payload']::name[]))
    loop
        execute pg_catalog.format('grant usage on sequence %s to %I', v_sequence,
            {{ role_literal }});
        raise notice 'granted usage on sequence % to {{ role_in_literal }}', v_sequence;
    end loop;
end
$$;

{{ create_afterwards }}
