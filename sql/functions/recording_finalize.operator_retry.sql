-- Audited retry: a Pending row that is backing off becomes due now, its attempts kept.

create or replace function recording_finalize.operator_retry(
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
            message = format('retry: recording %s has no finalize row', p_recording_id);
    end if;
    if v_row.status <> 'Pending' then
        raise exception using
            errcode = 'RF020',
            message = format(
                'retry: the finalize row of recording %s is %s, not Pending',
                p_recording_id, v_row.status
            ),
            hint = 'A Quarantined row is handed back with requeue; a Done row is finished.';
    end if;
    perform recording_finalize.record_operator_action(
        p_recording_id, 'retry', p_operator, p_reason,
        jsonb_build_object('attempts', v_row.attempts, 'nextAttemptAt', v_row.next_attempt_at,
            'lastError', v_row.last_error)
    );
    return query
    update messenger.recording_finalize_attempts as f
    set next_attempt_at = least(f.next_attempt_at, now()),
        updated_at = now()
    where f.id = v_row.id
    returning f.recording_id, f.status::text, f.attempts, f.next_attempt_at, f.last_error::text;
end
$$;

comment on function recording_finalize.operator_retry(uuid, text, text) is
'Audited retry of a Pending row (typically backing off): next_attempt_at = least(itself, now()) '
'so the next cycle claims it; attempts, last_error and the claim are kept (a claim in flight '
'still applies its verdict). One operator audit row (action retry) in the same transaction. '
'RF005 without a finalize row, RF020 when the row is not Pending, RF001 for an empty operator '
'or reason. Operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.operator_retry(uuid, text, text) from public;
grant execute on function recording_finalize.operator_retry(uuid, text, text)
to recording_finalize_operator;
