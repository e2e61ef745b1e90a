-- Dry run of a whole cycle for given verdicts: the claim and then the verdict, decided as for real.

create or replace function recording_finalize.preview_outcomes(
    p_verdicts jsonb
)
returns table (
    recording_id uuid,
    claim_action text,
    result text,
    finalize_status text,
    attempts integer,
    next_attempt_at timestamptz,
    detail text
)
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    -- Asked once: may an Available recording without an event we can see get one from us?
    v_republish boolean := recording_finalize_internal.republish_trusted();
    -- Read from the service's outbox once per call at most, when an Available recording asks.
    v_remembered_from timestamptz;
    v_remembered_asked boolean := false;
    v_verdict jsonb;
    v_id uuid;
    v_size_bytes bigint;
    v_duration integer;
    v_bucket_confirmed boolean;
    v_row messenger.recording_finalize_attempts%rowtype;
    v_rec recording_finalize_internal.recording;
    v_session recording_finalize_internal.session;
    v_claim record;
    v_outcome record;
begin
    if p_verdicts is null or jsonb_typeof(p_verdicts) <> 'array'
        or jsonb_array_length(p_verdicts) > 10000 then
        raise exception using
            errcode = 'RF001',
            message = 'invalid_parameter: preview_outcomes: p_verdicts must be a JSON array of at '
                'most 10000 verdicts {recording_id, outcome, file_id, size_bytes, '
                'duration_seconds, format, error, bucket_confirmed}';
    end if;
    for v_verdict in select v from jsonb_array_elements(p_verdicts) as v loop
        -- Every verdict names its recording by UUID, with whole numbers for the sizes: an
        -- element that is not an object, or an id that is missing, would otherwise be previewed
        -- as "no row" (none), and a bad number fail a cast.
        begin
            v_id := (v_verdict ->> 'recording_id')::uuid;
            v_size_bytes := (v_verdict ->> 'size_bytes')::bigint;
            v_duration := (v_verdict ->> 'duration_seconds')::integer;
        exception when invalid_text_representation or numeric_value_out_of_range then
            v_id := null;
        end;
        if jsonb_typeof(v_verdict) <> 'object' or v_id is null then
            raise exception using
                errcode = 'RF001',
                message = format('invalid_parameter: preview_outcomes: each verdict must be an '
                    'object with a UUID recording_id (and whole numbers for size_bytes and '
                    'duration_seconds), got %s', v_verdict);
        end if;
        recording_id := v_id;
        if v_verdict ->> 'outcome' is null or v_verdict ->> 'outcome' not in (
            'found', 'missing', 'transient', 'invalid_metadata', 'config_error') then
            raise exception using
                errcode = 'RF001',
                message = format('invalid_parameter: preview_outcomes: outcome must be found, '
                    'missing, transient, invalid_metadata or config_error, got %s',
                    coalesce(v_verdict ->> 'outcome', 'NULL'));
        end if;
        -- Whether the HeadBucket the verdict came with answered (absent or null: not known).
        if jsonb_typeof(v_verdict -> 'bucket_confirmed') not in ('boolean', 'null') then
            raise exception using
                errcode = 'RF001',
                message = format('invalid_parameter: preview_outcomes: bucket_confirmed must be '
                    'true, false or null, got %s', v_verdict -> 'bucket_confirmed');
        end if;
        v_bucket_confirmed := nullif(v_verdict -> 'bucket_confirmed', 'null')::boolean;
        select f.* into v_row from messenger.recording_finalize_attempts as f
        where f.recording_id = v_id;
        select x.* into v_rec from recording_finalize_internal.recording_row(v_id) as x;
        v_session := case when v_rec.status not in ('Available', 'Failed') then
            recording_finalize_internal.session_of(v_rec.session_kind, v_rec.session_id) end;
        if v_rec.status = 'Available' and not v_remembered_asked then
            v_remembered_from := recording_finalize_internal.service_events_remembered_from();
            v_remembered_asked := true;
        end if;
        -- What the claim would do now (only a Pending row is claimed at all)...
        select d.* into v_claim
        from recording_finalize_internal.claim_decision(
            v_rec.status,
            v_rec.status = 'Available' and recording_finalize_internal.has_event(v_rec.id),
            v_session.id is not null, v_session.ended_at, v_row.attempts, v_row.last_outcome,
            v_policy.max_attempts, v_policy.sla_timeout, now(),
            p_republish => v_republish
                and coalesce(v_rec.available_at >= v_remembered_from, true)
        ) as d;
        claim_action := case when v_row.status is distinct from 'Pending' then 'none'
            else v_claim.action end;
        -- ...and, for a row it hands to the driver, what this verdict would do after it.
        if claim_action = 'reconcile' then
            select d.* into v_outcome
            from recording_finalize_internal.outcome_decision(
                v_verdict ->> 'outcome',
                case when v_verdict ->> 'outcome' = 'found' then
                    recording_finalize_internal.metadata_problem(
                        v_verdict ->> 'file_id', v_size_bytes, v_duration,
                        v_verdict ->> 'format') end,
                recording_finalize_internal.mask_urls(v_verdict ->> 'error', 400),
                v_row.attempts + 1,
                v_policy.max_attempts,
                least(v_rec.ended_at, v_session.ended_at),
                v_policy.upload_grace,
                v_policy.upload_grace_max,
                now(),
                v_bucket_confirmed,
                -- The known uploads are not looked at by a preview: the bucket alone stands.
                null,
                null,
                null
            ) as d;
            result := v_outcome.result;
            finalize_status := v_outcome.finalize_status;
            attempts := v_outcome.attempts;
            -- The claim's backoff (without its jitter) where the verdict keeps it.
            next_attempt_at := case when v_outcome.finalize_status = 'Pending' then coalesce(
                v_outcome.next_attempt_at,
                now() + recording_finalize_internal.backoff_delay(v_row.attempts + 1,
                    v_policy.backoff_base, v_policy.backoff_factor, v_policy.backoff_cap, 0)) end;
            detail := v_outcome.last_error;
        else
            -- The claim's own effects (claim_decision's), or none for a row it would not take.
            result := claim_action;
            finalize_status := case when claim_action = 'none' then v_row.status
                else v_claim.finalize_status end;
            attempts := case when claim_action = 'none' then v_row.attempts
                else v_claim.attempts end;
            next_attempt_at := case when claim_action <> 'none' then v_claim.next_attempt_at end;
            detail := v_claim.detail;
        end if;
        return next;
    end loop;
end
$$;

comment on function recording_finalize.preview_outcomes(jsonb) is
'What the next cycle would do with each recording of p_verdicts (a JSON array of {recording_id, '
'outcome, file_id, size_bytes, duration_seconds, format, error, bucket_confirmed}: the '
'file-storage verdict the driver just saw, as for apply_outcome, and whether the HeadBucket it '
'came with answered, which decides the worker''s own storage incident before the next cycle '
'claims: see outcome_decision''s p_bucket_confirmed), decided by the real path''s own functions: '
'claim_action from recording_finalize_internal.claim_decision (none when the row is not Pending '
'or there is no row), and for reconcile the result of '
'recording_finalize_internal.outcome_decision with the attempt the claim would count (reconciled, '
'failed, deferred_by_incident, backoff, held_by_incident, quarantined, config_error_released); '
'for the other claim actions result is that action. next_attempt_at: when a Pending row would be '
'due (the claim''s backoff without its jitter). The busy and stale no-ops of a race cannot be '
'previewed. STABLE: writes nothing, locks nothing. RF001 for a bad verdict list (not an array, '
'more than 10000, an element that is not an object with a UUID recording_id and a known outcome, '
'sizes that are not whole numbers, a bucket_confirmed that is not a boolean). Operator API '
'(SECURITY DEFINER): run-once --dry-run and explain.';

revoke all on function recording_finalize.preview_outcomes(jsonb) from public;
grant execute on function recording_finalize.preview_outcomes(jsonb)
to recording_finalize_operator;
