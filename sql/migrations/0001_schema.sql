-- The messenger tables the safety net works on, its reliability table and both outboxes.
-- Forward-only: never edit this file once it has landed; add a new migration instead.

set local lock_timeout = '5s';
set local statement_timeout = '5min';

create schema if not exists messenger;
create schema if not exists recording_finalize;

comment on schema recording_finalize is
'The recording-finalize-retry safety net: its functions are the public interface, '
'the messenger tables stay private.';

-- Session owners: only the columns the safety net needs.
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

-- The domain aggregate CallRecordingEntity. The binary never lives here: file_id + metadata only.
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
    constraint call_recordings_session_kind_ck check (session_kind in ('Direct', 'Conference')),
    constraint call_recordings_media_type_ck check (media_type in ('Audio', 'Video')),
    constraint call_recordings_trigger_ck check (trigger in ('Manual', 'Auto')),
    constraint call_recordings_status_ck check (
        status in ('Pending', 'Recording', 'Uploading', 'Available', 'Failed')
    ),
    constraint call_recordings_format_ck check (format in ('Webm', 'Mp4', 'Ogg', 'M4a')),
    constraint call_recordings_failure_reason_ck check (
        failure_reason in ('Timeout', 'RecorderError', 'UploadFailed')
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

-- INV: at most one non-terminal recording per session (name fixed by the design card).
create unique index ix_recording_active
on messenger.call_recordings (session_kind, session_id)
where status in ('Pending', 'Recording', 'Uploading');

-- The reliability table of the safety net: retry schedule and quarantine, one row per recording.
create table messenger.recording_finalize_attempts (
    id uuid primary key default gen_random_uuid(),
    recording_id uuid not null,
    session_kind varchar(12) not null,
    session_id uuid not null,
    status varchar(16) not null default 'Pending',
    attempts integer not null default 0,
    next_attempt_at timestamptz not null,
    last_error varchar(512) null,
    -- Set by claim_due for a row handed to the driver; apply_outcome must present it back.
    claim_token uuid null,
    claimed_at timestamptz null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint recording_finalize_attempts_session_kind_ck check (
        session_kind in ('Direct', 'Conference')
    ),
    constraint recording_finalize_attempts_status_ck check (
        status in ('Pending', 'Done', 'Quarantined')
    ),
    constraint recording_finalize_attempts_attempts_ck check (attempts >= 0)
);

-- Finalization happens once per recording (name fixed by the design card).
create unique index ux_rfa_recording on messenger.recording_finalize_attempts (recording_id);

-- The claim scans Pending rows in next_attempt_at order; Done rows sit under another prefix.
create index ix_rfa_due on messenger.recording_finalize_attempts (status, next_attempt_at);

-- Transactional outbox shared by the messenger service.
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
    -- A relay that claimed the row owns it until then; an expired lease is claimable again.
    relay_lease_until timestamptz null,
    -- Enqueueing the same event twice is a no-op.
    constraint integration_outbox_topic_dedupe_uq unique (topic, dedupe_key)
);

-- Keeps the relay's scan proportional to the unpublished rows, not to the whole history.
create index integration_outbox_unpublished_idx
on messenger.integration_outbox (topic, id)
where published_at is null;

-- Persist-then-push rows for the realtime-dispatch worker.
create table messenger.realtime_outbox (
    id bigint generated always as identity primary key,
    kind varchar(32) not null,
    session_kind varchar(12) not null,
    session_id uuid not null,
    reference_id uuid not null,
    payload jsonb not null default '{}',
    created_at timestamptz not null default now(),
    dispatched_at timestamptz null,
    constraint realtime_outbox_kind_ck check (kind in ('RecordingAvailable', 'RecordingFailed')),
    constraint realtime_outbox_session_kind_ck check (session_kind in ('Direct', 'Conference'))
);

-- A recording reaches Available or Failed once, so its state push is written once.
create unique index realtime_outbox_recording_state_uq
on messenger.realtime_outbox (reference_id, kind)
where kind in ('RecordingAvailable', 'RecordingFailed');

create index realtime_outbox_undispatched_idx
on messenger.realtime_outbox (id)
where dispatched_at is null;
