-- File-storage incidents: periods in which a 404 from S3 may only mean "not uploaded yet".
-- Forward-only: never edit this file once it has landed; add a new migration instead.
--
-- Also drops the ten-parameter apply_outcome: its new signature ends with p_upload_grace
-- (CREATE OR REPLACE cannot add a parameter); sql/functions re-creates it right after.

set local lock_timeout = '5s';
set local statement_timeout = '5min';

-- Operators and other services (the recorder) record incidents the worker could not see.
-- A cluster-wide role, created only when missing (migration 0004 may have created it).
do $$
begin
    if not exists (select from pg_catalog.pg_roles where rolname = 'recording_finalize_operator')
        then
        create role recording_finalize_operator nologin;
    end if;
end
$$;

grant usage on schema recording_finalize to recording_finalize_operator;

create table messenger.storage_incidents (
    id bigint generated always as identity primary key,
    source varchar(64) not null,
    started_at timestamptz not null default now(),
    ended_at timestamptz null,
    reason varchar(512) null,
    opened_by text not null default session_user,
    closed_by text null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    -- A source is a short lowercase name (worker, recorder, ops...), never free text.
    constraint storage_incidents_source_ck check (source ~ '^[a-z][a-z0-9_.-]{0,63}$'),
    -- An incident cannot end before it starts.
    constraint storage_incidents_ended_after_start_ck check (
        ended_at is null or ended_at >= started_at
    ),
    -- closed_by is set exactly when the incident is closed.
    constraint storage_incidents_closed_by_ck check ((ended_at is null) = (closed_by is null)),
    -- The reason is an error class or a sentence, never a URL (no scheme://).
    constraint storage_incidents_reason_not_url_ck check (
        reason is null or reason !~ '[A-Za-z][A-Za-z0-9+.-]*://'
    )
);

-- At most one open incident per source: opening again is idempotent (returns the open one).
create unique index storage_incidents_one_open_uq
on messenger.storage_incidents (source)
where ended_at is null;

-- The rule (recording_finalize.upload_deferral) reads open and recently ended incidents.
create index storage_incidents_ended_at_idx on messenger.storage_incidents (ended_at);

revoke all on messenger.storage_incidents from public;

comment on table messenger.storage_incidents is
'File-storage incidents (operational, not domain): while one is open, and for the upload grace '
'after it ended, a 404 does not fail a recording whose upload window overlapped it (see '
'recording_finalize.upload_deferral). Written only through recording_finalize.'
'storage_incident_open/close; at most one open incident per source.';
comment on column messenger.storage_incidents.source is
'Who saw the incident: worker (opened and closed by the worker itself), or a name an operator or '
'another service chooses (recorder, ops...). ^[a-z][a-z0-9_.-]{0,63}$.';
comment on column messenger.storage_incidents.started_at is
'When the storage stopped working, as far as the source knows (database clock; may be '
'back-dated).';
comment on column messenger.storage_incidents.ended_at is
'When the storage worked again; NULL while the incident is open.';
comment on column messenger.storage_incidents.reason is
'Why it was opened: an error class and code, or an operator''s sentence; never a URL.';
comment on column messenger.storage_incidents.opened_by is
'The login role (session_user) that opened the incident.';
comment on column messenger.storage_incidents.closed_by is
'The login role (session_user) that closed it; NULL while open.';

-- The old signature of apply_outcome (ten parameters); the function file re-creates it with
-- p_upload_grace as the eleventh. A driver that calls it by name without p_upload_grace keeps
-- working against the new one (the new parameter has a default).
-- squawk-ignore ban-drop-function
drop function if exists recording_finalize.apply_outcome(
    uuid, uuid, text, text, bigint, integer, text, text, integer, text
);
