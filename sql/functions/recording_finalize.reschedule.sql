-- The operator's one reschedule: requeue (one or many) and retry-now, set-based and audited.

create or replace function recording_finalize.reschedule(
    p_recording_ids uuid[],
    p_from_status text,
    p_operator text,
    p_reason text,
    p_strict boolean default true
)
returns table (
    recording_id uuid,
    status text,
    attempts integer,
    next_attempt_at timestamptz,
    last_error text,
    quarantine_reason text,
    quarantined_at timestamptz
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
set lock_timeout = '1s'
as $$
#variable_conflict use_column
declare
    v_missing uuid;
    v_wrong record;
begin
    if p_from_status is null or p_from_status not in ('Quarantined', 'Pending') then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: reschedule: p_from_status must be Quarantined '
                '(requeue) or Pending (retry), got %s', coalesce(p_from_status, 'NULL'));
    end if;
    -- A NULL id names no row: in strict mode it would slip past the RF005 check below.
    if p_recording_ids is null or cardinality(p_recording_ids) not between 1 and 1000
        or pg_catalog.array_position(p_recording_ids, null) is not null
        or p_strict is null then
        raise exception using
            errcode = 'RF001',
            message = 'invalid_parameter: reschedule: p_recording_ids must hold 1..1000 ids, '
                'none NULL, and p_strict be set';
    end if;
    perform recording_finalize_internal.check_operator(
        case p_from_status when 'Quarantined' then 'requeue' else 'retry' end,
        p_operator, p_reason);

    -- One lock form, in one order (by recording id, so two operators never deadlock).
    perform from messenger.recording_finalize_attempts as f
    where f.recording_id = any(p_recording_ids)
    order by f.recording_id
    for no key update;

    if p_strict then
        select x into v_missing from unnest(p_recording_ids) as x
        where not exists (
            select from messenger.recording_finalize_attempts as f where f.recording_id = x
        )
        order by x
        limit 1;
        if v_missing is not null then
            raise exception using
                errcode = 'RF005',
                message = format('finalize_row_not_found: recording %s has no finalize row',
                    v_missing);
        end if;
        select f.recording_id, f.status into v_wrong
        from messenger.recording_finalize_attempts as f
        where f.recording_id = any(p_recording_ids) and f.status <> p_from_status
        order by f.recording_id
        limit 1;
        if v_wrong.recording_id is not null then
            raise exception using
                errcode = case p_from_status when 'Quarantined' then 'RF006' else 'RF020' end,
                message = format('%s: the finalize row of recording %s is %s, not %s',
                    case p_from_status when 'Quarantined' then 'not_quarantined'
                        else 'not_pending' end,
                    v_wrong.recording_id, v_wrong.status, p_from_status),
                hint = case p_from_status when 'Quarantined'
                    then 'A Pending row backing off is made due now with retry.'
                    else 'A Quarantined row is handed back with requeue.' end;
        end if;
    end if;

    -- Requeue: Quarantined -> Pending with attempts 0, its verdict history cleared (so that a
    -- crash loop after it is recognised again). Retry: a Pending row becomes due now, attempts
    -- and last verdict kept. Both: due now, no claim, the last error kept for the record.
    return query
    with before as (
        select f.id, f.recording_id, f.attempts, f.last_error, f.quarantine_reason,
            f.updated_at
        from messenger.recording_finalize_attempts as f
        where f.recording_id = any(p_recording_ids) and f.status = p_from_status
    ),
    moved as (
        update messenger.recording_finalize_attempts as f
        set status = 'Pending',
            attempts = case when p_from_status = 'Quarantined' then 0 else f.attempts end,
            last_outcome = case when p_from_status = 'Quarantined' then null
                else f.last_outcome end,
            quarantine_reason = null,
            next_attempt_at = now(),
            claim_token = null,
            updated_at = now()
        from before as b
        where f.id = b.id
        returning f.recording_id, f.status, f.attempts, f.next_attempt_at, f.last_error
    ),
    -- A data-modifying WITH runs whether or not it is read.
    audited as (
        insert into recording_finalize.operator_actions (
            recording_id, action_kind, operator_name, reason, detail
        )
        select b.recording_id,
            case when p_from_status = 'Quarantined' then 'requeue' else 'retry' end,
            btrim(p_operator), btrim(p_reason),
            jsonb_build_object('attempts', b.attempts, 'quarantineReason', b.quarantine_reason,
                'lastError', b.last_error, 'bulk', cardinality(p_recording_ids) > 1)
        from before as b
    )
    select m.recording_id, m.status::text, m.attempts, m.next_attempt_at, m.last_error::text,
        b.quarantine_reason::text,
        case when p_from_status = 'Quarantined' then b.updated_at end
    from moved as m
    inner join before as b on b.recording_id = m.recording_id
    order by m.recording_id;
end
$$;

comment on function recording_finalize.reschedule(uuid[], text, text, text, boolean) is
'The operator''s one way to hand rows back to the worker, set-based (1..1000 recording ids) and '
'audited (one row per recording in recording_finalize.operator_actions naming p_operator and '
'p_reason, both required: RF001; a NULL id is RF001 too). p_from_status Quarantined (requeue): '
'Pending, attempts 0, quarantine reason and last verdict cleared, due now. p_from_status '
'Pending (retry): due now, '
'attempts and last verdict kept. The last error is kept either way. Locks the rows FOR NO KEY '
'UPDATE in recording-id order. p_strict (the single-id commands): RF005 when an id has no '
'finalize row, RF006 (requeue) or RF020 (retry) when a row is not in p_from_status, nothing '
'changed; not strict (the bulk form): such ids are skipped. Returns the rescheduled rows with '
'the reason they were quarantined for and since when. Operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.reschedule(uuid[], text, text, text, boolean)
from public;
grant execute on function recording_finalize.reschedule(uuid[], text, text, text, boolean)
to recording_finalize_operator;
