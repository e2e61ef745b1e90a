-- Runbook: hands a quarantined row back to the worker after a human looked at it.

create or replace function recording_finalize.requeue(p_recording_id uuid)
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
    v_status text;
begin
    select f.status into v_status
    from messenger.recording_finalize_attempts as f
    where f.recording_id = p_recording_id
    for no key update;
    if not found then
        raise exception using
            errcode = 'RF005',
            message = format('requeue: recording %s has no finalize row', p_recording_id);
    end if;
    if v_status <> 'Quarantined' then
        raise exception using
            errcode = 'RF006',
            message = format(
                'requeue: the finalize row of recording %s is %s, not Quarantined',
                p_recording_id, v_status
            ),
            hint = 'Only quarantined rows are re-enqueued; Pending rows are already scheduled.';
    end if;

    -- last_error stays: it is the record of why a human had to step in.
    return query
    update messenger.recording_finalize_attempts as f
    set status = 'Pending',
        attempts = 0,
        next_attempt_at = now(),
        claim_token = null,
        updated_at = now()
    where f.recording_id = p_recording_id
    returning f.recording_id, f.status::text, f.attempts, f.next_attempt_at, f.last_error::text;
end
$$;

comment on function recording_finalize.requeue(uuid) is
'Runbook re-enqueue: Quarantined -> Pending, attempts = 0, due now; last_error is kept. '
'Returns the row as it now is. RF005 when the recording has no finalize row, RF006 when the row '
'is not Quarantined. Owner only (SECURITY DEFINER): operators use the audited '
'operator_requeue, which records who did it and why.';

-- The worker had it before migration 0004, the operator role until 0010's audited
-- operator_requeue: an unaudited requeue is left to the owner.
revoke all on function recording_finalize.requeue(uuid)
from public, recording_finalize_worker, recording_finalize_operator;
