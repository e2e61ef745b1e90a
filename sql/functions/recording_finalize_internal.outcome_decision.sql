-- The verdict's state machine, stated once: what a file-storage verdict does to a claimed row,
-- and with it whether a 404 is believed.
--
-- The facts it decides on, all reported, none judged, by the caller:
-- - p_outcome: what the storage answered for the recording's key (found, missing = a 404,
--   transient, invalid_metadata, config_error);
-- - p_metadata_problem: metadata_problem's word on a found object's metadata;
-- - p_bucket_confirmed: whether the HeadBucket of the cycle the verdict belongs to confirmed the
--   bucket (true / false), or NULL when not reported (the incidents as recorded);
-- - p_objects_found: how many objects the cycle's HEADs have found so far (this verdict's batch
--   and the known uploads included); p_known_missing, p_known_other: how the HEADs of the known
--   uploads (recording_finalize.known_uploads, the newest Available recordings) that found
--   nothing answered, 404 or otherwise; NULL when the cycle did not look;
-- - recording_finalize.storage_incidents: who saw the storage out, and when.
--
-- A 404 fails the recording only when all three rules believe it:
-- 1. The bucket: the cycle's HeadBucket confirmed the bucket (p_bucket_confirmed false: a HEAD
--    on a bucket that is not there is a bare 404 too). Otherwise it is read as transient.
-- 2. The key layout: a bucket that exists is not yet the recorders'. When the cycle has found no
--    object and the known uploads it looked at (key_layout_evidence of them), every one,
--    answered 404, the bucket, prefix or key template is wrong: a configuration error (attempt
--    given back, nothing Failed; KeyLayoutUnconfirmed). With fewer to look at (a new system),
--    or one that answered otherwise, the bucket alone stands. The rule is
--    key_layout_unconfirmed, a file of its own because /readyz judges by it too.
-- 3. The storage incidents: no incident that overlaps the recording's upload window is open or
--    ended less than the upload grace ago (deferred_by_incident).
--
-- The worker's own incidents (source worker) are opened and closed by storage_health, the one
-- place of that rule, while the cycle runs. Their kind says what ends them: one of kind
-- unreachable (HeadBucket went unanswered) ends when a HeadBucket answers; one of kind transient
-- (most HEADs transient) when the HEADs are healthy again. The previews decide before their
-- cycle has reported its HeadBucket, so p_bucket_confirmed takes the worker's incident as that
-- report will leave it (below).

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
    -- The storage as the cycle saw it (see above).
    p_bucket_confirmed boolean,
    p_objects_found integer default null,
    p_known_missing integer default null,
    p_known_other integer default null
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
            when v.outcome = 'found' and p_metadata_problem is null then 'reconciled'
            when v.outcome in ('found', 'invalid_metadata') then 'quarantined'
            when v.outcome = 'missing' and d.until is not null then 'deferred_by_incident'
            when v.outcome = 'missing' then 'failed'
            when w.held then 'held_by_incident'
            when v.outcome = 'transient' and p_attempts >= p_max_attempts then 'quarantined'
            when v.outcome = 'transient' then 'backoff'
            else 'config_error_released'
        end,
        case
            when v.outcome = 'found' and p_metadata_problem is null then 'Done'
            when v.outcome in ('found', 'invalid_metadata') then 'Quarantined'
            when v.outcome = 'missing' and d.until is null then 'Done'
            when v.outcome = 'transient' and not w.held and p_attempts >= p_max_attempts
                then 'Quarantined'
            else 'Pending'
        end,
        -- The attempt counted at claim is given back when the check could not count: a 404
        -- while storage is not trusted, a transient answer while the worker's own incident is
        -- open, a configuration error (the deployment is wrong, not the recording).
        case
            when (v.outcome = 'missing' and d.until is not null)
                or w.held
                or v.outcome = 'config_error' then greatest(p_attempts - 1, 0)
            else p_attempts
        end,
        -- NULL keeps the row's next_attempt_at: the backoff the claim set.
        case
            when v.outcome = 'missing' and d.until is not null
                then least(d.until, p_now + p_upload_grace_max)
            when v.outcome = 'config_error' then p_now
        end,
        -- NULL keeps the row's last_error.
        case
            when v.outcome = 'found' and p_metadata_problem is null then null
            -- v.error of a found verdict: what the driver could not read of the object (a
            -- value it could not convert is NULL here, which the problem alone cannot say).
            when v.outcome = 'found' then 'InvalidMetadata: ' || p_metadata_problem
                || coalesce(' (' || nullif(v.error, '') || ')', '')
            when v.outcome = 'invalid_metadata'
                then 'InvalidMetadata: ' || coalesce(nullif(v.error, ''), 'unspecified')
            when v.outcome = 'missing' and d.until is not null then d.reason
            when v.outcome = 'missing' then 'Timeout: no object in file storage after the SLA'
                || coalesce(' (' || nullif(v.error, '') || ')', '')
            when w.held then format(
                'Transient: %s (attempt given back: the worker''s storage incident %s is open)',
                coalesce(nullif(v.error, ''), 'unspecified'),
                coalesce(h.id::text, '(opened as HeadBucket did not answer)'))
            when v.outcome = 'transient'
                then 'Transient: ' || coalesce(nullif(v.error, ''), 'unspecified')
            else 'ConfigError: ' || coalesce(nullif(v.error, ''), 'unspecified')
        end,
        case
            when v.outcome in ('found', 'invalid_metadata')
                and (v.outcome = 'invalid_metadata' or p_metadata_problem is not null)
                then 'invalid_metadata'
            when v.outcome = 'transient' and not w.held and p_attempts >= p_max_attempts
                then 'max_attempts'
        end
    -- Rules 1 and 2: a 404 that is not believed is read as what it says of the storage.
    from (
        select case
            when p_outcome is distinct from 'missing' then null
            when p_bucket_confirmed is false then 'bucket_unconfirmed'
            when recording_finalize_internal.key_layout_unconfirmed(
                    p_objects_found, p_known_missing, p_known_other)
                then 'key_layout_unconfirmed'
        end as doubt
    ) as r
    cross join lateral (
        select
            case r.doubt
                when 'bucket_unconfirmed' then 'transient'
                when 'key_layout_unconfirmed' then 'config_error'
                else p_outcome
            end as outcome,
            case r.doubt
                when 'bucket_unconfirmed'
                    then '404 (bucket unconfirmed)' || coalesce(': ' || nullif(p_error, ''), '')
                when 'key_layout_unconfirmed' then format(
                    'KeyLayoutUnconfirmed: the %s newest uploaded recordings answered 404 too, '
                    'so this 404 (%s) says the bucket or key template is not the recorders''; '
                    'check RFR_S3_BUCKET and RFR_S3_KEY_TEMPLATE', p_known_missing,
                    coalesce(nullif(p_error, ''), 'no key given'))
                else p_error
            end as error
        -- Evaluated once: without this fence the planner copies both CASEs into every
        -- reference to v.outcome and v.error below (some twenty), and each call's plan
        -- evaluates them all (it cost the apply path more than the rest of the decision).
        offset 0
    ) as v
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
        -- When it ends, as far as this verdict is concerned: the worker's unreachable incident
        -- at p_now when HeadBucket answered (storage_health closes it before the cycle claims).
        cross join lateral (
            select case when i.ended_at is null and i.source = 'worker' and p_bucket_confirmed
                and i.kind = 'unreachable' then p_now
                else i.ended_at end as ended_at
            -- Once per incident, not copied into the five places below that read it.
            offset 0
        ) as e
        where v.outcome = 'missing'
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
    -- so an outage the worker has seen quarantines nothing, however long it lasts.
    left join lateral (
        select i.id
        from recording_finalize.storage_incidents as i
        where v.outcome = 'transient'
            and i.source = 'worker' and i.ended_at is null
            -- Not the unreachable incident a HeadBucket that answered closes.
            and not (coalesce(p_bucket_confirmed, false)
                and coalesce(i.kind = 'unreachable', false))
            -- As for the 404 rule: an incident that starts after the moment judged is not open
            -- at that moment.
            and i.started_at <= p_now
        limit 1
    ) as h on true
    -- HeadBucket unanswered: the cycle opens the worker's incident (or keeps it open) first.
    cross join lateral (
        select coalesce(v.outcome = 'transient'
            and (h.id is not null or p_bucket_confirmed is false), false) as held
    ) as w
$$;

comment on function recording_finalize_internal.outcome_decision(
    text, text, text, integer, integer, timestamptz, interval, interval, timestamptz, boolean,
    integer, integer, integer
) is
'Internal. What a file-storage verdict does to a claimed row whose recording is not terminal, '
'and whether a 404 is believed: called by apply_outcome (which carries it out) and '
'preview_outcomes (run-once --dry-run, explain: which report it), with the same facts. '
'p_attempts counts the claim. found: reconciled (row Done; the caller moves the recording to '
'Available), or quarantined invalid_metadata when p_metadata_problem says why the metadata is '
'unusable (last_error the problem, then p_error in brackets: what the driver could not read); '
'invalid_metadata: quarantined; missing (a 404): failed (row Done; the caller fails the '
'recording, Timeout), unless one of three rules does not believe it: p_bucket_confirmed false '
'(the cycle''s HeadBucket did not confirm the bucket): read as transient, last_error says '
'''bucket unconfirmed''; no object found by the cycle (p_objects_found 0 or NULL) while at '
'least key_layout_evidence() (2) known uploads answered 404 and none otherwise '
'(p_known_missing, p_known_other): read as config_error, last_error ''ConfigError: '
'KeyLayoutUnconfirmed: ...''; a storage incident '
'overlapping the upload window (from p_window_start) is open or ended less than p_upload_grace '
'ago: deferred_by_incident, attempt given back, due at incident end + grace (at most now + '
'p_upload_grace_max), last_error names the incident; transient: backoff (the claim''s '
'backoff stands), quarantined max_attempts once '
'p_attempts >= p_max_attempts, or held_by_incident (attempt given back) while an incident of '
'source worker is open; config_error: config_error_released, attempt given back, due now. '
'next_attempt_at and last_error NULL mean: keep the row''s. p_bucket_confirmed is a fact, '
'whether the cycle''s HeadBucket answered: NULL takes the incidents as recorded; true takes '
'the worker''s open incident of kind unreachable as ended at p_now (the cycle''s report to '
'storage_health closes it), one of kind transient (or none) as open (the HEADs close it); false '
'takes a worker incident as open (the report opens one). STABLE: reads storage_incidents.';

revoke all on function recording_finalize_internal.outcome_decision(
    text, text, text, integer, integer, timestamptz, interval, interval, timestamptz, boolean,
    integer, integer, integer
) from public;
