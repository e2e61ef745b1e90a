-- The messenger service's tables that recording-finalize-retry works on: the reference DDL of
-- the contract. The service owns these tables; this file is NOT a migration.
--
-- `recording-finalize migrate --create-service-tables` applies it to a new database (the demo,
-- the tests, a greenfield messenger): each "-- table:" block below runs only when its table is
-- missing, so an existing table is never altered. `recording-finalize service-sql schema`
-- prints it for the service's DBA. What the product needs of these tables (columns, types,
-- unique keys, privileges) is checked by migrate before it writes anything: see
-- driver/contract.py and sql/README.md.

-- table: messenger.call_sessions
-- A call (session_kind Direct): the owner of its recordings. ended_at set = the call ended.
create table messenger.call_sessions (
    id uuid primary key,
    chat_id uuid null,
    deal_id uuid null,
    tenant_id uuid null,
    started_at timestamptz not null,
    ended_at timestamptz null,
    -- A session cannot end before it starts.
    constraint call_sessions_ended_after_start_ck check (ended_at is null or ended_at >= started_at)
);

-- table: messenger.conference_sessions
-- A conference (session_kind Conference): same shape and rules as call_sessions.
create table messenger.conference_sessions (
    id uuid primary key,
    chat_id uuid null,
    deal_id uuid null,
    tenant_id uuid null,
    started_at timestamptz not null,
    ended_at timestamptz null,
    -- A session cannot end before it starts.
    constraint conference_sessions_ended_after_start_ck check (
        ended_at is null or ended_at >= started_at
    )
);

-- table: messenger.call_recordings
-- The domain aggregate CallRecordingEntity. The binary never lives here: file_id + metadata.
-- Enumerations are varchar with CHECKs written `col::text = any('{...}'::text[])`: PostgreSQL
-- stores that form as one constant (the IN form is an array cast element by element, re-planned
-- for every INSERT or UPDATE statement).
create table messenger.call_recordings (
    id uuid primary key,
    session_kind varchar(12) not null,
    session_id uuid not null,
    media_type varchar(8) not null,
    trigger varchar(16) not null,
    status varchar(16) not null,
    file_id text null,
    size_bytes bigint null,
    duration_seconds integer null,
    format varchar(8) null,
    failure_reason varchar(24) null,
    started_at timestamptz null,
    ended_at timestamptz null,
    available_at timestamptz null,
    failed_at timestamptz null,
    version integer not null default 1,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint call_recordings_session_kind_ck check (
        session_kind::text = any('{Direct,Conference}'::text[])
    ),
    constraint call_recordings_media_type_ck check (
        media_type::text = any('{Audio,Video}'::text[])
    ),
    constraint call_recordings_trigger_ck check (trigger::text = any('{Manual,Auto}'::text[])),
    constraint call_recordings_status_ck check (
        status::text = any('{Pending,Recording,Uploading,Available,Failed}'::text[])
    ),
    constraint call_recordings_format_ck check (format::text = any('{Webm,Mp4,Ogg,M4a}'::text[])),
    constraint call_recordings_failure_reason_ck check (
        failure_reason::text = any('{Timeout,RecorderError,UploadFailed}'::text[])
    ),
    constraint call_recordings_size_bytes_ck check (size_bytes >= 0),
    constraint call_recordings_duration_seconds_ck check (duration_seconds >= 0),
    constraint call_recordings_version_ck check (version >= 1),
    -- INV-REC-6: file_id is a stable storage reference, never a URL (no scheme://).
    constraint call_recordings_file_id_not_url_ck check (
        file_id is null or (file_id <> '' and file_id !~ '^[A-Za-z][A-Za-z0-9+.-]*://')
    ),
    -- Available carries everything a consumer needs to fetch and show the recording.
    constraint call_recordings_available_complete_ck check (
        status <> 'Available'
        or (
            file_id is not null and size_bytes is not null and duration_seconds is not null
            and format is not null and available_at is not null
        )
    ),
    -- Failed says why and when.
    constraint call_recordings_failed_complete_ck check (
        status <> 'Failed' or (failure_reason is not null and failed_at is not null)
    )
);

-- INV: at most one non-terminal recording per session (the name is part of the contract: migrate
-- checks it).
create unique index ix_recording_active
on messenger.call_recordings (session_kind, session_id)
where status::text = any('{Pending,Recording,Uploading}'::text[]);

-- When recordings became Available: the republish discovery reads a window of them.
create index call_recordings_available_at_idx
on messenger.call_recordings (available_at, id)
where status::text = 'Available';

-- table: messenger.integration_outbox
-- Transactional outbox shared by the messenger service: one row per integration event.
create table messenger.integration_outbox (
    id bigint generated always as identity primary key,
    topic text not null,
    message_key text not null,
    event_type text not null,
    dedupe_key text not null,
    payload jsonb not null,
    headers jsonb not null default '{}',
    created_at timestamptz not null default now(),
    published_at timestamptz null,
    -- Enqueueing the same event twice is a no-op.
    constraint integration_outbox_topic_dedupe_uq unique (topic, dedupe_key)
);

-- table: messenger.realtime_outbox
-- Persist-then-push rows for the realtime-dispatch worker (no URLs, no secrets).
create table messenger.realtime_outbox (
    id bigint generated always as identity primary key,
    kind varchar(32) not null,
    session_kind varchar(12) not null,
    session_id uuid not null,
    reference_id uuid not null,
    payload jsonb not null default '{}',
    created_at timestamptz not null default now(),
    dispatched_at timestamptz null,
    constraint realtime_outbox_kind_ck check (
        kind::text = any('{RecordingAvailable,RecordingFailed}'::text[])
    ),
    constraint realtime_outbox_session_kind_ck check (
        session_kind::text = any('{Direct,Conference}'::text[])
    )
);
