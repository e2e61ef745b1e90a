-- The verdict's state machine, stated once: what a file-storage verdict does to a claimed row,
-- and with it whether a 404 is believed.
--
-- The facts it decides on, all reported, none judged, by the caller:
-- - p_outcome: what the storage answered for the recording's key (found, missing = a 404,
--   transient, invalid_metadata, config_error);
-- - p_metadata_problem: metadata_problem's word on a found object's metadata;
-- - p_bucket_confirmed: whether the HeadBucket of the cycle the verdict belongs to answered
--   (true / false), or NULL when the cycle has already acted on it (apply_outcome: the worker
--   closed or opened its own incident before it claimed, so the incidents are as recorded);
-- - recording_finalize.storage_incidents: who saw the storage out, and when.
--
-- The worker's own incidents (source worker) are of two kinds, told apart by their reason: one
-- opened because HeadBucket went unanswered (reason 'HeadBucket: ...') closes as soon as a
-- HeadBucket answers; one opened because too many HEADs of a cycle were transient stays open
-- until a cycle's HEADs are healthy again.

create or replace function recording_finalize_internal.outcome_decision(
    p_outcome text,
    p_metadata_problem text,
    p_error text,
    p_attempts integer,
    p_max_attempts integer,
    p_window_start timestamptz,
    p_upload_grace interval,
    p_upload_grace_max interval,
    p_now timestamptz,
    -- Whether the cycle's HeadBucket answered; NULL: the incidents as recorded (see above).
    p_bucket_confirmed boolean
)
returns table (
    result text,
    finalize_status text,
    attempts integer,
    next_attempt_at timestamptz,
    last_error text,
    quarantine_reason text
)
language sql
stable
-- No SET clause, so that it is inlined into the caller's statement (see claim_decision).
as $$
    select
        case
            when p_outcome = 'found' and p_metadata_problem is null then 'reconciled'
            when p_outcome in ('found', 'invalid_metadata') then 'quarantined'
            when p_outcome = 'missing' and d.until is not null then 'deferred_by_incident'
            when p_outcome = 'missing' then 'failed'
            when w.held then 'held_by_incident'
            when p_outcome = 'transient' and p_attempts >= p_max_attempts then 'quarantined'
            when p_outcome = 'transient' then 'backoff'
            else 'config_error_released'
        end,
        case
            when p_outcome = 'found' and p_metadata_problem is null then 'Done'
            when p_outcome in ('found', 'invalid_metadata') then 'Quarantined'
            when p_outcome = 'missing' and d.until is null then 'Done'
            when p_outcome = 'transient' and not w.held and p_attempts >= p_max_attempts
                then 'Quarantined'
            else 'Pending'
        end,
        -- The attempt counted at claim is given back when the check could not count: a 404
        -- while storage is not trusted, a transient answer while the worker's own incident is
        -- open, a configuration error (the deployment is wrong, not the recording).
        case
            when (p_outcome = 'missing' and d.until is not null)
                or w.held
                or p_outcome = 'config_error' then greatest(p_attempts - 1, 0)
            else p_attempts
        end,
        -- NULL keeps the row's next_attempt_at: the backoff the claim set.
        case
            when p_outcome = 'missing' and d.until is not null
                then least(d.until, p_now + p_upload_grace_max)
            when p_outcome = 'config_error' then p_now
        end,
        -- NULL keeps the row's last_error.
        case
            when p_outcome = 'found' and p_metadata_problem is null then null
            -- p_error of a found verdict: what the driver could not read of the object (a
            -- value it could not convert is NULL here, which the problem alone cannot say).
            when p_outcome = 'found' then 'InvalidMetadata: ' || p_metadata_problem
                || coalesce(' (' || nullif(p_error, '') || ')', '')
            when p_outcome = 'invalid_metadata'
                then 'InvalidMetadata: ' || coalesce(nullif(p_error, ''), 'unspecified')
            when p_outcome = 'missing' and d.until is not null then d.reason
            when p_outcome = 'missing' then 'Timeout: no object in file storage after the SLA'
                || coalesce(' (' || nullif(p_error, '') || ')', '')
            when w.held then format(
                'Transient: %s (attempt given back: the worker''s storage incident %s is open)',
                coalesce(nullif(p_error, ''), 'unspecified'),
                coalesce(h.id::text, '(opened as HeadBucket did not answer)'))
            when p_outcome = 'transient'
                then 'Transient: ' || coalesce(nullif(p_error, ''), 'unspecified')
            else 'ConfigError: ' || coalesce(nullif(p_error, ''), 'unspecified')
        end,
        case
            when p_outcome in ('found', 'invalid_metadata')
                and (p_outcome = 'invalid_metadata' or p_metadata_problem is not null)
                then 'invalid_metadata'
            when p_outcome = 'transient' and not w.held and p_attempts >= p_max_attempts
                then 'max_attempts'
        end
    from (select 1) as one
    -- The storage-incident rule for a 404: it fails the recording only if no incident that
    -- overlaps its upload window (from p_window_start, when the recording stopped or its
    -- session ended, to now) is open or ended less than the grace ago. Of several, the one that
    -- defers longest decides (an open one: the grace from now, it cannot end sooner).
    left join lateral (
        select
            coalesce(e.ended_at, p_now) + p_upload_grace as until,
            case when e.ended_at is null then format(
                'StorageIncident: %s incident %s open since %s; a 404 is not trusted while '
                'storage is out, next check at %s', i.source, i.id,
                recording_finalize_internal.iso_utc(i.started_at),
                recording_finalize_internal.iso_utc(p_now + p_upload_grace))
            else format(
                'StorageIncident: %s incident %s ended %s, within the upload grace of %s; a 404 '
                'is not trusted before %s', i.source, i.id,
                recording_finalize_internal.iso_utc(e.ended_at), p_upload_grace,
                recording_finalize_internal.iso_utc(e.ended_at + p_upload_grace))
            end as reason
        from recording_finalize.storage_incidents as i
        -- When it ends, as far as this verdict is concerned: the worker's HeadBucket incident
        -- at p_now when HeadBucket answered (the cycle closes it before it claims).
        cross join lateral (
            select case when i.ended_at is null and i.source = 'worker' and p_bucket_confirmed
                and coalesce(i.reason, '') like 'HeadBucket:%' then p_now
                else i.ended_at end as ended_at
        ) as e
        where p_outcome = 'missing'
            and i.started_at <= p_now
            -- The incidents as recorded (what the indexes on ended_at serve), then as this
            -- verdict sees them.
            and (i.ended_at is null
                or (i.ended_at >= coalesce(p_window_start, '-infinity')
                    and i.ended_at + p_upload_grace > p_now))
            and (e.ended_at is null
                or (e.ended_at >= coalesce(p_window_start, '-infinity')
                    and e.ended_at + p_upload_grace > p_now))
        order by coalesce(e.ended_at, 'infinity') desc, i.id desc
        limit 1
    ) as d on true
    -- A transient answer while the worker's own storage incident is open (it opened it because
    -- the storage could not be reached) says nothing about the recording: no attempt is burned,
    -- so an outage of any length quarantines nothing.
    left join lateral (
        select i.id
        from recording_finalize.storage_incidents as i
        where p_outcome = 'transient'
            and i.source = 'worker' and i.ended_at is null
            -- Not the HeadBucket incident a HeadBucket that answered closes.
            and not (coalesce(p_bucket_confirmed, false)
                and coalesce(i.reason, '') like 'HeadBucket:%')
            -- As for the 404 rule: an incident that starts after the moment judged is not open
            -- at that moment.
            and i.started_at <= p_now
        limit 1
    ) as h on true
    -- HeadBucket unanswered: the cycle opens the worker's incident (or keeps it open) first.
    cross join lateral (
        select coalesce(p_outcome = 'transient'
            and (h.id is not null or p_bucket_confirmed is false), false) as held
    ) as w
$$;

comment on function recording_finalize_internal.outcome_decision(
    text, text, text, integer, integer, timestamptz, interval, interval, timestamptz, boolean
) is
'Internal. What a file-storage verdict does to a claimed row whose recording is not terminal, '
'and whether a 404 is believed: called by apply_outcome (which carries it out) and '
'preview_outcomes (run-once --dry-run, explain: which report it), with the same facts. '
'p_attempts counts the claim. found: reconciled (row Done; the caller moves the recording to '
'Available), or quarantined invalid_metadata when p_metadata_problem says why the metadata is '
'unusable (last_error the problem, then p_error in brackets: what the driver could not read); '
'invalid_metadata: quarantined; missing (a 404): failed (row Done; the caller fails the '
'recording, Timeout), unless a storage incident overlapping the upload window (from '
'p_window_start) is open or ended less than p_upload_grace ago: deferred_by_incident, attempt '
'given back, due at incident end + grace (at most now + p_upload_grace_max), last_error names '
'the incident; transient: backoff (the claim''s backoff stands), quarantined max_attempts once '
'p_attempts >= p_max_attempts, or held_by_incident (attempt given back) while an incident of '
'source worker is open; config_error: config_error_released, attempt given back, due now. '
'next_attempt_at and last_error NULL mean: keep the row''s. p_bucket_confirmed is a fact, '
'whether the cycle''s HeadBucket answered: NULL takes the incidents as recorded (apply_outcome: '
'the cycle acted on its HeadBucket before it claimed); true takes the worker''s open incident '
'opened because HeadBucket went unanswered (reason ''HeadBucket: ...'') as ended at p_now (the '
'cycle closes it), the one opened for transient HEADs as open (a healthy cycle closes it, at its '
'end); false takes a worker incident as open (the cycle opens one). STABLE: reads '
'storage_incidents.';

revoke all on function recording_finalize_internal.outcome_decision(
    text, text, text, integer, integer, timestamptz, interval, interval, timestamptz, boolean
) from public;
