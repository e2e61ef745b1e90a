-- The runbook's requeue of one quarantined row: the manual re-enqueue a person does once they
-- have looked.

create or replace function recording_finalize.requeue(
    p_recording_id uuid,
    p_reason text default 'recording_finalize.requeue()'
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
set search_path = pg_catalog, pg_temp
as $$
begin
    return query
    select r.recording_id, r.status, r.attempts, r.next_attempt_at, r.last_error
    from recording_finalize.reschedule(
        array[p_recording_id], 'Quarantined', session_user::text, p_reason, true
    ) as r;
end
$$;

comment on function recording_finalize.requeue(uuid, text) is
'The runbook''s re-enqueue: Quarantined -> Pending, attempts = 0, due now, '
'audited with the login as operator; exactly reschedule(array[p_recording_id], ''Quarantined'', '
'session_user, p_reason, true). RF005 no finalize row, RF006 not Quarantined. Operator API '
'(SECURITY DEFINER).';

revoke all on function recording_finalize.requeue(uuid, text) from public;
grant execute on function recording_finalize.requeue(uuid, text) to recording_finalize_operator;
