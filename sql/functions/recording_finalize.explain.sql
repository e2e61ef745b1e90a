-- Everything the database knows about one recording, and what the worker will do next.

create or replace function recording_finalize.explain(
    p_recording_id uuid,
    p_max_attempts integer default 8,
    p_sla_timeout interval default '30 minutes',
    p_topic text default 'pin.messenger.call-recording-available.v1'
)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
    v_rec messenger.call_recordings%rowtype;
    v_row messenger.recording_finalize_attempts%rowtype;
    v_has_row boolean;
    v_session jsonb;
    v_ended_at timestamptz;
    v_outbox jsonb;
    v_pruned jsonb;
    v_realtime jsonb;
    v_actions jsonb;
    v_pred record;
    v_next jsonb;
    v_kind text;
    v_session_id uuid;
begin
    if p_max_attempts is null or p_max_attempts < 1
        or p_sla_timeout is null or p_sla_timeout <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('explain: p_max_attempts must be > 0 and p_sla_timeout > 0, got %s '
                'and %s', p_max_attempts, p_sla_timeout);
    end if;
    select r.* into v_rec from messenger.call_recordings as r where r.id = p_recording_id;
    select f.* into v_row from messenger.recording_finalize_attempts as f
    where f.recording_id = p_recording_id;
    v_has_row := found;
    if v_rec.id is null and not v_has_row then
        raise exception using
            errcode = 'RF021',
            message = format('explain: no recording and no finalize row with id %s',
                p_recording_id);
    end if;
    v_kind := coalesce(v_rec.session_kind, v_row.session_kind);
    v_session_id := coalesce(v_rec.session_id, v_row.session_id);

    if v_kind = 'Direct' then
        select jsonb_build_object('kind', v_kind, 'id', s.id, 'startedAt', s.started_at,
            'endedAt', s.ended_at, 'slaDueAt', s.ended_at + p_sla_timeout), s.ended_at
        into v_session, v_ended_at
        from messenger.call_sessions as s where s.id = v_session_id;
    else
        select jsonb_build_object('kind', v_kind, 'id', s.id, 'startedAt', s.started_at,
            'endedAt', s.ended_at, 'slaDueAt', s.ended_at + p_sla_timeout), s.ended_at
        into v_session, v_ended_at
        from messenger.conference_sessions as s where s.id = v_session_id;
    end if;

    select jsonb_build_object('id', o.id, 'createdAt', o.created_at,
        'publishedAt', o.published_at, 'eventId', o.headers ->> 'event-id',
        'leasedUntil', o.relay_lease_until)
    into v_outbox
    from messenger.integration_outbox as o
    where o.topic = p_topic and o.dedupe_key = p_recording_id::text;
    select jsonb_build_object('publishedAt', m.published_at, 'prunedAt', m.pruned_at)
    into v_pruned
    from messenger.integration_outbox_pruned as m
    where m.topic = p_topic and m.dedupe_key = p_recording_id::text;

    select coalesce(jsonb_agg(jsonb_build_object('kind', t.kind, 'createdAt', t.created_at,
        'dispatchedAt', t.dispatched_at) order by t.id), '[]')
    into v_realtime
    from messenger.realtime_outbox as t where t.reference_id = p_recording_id;

    select coalesce(jsonb_agg(jsonb_build_object(
        'action', a.action_kind, 'operator', a.operator_name,
        'reason', a.reason, 'at', a.created_at, 'detail', a.detail) order by a.id), '[]')
    into v_actions
    from messenger.recording_finalize_operator_actions as a
    where a.recording_id = p_recording_id;

    -- What happens next, in the worker's terms.
    if not v_has_row then
        if v_rec.status in ('Available', 'Failed') then
            v_next := jsonb_build_object('action', 'none', 'text', format(
                'nothing: the recording is %s and has no finalize row', v_rec.status));
        elsif v_ended_at is not null and v_ended_at + p_sla_timeout <= now() then
            v_next := jsonb_build_object('action', 'none', 'orphan', true, 'text',
                'nothing: the session ended past the SLA but there is no finalize row (an '
                'orphan the worker cannot see); recording-finalize audit --repair opens one');
        else
            v_next := jsonb_build_object('action', 'none', 'text',
                'nothing yet: the finalize row is opened when the recording stops or its '
                'session ends');
        end if;
    elsif v_row.status = 'Done' then
        v_next := jsonb_build_object('action', 'none', 'text',
            'nothing: the finalize row is Done');
    elsif v_row.status = 'Quarantined' then
        v_next := jsonb_build_object('action', 'none', 'text', format(
            'nothing until an operator requeues it: quarantined (%s)',
            coalesce(v_row.quarantine_reason, 'reason unknown')));
    else
        select p.* into v_pred from recording_finalize.predict_action(
            p_recording_id, p_max_attempts, p_sla_timeout, p_topic
        ) as p;
        v_next := jsonb_build_object(
            'action', v_pred.action,
            'detail', v_pred.detail,
            'at', greatest(v_row.next_attempt_at, now()),
            'due', v_row.next_attempt_at <= now(),
            'attempt', v_pred.attempts,
            'maxAttempts', p_max_attempts,
            'text', format('%s %s',
                case when v_row.next_attempt_at <= now() then 'on the next cycle:'
                    else format('at %s (in %s s):',
                        recording_finalize.iso_utc(v_row.next_attempt_at),
                        ceil(extract(epoch from v_row.next_attempt_at - now()))) end,
                case v_pred.action
                    when 'reconcile' then format('check the binary in S3 (attempt %s of %s)',
                        v_pred.attempts, p_max_attempts)
                    when 'republished' then 'enqueue its lost event again and close the row'
                    when 'closed' then 'close the row (the recording is terminal)'
                    when 'deferred' then case v_pred.detail
                        when 'SessionNotEnded' then 'wait: the session has not ended'
                        else format('wait for the SLA (session ended + %s)', p_sla_timeout) end
                    else format('quarantine it (%s)', v_pred.detail)
                end)
        );
    end if;

    return jsonb_build_object(
        'recordingId', p_recording_id,
        'recording', case when v_rec.id is null then null else jsonb_build_object(
            'status', v_rec.status, 'version', v_rec.version, 'mediaType', v_rec.media_type,
            'trigger', v_rec.trigger, 'fileId', v_rec.file_id, 'sizeBytes', v_rec.size_bytes,
            'durationSeconds', v_rec.duration_seconds, 'format', v_rec.format,
            'failureReason', v_rec.failure_reason, 'startedAt', v_rec.started_at,
            'endedAt', v_rec.ended_at, 'availableAt', v_rec.available_at,
            'failedAt', v_rec.failed_at, 'createdAt', v_rec.created_at,
            'updatedAt', v_rec.updated_at) end,
        'session', coalesce(v_session, jsonb_build_object('kind', v_kind, 'id', v_session_id,
            'found', false)),
        'finalize', case when not v_has_row then null else jsonb_build_object(
            'status', v_row.status, 'attempts', v_row.attempts,
            'nextAttemptAt', v_row.next_attempt_at, 'lastError', v_row.last_error,
            'quarantineReason', case when v_row.status = 'Quarantined'
                then v_row.quarantine_reason end,
            'claimedAt', v_row.claimed_at, 'createdAt', v_row.created_at,
            'updatedAt', v_row.updated_at) end,
        'outbox', coalesce(v_outbox, case when v_pruned is not null
            then v_pruned || jsonb_build_object('pruned', true) end),
        'realtime', v_realtime,
        'operatorActions', v_actions,
        'next', v_next
    );
end
$$;

comment on function recording_finalize.explain(uuid, integer, interval, text) is
'Read-only. One JSON document about p_recording_id: recording (status, version, times, file '
'metadata), session (ended, slaDueAt), finalize row (attempts, next attempt, last_error, '
'quarantineReason), its integration-outbox row (or the pruned marker), realtime rows, the '
'operator audit trail, and next: what the worker will do and when (same rules as claim_due). '
'RF021 when neither a recording nor a finalize row has this id; RF001 for bad settings. '
'Operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.explain(uuid, integer, interval, text) from public;
grant execute on function recording_finalize.explain(uuid, integer, interval, text)
to recording_finalize_operator;
