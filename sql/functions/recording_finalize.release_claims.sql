-- Gives back the claims of rows a stopping worker will not check: attempts kept as they were.

create or replace function recording_finalize.release_claims(
    p_recording_ids uuid[],
    p_claim_tokens uuid[]
)
returns integer
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
set lock_timeout = '100ms'
as $$
declare
    v_released integer;
begin
    if p_recording_ids is null or p_claim_tokens is null
        or cardinality(p_recording_ids) <> cardinality(p_claim_tokens)
        or cardinality(p_recording_ids) > 10000 then
        raise exception using
            errcode = 'RF001',
            message = 'invalid_parameter: release_claims: p_recording_ids and p_claim_tokens must '
                'be arrays of the same length, at most 10000';
    end if;
    -- A stopping worker must not fail its whole release on one row being settled anyway.
    update messenger.recording_finalize_attempts as f
    set attempts = greatest(f.attempts - 1, 0),
        next_attempt_at = now(),
        claim_token = null,
        updated_at = now()
    where f.id in (
        select recording_finalize_internal.still_claimed(p_recording_ids, p_claim_tokens)
    );
    get diagnostics v_released = row_count;
    return v_released;
end
$$;

comment on function recording_finalize.release_claims(uuid[], uuid[]) is
'For a stopping worker (SIGTERM): the rows it claimed and will not check get their attempt back '
'and are due now, their claim token cleared; only rows still Pending and claimed with the token '
'given (re-claimed or settled rows are left alone); a row another transaction holds is skipped '
'(SKIP LOCKED), never waited for. Returns how many it released. RF001 for '
'arrays of different lengths or more than 10000. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.release_claims(uuid[], uuid[]) from public;
grant execute on function recording_finalize.release_claims(uuid[], uuid[])
to recording_finalize_worker;
