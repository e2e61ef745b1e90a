-- Bulk audited requeue: one bounded batch of quarantined rows per call (one transaction).

create or replace function recording_finalize.operator_requeue_quarantined(
    p_operator text,
    p_reason text,
    p_reason_code text default null,
    p_since timestamptz default null,
    p_limit integer default 1000,
    p_dry_run boolean default true
)
returns table (
    recording_id uuid,
    quarantine_reason text,
    attempts integer,
    last_error text,
    quarantined_at timestamptz
)
language plpgsql
volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
begin
    if p_limit is null or p_limit not between 1 and 1000 then
        raise exception using
            errcode = 'RF001',
            message = format('requeue: the batch limit must be 1..1000, got %s', p_limit);
    end if;
    if p_reason_code is not null and p_reason_code not in (
        'max_attempts', 'crash_loop', 'invalid_metadata', 'recording_not_found',
        'session_not_found'
    ) then
        raise exception using
            errcode = 'RF001',
            message = format('requeue: unknown quarantine reason code %L', p_reason_code),
            hint = 'One of max_attempts, crash_loop, invalid_metadata, recording_not_found, '
                'session_not_found.';
    end if;
    if p_dry_run is null then
        raise exception using errcode = 'RF001', message = 'requeue: p_dry_run must be set';
    end if;
    -- The operator and reason are checked even for a dry run: the real run would need them.
    if p_operator is null or length(btrim(p_operator)) not between 1 and 128
        or p_reason is null or length(btrim(p_reason)) not between 1 and 512 then
        raise exception using
            errcode = 'RF001',
            message = 'requeue: an operator (1..128 characters) and a reason (1..512) are required';
    end if;

    if p_dry_run then
        return query
        select f.recording_id, f.quarantine_reason::text, f.attempts, f.last_error::text,
            f.updated_at
        from messenger.recording_finalize_attempts as f
        where f.status = 'Quarantined'
            and (p_reason_code is null or f.quarantine_reason = p_reason_code)
            and (p_since is null or f.updated_at >= p_since)
        order by f.updated_at, f.recording_id
        limit p_limit;
        return;
    end if;

    return query
    with picked as (
        select f.id from messenger.recording_finalize_attempts as f
        where f.status = 'Quarantined'
            and (p_reason_code is null or f.quarantine_reason = p_reason_code)
            and (p_since is null or f.updated_at >= p_since)
        order by f.updated_at, f.recording_id
        limit p_limit
        for update skip locked
    ),
    before as (
        select f.id, f.recording_id, f.quarantine_reason::text as quarantine_reason,
            f.attempts, f.last_error::text as last_error, f.updated_at
        from messenger.recording_finalize_attempts as f
        inner join picked as p on p.id = f.id
    ),
    requeued as (
        update messenger.recording_finalize_attempts as f
        set status = 'Pending',
            attempts = 0,
            next_attempt_at = now(),
            claim_token = null,
            quarantine_reason = null,
            updated_at = now()
        from before as b
        where f.id = b.id
        returning f.id
    ),
    audited as (
        insert into messenger.recording_finalize_operator_actions (
            recording_id, action_kind, operator_name, reason, detail
        )
        select b.recording_id, 'requeue', btrim(p_operator), btrim(p_reason),
            jsonb_build_object('bulk', true, 'attempts', b.attempts,
                'quarantineReason', b.quarantine_reason, 'lastError', b.last_error)
        from before as b
        inner join requeued as q on q.id = b.id
        returning 1
    )
    select b.recording_id, b.quarantine_reason, b.attempts, b.last_error, b.updated_at
    from before as b
    inner join requeued as q on q.id = b.id
    order by b.updated_at, b.recording_id;
end
$$;

comment on function recording_finalize.operator_requeue_quarantined(
    text, text, text, timestamptz, integer, boolean
) is
'Bulk audited requeue, one batch per call (the driver calls it until a short batch): up to '
'p_limit (1..1000) Quarantined rows, oldest first, optionally only those with quarantine_reason '
'= p_reason_code and quarantined (updated_at) at or after p_since. p_dry_run true: returns them '
'and writes nothing. false: locks them (FOR UPDATE SKIP LOCKED: never waits), moves each to '
'Pending, attempts 0, due now, and writes one operator audit row per recording, all in this '
'call''s transaction; returns the rows as they were. RF001 for a bad limit, reason code, '
'operator or reason. Operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.operator_requeue_quarantined(
    text, text, text, timestamptz, integer, boolean
) from public;
grant execute on function recording_finalize.operator_requeue_quarantined(
    text, text, text, timestamptz, integer, boolean
) to recording_finalize_operator;
