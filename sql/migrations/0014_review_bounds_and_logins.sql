-- DBA review fixes: the server-side bounds the worker and operator cannot pass around (prune
-- retention, marker retention, upload grace, lowest max attempts) and the real login in the
-- operator audit trail and the pause switch.
-- Forward-only: never edit this file once it has landed; add a new migration instead.
--
-- Every statement is catalog-only on a large database: ADD COLUMN with a constant or stable
-- default (PostgreSQL >= 11 stores it, no rewrite), CHECKs on the one-row settings table.

set local lock_timeout = '5s';
set local statement_timeout = '5min';

alter table recording_finalize.settings
add column retention_min interval not null default '1 day',
add column marker_retention interval not null default '90 days',
add column upload_grace_min interval not null default '1 second',
add column upload_grace_max interval not null default '24 hours',
add column max_attempts_min integer not null default 1;

-- The settings table has one row: validating these CHECKs scans one row.
alter table recording_finalize.settings
-- squawk-ignore constraint-missing-not-valid
add constraint settings_retention_min_ck check (retention_min >= interval '1 minute'),
-- squawk-ignore constraint-missing-not-valid
add constraint settings_marker_retention_ck check (marker_retention >= interval '1 day'),
-- squawk-ignore constraint-missing-not-valid
add constraint settings_upload_grace_ck check (
    upload_grace_min > interval '0' and upload_grace_max >= upload_grace_min
),
-- squawk-ignore constraint-missing-not-valid
add constraint settings_max_attempts_min_ck check (
    max_attempts_min >= 1 and max_attempts_min <= max_attempts_max
);

comment on column recording_finalize.settings.retention_min is
'Smallest prune p_older_than (RFR_RETENTION, prune --older-than) accepted (RF010): no worker or '
'operator login can prune fresher history than this. At least 1 minute.';
comment on column recording_finalize.settings.marker_retention is
'How long a prune marker (messenger.integration_outbox_pruned) is kept: prune deletes markers '
'pruned longer ago than this, a bound far beyond any plausible duplicate ingest callback.';
comment on column recording_finalize.settings.upload_grace_min is
'Smallest apply_outcome p_upload_grace (RFR_UPLOAD_GRACE, by default the SLA) accepted (RF010). '
'Default 1 second, the smallest SLA (sla_timeout_min), since an unset RFR_UPLOAD_GRACE is the SLA.';
comment on column recording_finalize.settings.upload_grace_max is
'Largest apply_outcome p_upload_grace accepted (RF010); also the longest deferral of a 404 '
'during a storage incident (defer_until is capped at now() + upload_grace_max).';
comment on column recording_finalize.settings.max_attempts_min is
'Smallest p_max_attempts (RFR_MAX_ATTEMPTS) accepted (RF010). Default 1 because the test '
'suites run the worker with 2 and the pgTAP tests with 1; production should raise it (e.g. 3).';

-- The login that really ran the call (session_user; a column default is evaluated in the
-- caller's session even inside SECURITY DEFINER). operator_name stays a display name.
-- session_user is STABLE, not volatile: PostgreSQL >= 11 stores the default evaluated once for
-- the existing rows (catalog-only, no rewrite); new rows get the inserting session's login.
alter table messenger.recording_finalize_operator_actions
-- squawk-ignore adding-field-with-default
add column login_role text not null default session_user;

alter table messenger.recording_finalize_pause
-- squawk-ignore adding-field-with-default
add column login_role text not null default session_user;

comment on column messenger.recording_finalize_operator_actions.login_role is
'The login role (session_user) that ran the operator action; operator_name is only the name '
'the caller gave. Rows from before migration 0014 carry the migrating role.';
comment on column messenger.recording_finalize_pause.login_role is
'The login role (session_user) that paused this part last; paused_by is the name it gave.';
