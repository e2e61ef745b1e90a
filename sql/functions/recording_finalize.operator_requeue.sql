-- Audited runbook requeue of one quarantined row: who, why and when go to the audit trail.

create or replace function recording_finalize.operator_requeue(
    p_recording_id uuid,
    p_operator text,
    p_reason text
)
returns table (
    recording_id uuid,
    status text,
    attempts integer,
    next_attempt_at timestamptz,
    last_error text
)
language plpgsql
volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
    v_row messenger.recording_finalize_attempts%rowtype;
begin
    select f.* into v_row
    from messenger.recording_finalize_attempts as f
    where f.recording_id = p_recording_id
    for update;
    if not found then
        raise exception using
            errcode = 'RF005',
            message = format('requeue: recording %s has no finalize row', p_recording_id);
    end if;
    if v_row.status <> 'Quarantined' then
        raise exception using
            errcode = 'RF006',
            message = format(
                'requeue: the finalize row of recording %s is %s, not Quarantined',
                p_recording_id, v_row.status
            ),
            hint = 'Only quarantined rows are re-enqueued; use retry for a row backing off.';
    end if;
    perform recording_finalize.record_operator_action(
        p_recording_id, 'requeue', p_operator, p_reason,
        jsonb_build_object('attempts', v_row.attempts, 'quarantineReason',
            v_row.quarantine_reason, 'lastError', v_row.last_error)
    );
    -- last_error stays: it is the record of why a human had to step in.
    return query
    update messenger.recording_finalize_attempts as f
    set status = 'Pending',
        attempts = 0,
        next_attempt_at = now(),
        claim_token = null,
        quarantine_reason = null,
        updated_at = now()
    where f.id = v_row.id
    returning f.recording_id, f.status::text, f.attempts, f.next_attempt_at, f.last_error::text;
end
$$;

comment on function recording_finalize.operator_requeue(uuid, text, text) is
'Audited runbook requeue: Quarantined -> Pending, attempts = 0, due now, last_error kept, '
'quarantine_reason cleared; one operator audit row (action requeue; the previous attempts, '
'reason and last_error in detail) in the same transaction. RF005 without a finalize row, RF006 '
'when the row is not Quarantined, RF001 for an empty operator or reason. Operator API.';

revoke all on function recording_finalize.operator_requeue(uuid, text, text) from public;
grant execute on function recording_finalize.operator_requeue(uuid, text, text)
to recording_finalize_operator;
