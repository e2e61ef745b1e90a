-- Says what claim_due would do with one finalize row, without locking or writing anything.

create or replace function recording_finalize.predict_action(
    p_recording_id uuid,
    p_max_attempts integer,
    p_sla_timeout interval,
    p_topic text
)
returns table (action text, attempts integer, detail text, session_ended_at timestamptz)
language plpgsql
stable
set search_path = ''
as $$
#variable_conflict use_column
declare
    v_row messenger.recording_finalize_attempts%rowtype;
    v_rec messenger.call_recordings%rowtype;
    v_found boolean;
    v_ended_at timestamptz;
begin
    select f.* into v_row from messenger.recording_finalize_attempts as f
    where f.recording_id = p_recording_id;
    if not found then
        return;
    end if;
    attempts := v_row.attempts;
    select r.* into v_rec from messenger.call_recordings as r where r.id = p_recording_id;
    if not found then
        action := 'quarantined';
        detail := 'RecordingNotFound';
        return next;
        return;
    end if;
    if v_rec.status in ('Available', 'Failed') then
        -- claim_due's republish: enqueue_available writes the event only when none exists.
        action := case
            when v_rec.status = 'Available'
                and not exists (
                    select from messenger.integration_outbox as o
                    where o.topic = p_topic and o.dedupe_key = v_rec.id::text
                )
                and not exists (
                    select from messenger.integration_outbox_pruned as m
                    where m.topic = p_topic and m.dedupe_key = v_rec.id::text
                )
                then 'republished'
            else 'closed'
        end;
        attempts := v_row.attempts + 1;
        detail := v_rec.status;
        return next;
        return;
    end if;
    if v_rec.session_kind = 'Direct' then
        select true, s.ended_at into v_found, v_ended_at
        from messenger.call_sessions as s where s.id = v_rec.session_id;
    else
        select true, s.ended_at into v_found, v_ended_at
        from messenger.conference_sessions as s where s.id = v_rec.session_id;
    end if;
    session_ended_at := v_ended_at;
    if v_found is null then
        action := 'quarantined';
        detail := 'SessionNotFound';
    elsif v_ended_at is null or v_ended_at + p_sla_timeout > now() then
        action := 'deferred';
        detail := case when v_ended_at is null then 'SessionNotEnded' else 'WithinSla' end;
    elsif v_row.attempts >= p_max_attempts then
        action := 'quarantined';
        detail := 'MaxAttemptsExceeded';
    else
        action := 'reconcile';
        attempts := v_row.attempts + 1;
        detail := v_rec.status;
    end if;
    return next;
end
$$;

comment on function recording_finalize.predict_action(uuid, integer, interval, text) is
'Internal, read-only. What claim_due would do with the finalize row of p_recording_id if it '
'claimed it now, with the same rules and the same action/detail vocabulary (reconcile, '
'republished, closed, deferred, quarantined), and attempts as the claim would leave them. '
'No row when the recording has no finalize row. Takes no lock, writes nothing; rows locked by '
'another runner are predicted as if they were free. Raises nothing.';

revoke all on function recording_finalize.predict_action(uuid, integer, interval, text)
from public;
