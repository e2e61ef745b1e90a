-- Records why apply_outcome failed for claimed rows, and decides whether the fault is the rows'
-- own or the service schema's (then the cycle stops and the attempts are given back).

create or replace function recording_finalize.record_apply_failure(
    p_recording_ids uuid[],
    p_claim_tokens uuid[],
    p_sqlstates text[],
    p_error text,
    p_message text,
    p_batch_size integer,
    p_unapplied_ids uuid[] default '{}',
    p_unapplied_tokens uuid[] default '{}'
)
returns table (service_fault boolean, last_error text, recorded integer)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
set lock_timeout = '100ms'
as $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    v_state text;
    v_error text;
begin
    if p_recording_ids is null or p_claim_tokens is null or p_sqlstates is null
        or p_unapplied_ids is null or p_unapplied_tokens is null
        or cardinality(p_recording_ids) <> cardinality(p_claim_tokens)
        or cardinality(p_recording_ids) <> cardinality(p_sqlstates)
        or cardinality(p_unapplied_ids) <> cardinality(p_unapplied_tokens)
        or cardinality(p_recording_ids) + cardinality(p_unapplied_ids) > 10000
        or array_position(p_sqlstates, null) is not null
        or p_batch_size is null or p_batch_size < cardinality(p_recording_ids) then
        raise exception using
            errcode = 'RF001',
            message = 'invalid_parameter: record_apply_failure: p_recording_ids, p_claim_tokens '
                'and p_sqlstates must be arrays of the same length without NULL SQLSTATEs, '
                'p_unapplied_ids and p_unapplied_tokens too (at most 10000 rows in all), '
                'p_batch_size at least the number of failures';
    end if;

    -- A fault that hits every row is not poison: it is the service schema's when every failed
    -- row failed for one SQLSTATE of class 42 (a privilege: never one row's), or of class 23 (a
    -- constraint) or 22 (a value's type or form) on every row of a batch of more than one.
    -- Anything else (another class, a mix, one row of several) is the rows' own failure.
    if (select count(distinct s) from unnest(p_sqlstates) as s) = 1 then
        v_state := p_sqlstates[1];
    end if;
    service_fault := coalesce(left(v_state, 2) = '42'
        or (left(v_state, 2) = any('{23,22}'::text[])
            and cardinality(p_recording_ids) = p_batch_size and p_batch_size > 1), false);

    if service_fault then
        -- Every row the cycle claimed and did not apply keeps the SQLSTATE and the server's
        -- message (it names the object, never a row's data) and gets its attempt back, due after
        -- the backoff base: the fault never walks a row to quarantine.
        v_error := left('ServiceFault: ' || v_state || coalesce(' ' || nullif(
            recording_finalize_internal.mask_urls(p_message, 480), ''), ''), 512);
        update messenger.recording_finalize_attempts as f
        set attempts = greatest(f.attempts - 1, 0),
            next_attempt_at = now() + v_policy.backoff_base,
            claim_token = null,
            last_error = v_error,
            updated_at = now()
        where f.id in (
            select recording_finalize_internal.still_claimed(p_recording_ids || p_unapplied_ids,
                p_claim_tokens || p_unapplied_tokens)
        );
    else
        -- One row's own failure: its attempt stands and its error (class and SQLSTATE, never the
        -- message: it may quote the row's data) stays for the crash_loop quarantine that follows
        -- if it repeats. The rows not applied are left as they are.
        v_error := left(coalesce(nullif(
            recording_finalize_internal.mask_urls(p_error, 400), ''), 'ApplyFailed'), 512);
        update messenger.recording_finalize_attempts as f
        set claim_token = null,
            last_error = v_error,
            updated_at = now()
        where f.id in (
            select recording_finalize_internal.still_claimed(p_recording_ids, p_claim_tokens)
        );
    end if;
    get diagnostics recorded = row_count;
    last_error := v_error;
    return next;
end
$$;

comment on function recording_finalize.record_apply_failure(
    uuid[], uuid[], text[], text, text, integer, uuid[], uuid[]
) is
'After apply_outcome failed (raised) for claimed rows of one pipelined round trip of '
'p_batch_size verdicts: p_recording_ids/p_claim_tokens the rows that failed, p_sqlstates their '
'SQLSTATEs, p_error the first failure''s class and SQLSTATE, p_message its server message and '
'the object it names; p_unapplied_ids/p_unapplied_tokens the other rows the cycle claimed and '
'has not applied. Decides whether it is a service fault (service_fault true: the cycle must '
'stop): one SQLSTATE for every failed row, of class 42, or of class 23 or 22 on every row of a '
'batch of more than one. Then every failed and unapplied row gets ''ServiceFault: <SQLSTATE> '
'<message>'' (URLs masked) as last_error and its attempt back, due after the backoff base, so '
'no row is quarantined for it. Otherwise the failed rows keep p_error as last_error and their '
'attempt (a crash_loop quarantine then names it) and the unapplied rows are untouched. Only '
'rows still Pending and claimed with the token, whose claim token it clears; a row another '
'transaction holds is skipped. Returns service_fault, the last_error written and how many rows '
'it recorded. RF001 for bad arguments. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.record_apply_failure(
    uuid[], uuid[], text[], text, text, integer, uuid[], uuid[]
) from public;
grant execute on function recording_finalize.record_apply_failure(
    uuid[], uuid[], text[], text, text, integer, uuid[], uuid[]
) to recording_finalize_worker;

-- The call of the release before, kept for one release: a worker of that release still running
-- through a rolling update decided the fault itself and passes p_give_back. The next release's
-- migration drops it.
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
'Kept for the workers of the release before (they decide the fault themselves). '
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
