-- The reference adapter: the product's six ports onto the reference schema of the service
-- (sql/service/schema.sql; docs/contract/tables.md). The product reads and writes the service's
-- data only through these objects of schema recording_finalize_adapter (docs/contract/adapter.md).
--
-- For a service schema that differs, this file is a starting point: copy it, map each port onto
-- your tables (leave out what the product must not see, e.g. soft-deleted rows), keep every
-- port's name, columns, argument list and meaning, and create it as the product's owner role
-- before the first `recording-finalize migrate` (migrate then keeps it and checks it), or
-- replace these objects later. `recording-finalize service-sql grants --to ROLE` then prints the
-- privileges your adapter needs. `migrate` installs this file when the schema holds no adapter,
-- upgrades it while it is still exactly the reference adapter of an earlier release, and never
-- overwrites one you edited.
--
-- Rules for every port:
-- - Views: the product reads them and locks a recording through `recordings` (FOR NO KEY UPDATE
--   SKIP LOCKED on the view locks the row of its table), so `recordings` must stay a simple view
--   of one table (no DISTINCT, GROUP BY, UNION, window function or aggregate). A recording that
--   leaves the view is never transitioned or published.
-- - Functions run inside the product's per-row transaction as the product's owner role
--   (SECURITY INVOKER): the transition, the finalize row, the realtime row and the event commit
--   or roll back together. They must not commit, wait long, or swallow an error. PL/pgSQL keeps
--   each statement's plan for the session; a SQL-language function that is not inlined (one
--   that writes) is planned again on every call (bench/ports.py: about twice the CPU).
-- - Every write the product's owner makes must be allowed: privileges, NOT NULL columns without
--   a default, CHECKs, and the writes of the table's own triggers. `migrate`, the sidecar's
--   start and /readyz check them and rehearse the writes in a transaction that is always rolled
--   back (docs: sql/README.md, "The adapter").

-- recordings: every recording the product may see, one row each.
create or replace view recording_finalize_adapter.recordings as
select
    r.id,
    r.session_kind::text as session_kind,
    r.session_id,
    r.status::text as status,
    r.file_id::text as file_id,
    r.size_bytes,
    r.duration_seconds,
    r.format::text as format,
    r.failure_reason::text as failure_reason,
    r.media_type::text as media_type,
    r.trigger::text as trigger,
    r.started_at,
    r.ended_at,
    r.available_at
from messenger.call_recordings as r;

-- sessions: the owners of the recordings; kind Direct or Conference.
create or replace view recording_finalize_adapter.sessions as
select
    'Direct'::text as kind,
    s.id,
    s.chat_id,
    s.deal_id,
    s.tenant_id,
    s.started_at,
    s.ended_at
from messenger.call_sessions as s
union all
select
    'Conference'::text as kind,
    s.id,
    s.chat_id,
    s.deal_id,
    s.tenant_id,
    s.started_at,
    s.ended_at
from messenger.conference_sessions as s;

-- service_events: the service's own call-recording-available events, in any state (its outbox
-- rows of the server's topic, under dedupe key = RecordingId). The product adds no event for a
-- recording listed here. The join keeps a lookup by recording_id on the outbox's
-- (topic, dedupe_key) key.
create or replace view recording_finalize_adapter.service_events as
select
    r.id as recording_id,
    o.created_at as enqueued_at,
    o.published_at
from messenger.call_recordings as r
inner join messenger.integration_outbox as o
    on
        o.topic = (select s.topic from recording_finalize.settings as s)
        and o.dedupe_key = r.id::text;

-- make_available: the status-guarded transition to Available with the adopted file metadata.
-- From Pending/Recording the service's own lifecycle passes Uploading on the way to Available,
-- so the version moves by two; a missing ended_at is the time it became Available, a missing
-- started_at is derived from the duration. False when the recording is no longer in
-- p_from_status (or is not visible).
create or replace function recording_finalize_adapter.make_available(
    p_id uuid,
    p_from_status text,
    p_file_id text,
    p_size_bytes bigint,
    p_duration_seconds integer,
    p_format text,
    p_available_at timestamptz
)
returns boolean
language plpgsql
volatile
security invoker
set search_path = pg_catalog, pg_temp
as $$
begin
    update messenger.call_recordings as r
    set status = 'Available',
        file_id = p_file_id,
        size_bytes = p_size_bytes,
        duration_seconds = p_duration_seconds,
        format = p_format,
        ended_at = coalesce(r.ended_at, p_available_at),
        started_at = coalesce(
            r.started_at,
            coalesce(r.ended_at, p_available_at) - make_interval(secs => p_duration_seconds)
        ),
        available_at = p_available_at,
        version = r.version + case when r.status = 'Uploading' then 1 else 2 end,
        updated_at = now()
    where r.id = p_id
        and r.status = p_from_status
        and r.status::text = any('{Pending,Recording,Uploading}'::text[]);
    return found;
end
$$;

-- make_failed: the same guard, to Failed with a reason.
create or replace function recording_finalize_adapter.make_failed(
    p_id uuid,
    p_from_status text,
    p_failure_reason text,
    p_failed_at timestamptz
)
returns boolean
language plpgsql
volatile
security invoker
set search_path = pg_catalog, pg_temp
as $$
begin
    update messenger.call_recordings as r
    set status = 'Failed',
        failure_reason = p_failure_reason,
        failed_at = p_failed_at,
        ended_at = coalesce(r.ended_at, p_failed_at),
        version = r.version + 1,
        updated_at = now()
    where r.id = p_id
        and r.status = p_from_status
        and r.status::text = any('{Pending,Recording,Uploading}'::text[]);
    return found;
end
$$;

-- enqueue_realtime: the service's persist-then-push row for the realtime-dispatch worker.
create or replace function recording_finalize_adapter.enqueue_realtime(
    p_kind text,
    p_session_kind text,
    p_session_id uuid,
    p_reference_id uuid,
    p_payload jsonb
)
returns void
language plpgsql
volatile
security invoker
set search_path = pg_catalog, pg_temp
as $$
begin
    insert into messenger.realtime_outbox (kind, session_kind, session_id, reference_id, payload)
    values (p_kind, p_session_kind, p_session_id, p_reference_id, p_payload);
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Optional: the lifecycle ports. Only the service-facing lifecycle functions call them
-- (recording_started, recording_stopped, session_ended: for a service that prefers to report
-- its recordings' lifecycle to the product rather than let the worker discover them). The
-- worker needs none of them; an adapter may leave them out (those functions then fail when
-- called), and `service-sql grants --lifecycle` asks for their privileges.

-- start_recording: a new recording, Recording since p_started_at. A unique violation is raised
-- as it is (the caller tells a repeated start from a conflict by what is there).
create or replace function recording_finalize_adapter.start_recording(
    p_id uuid,
    p_session_kind text,
    p_session_id uuid,
    p_media_type text,
    p_trigger text,
    p_started_at timestamptz
)
returns void
language plpgsql
volatile
security invoker
set search_path = pg_catalog, pg_temp
as $$
begin
    insert into messenger.call_recordings (
        id, session_kind, session_id, media_type, trigger, status, started_at
    )
    values (p_id, p_session_kind, p_session_id, p_media_type, p_trigger, 'Recording',
        p_started_at);
end
$$;

-- hold_session: the session FOR SHARE, so that a concurrent end of it waits for the caller.
create or replace function recording_finalize_adapter.hold_session(p_kind text, p_id uuid)
returns void
language plpgsql
volatile
security invoker
set search_path = pg_catalog, pg_temp
as $$
begin
    if p_kind = 'Direct' then
        perform from messenger.call_sessions as s where s.id = p_id for share;
    elsif p_kind = 'Conference' then
        perform from messenger.conference_sessions as s where s.id = p_id for share;
    end if;
end
$$;

-- end_session: the session ends at p_at unless it ended already; its end, or NULL when there is
-- no such session.
create or replace function recording_finalize_adapter.end_session(
    p_kind text,
    p_id uuid,
    p_at timestamptz
)
returns timestamptz
language plpgsql
volatile
security invoker
set search_path = pg_catalog, pg_temp
as $$
declare
    v_ended_at timestamptz;
begin
    if p_kind = 'Direct' then
        update messenger.call_sessions as s
        set ended_at = coalesce(s.ended_at, p_at)
        where s.id = p_id
        returning s.ended_at into v_ended_at;
    elsif p_kind = 'Conference' then
        update messenger.conference_sessions as s
        set ended_at = coalesce(s.ended_at, p_at)
        where s.id = p_id
        returning s.ended_at into v_ended_at;
    end if;
    return v_ended_at;
end
$$;

-- make_uploading: the status-guarded move to Uploading when the recording stopped (its end is
-- p_ended_at unless it has one); false when it is no longer in p_from_status.
create or replace function recording_finalize_adapter.make_uploading(
    p_id uuid,
    p_from_status text,
    p_ended_at timestamptz
)
returns boolean
language plpgsql
volatile
security invoker
set search_path = pg_catalog, pg_temp
as $$
begin
    update messenger.call_recordings as r
    set status = 'Uploading',
        ended_at = coalesce(r.ended_at, p_ended_at),
        version = r.version + 1,
        updated_at = now()
    where r.id = p_id
        and r.status = p_from_status
        and r.status::text = any('{Pending,Recording}'::text[]);
    return found;
end
$$;
