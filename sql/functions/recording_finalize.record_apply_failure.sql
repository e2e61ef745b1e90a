-- Records why apply_outcome failed for claimed rows, and gives their attempts back when the
-- fault is not theirs.

create or replace function recording_finalize.record_apply_failure(
    p_recording_ids uuid[],
    p_claim_tokens uuid[],
    p_error text,
    p_give_back boolean
)
returns integer
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
set lock_timeout = '100ms'
as $$
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    -- An error class and message: never a URL, never longer than the column.
    v_error text := recording_finalize_internal.mask_urls(p_error, 400);
    v_recorded integer;
begin
    if p_recording_ids is null or p_claim_tokens is null or p_give_back is null
        or cardinality(p_recording_ids) <> cardinality(p_claim_tokens)
        or cardinality(p_recording_ids) > 10000 then
        raise exception using
            errcode = 'RF001',
            message = 'invalid_parameter: record_apply_failure: p_recording_ids and '
                'p_claim_tokens must be arrays of the same length (at most 10000), '
                'p_give_back true or false';
    end if;
    -- Only rows still claimed with the token (still_claimed). With
    -- p_give_back (a fault that hit every row: a privilege, a constraint, a type) the attempt
    -- does not count and the row is due after the backoff base, so the fault never walks a row
    -- to quarantine; without it (one row's own failure) the attempt stands and the error stays
    -- for the quarantine that follows if it repeats.
    update messenger.recording_finalize_attempts as f
    set attempts = case when p_give_back then greatest(f.attempts - 1, 0) else f.attempts end,
        next_attempt_at = case when p_give_back then now() + v_policy.backoff_base
            else f.next_attempt_at end,
        claim_token = null,
        last_error = left(coalesce(v_error, 'ApplyFailed'), 512),
        updated_at = now()
    where f.id in (
        select recording_finalize_internal.still_claimed(p_recording_ids, p_claim_tokens)
    );
    get diagnostics v_recorded = row_count;
    return v_recorded;
end
$$;

comment on function recording_finalize.record_apply_failure(uuid[], uuid[], text, boolean) is
'After apply_outcome failed (raised) for claimed rows: stores p_error (SQLSTATE and message, '
'URLs masked) as their last_error and clears their claim token; with p_give_back (a fault '
'that hit every row of a batch: SQLSTATE class 42, 23 or 22) the attempt is given back and '
'the row is due after the backoff base, so no row is quarantined for it; without, the attempt '
'stands (a crash_loop quarantine then keeps this error). Only rows still Pending and claimed '
'with the token; a row another transaction holds is skipped. Returns how many it recorded. '
'RF001 for bad arguments. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.record_apply_failure(uuid[], uuid[], text, boolean)
from public;
grant execute on function recording_finalize.record_apply_failure(uuid[], uuid[], text, boolean)
to recording_finalize_worker;
