-- Everything the database knows about one recording, and what the worker will do next.

create or replace function recording_finalize.explain(
    p_recording_id uuid
)
returns jsonb
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    -- Asked once: may an Available recording without an event we can see get one from us?
    v_republish boolean := recording_finalize_internal.republish_trusted();
    v_rec recording_finalize_internal.recording;
    v_row messenger.recording_finalize_attempts%rowtype;
    v_has_row boolean;
    v_kind text;
    v_session_id uuid;
    v_session recording_finalize_internal.session;
    v_orphan boolean;
    v_at timestamptz;
    v_claim record;
    v_next jsonb;
begin
    select x.* into v_rec from recording_finalize_internal.recording_row(p_recording_id) as x;
    select f.* into v_row from messenger.recording_finalize_attempts as f
    where f.recording_id = p_recording_id;
    v_has_row := found;
    if v_rec.id is null and not v_has_row then
        raise exception using
            errcode = 'RF021',
            message = format('unknown_recording: explain: no recording and no finalize row with '
                'id %s', p_recording_id);
    end if;
    v_kind := coalesce(v_rec.session_kind, v_row.session_kind);
    v_session_id := coalesce(v_rec.session_id, v_row.session_id);
    -- A kind the adapter cannot give (its recordings view takes it from the session, which is
    -- gone) names no session: explain says so rather than fail on the lookup.
    if v_kind in ('Direct', 'Conference') then
        v_session := recording_finalize_internal.session_of(v_kind, v_session_id);
    end if;

    -- What happens next, decided as the worker will decide it (claim_decision) at the moment
    -- the row is due.
    if not v_has_row then
        v_orphan := exists (
            select from recording_finalize_internal.orphans(v_policy.sla_timeout) as o
            where o.recording_id = p_recording_id
        );
        v_next := jsonb_build_object('action', case when v_orphan then 'discover' else 'none' end,
            'orphan', v_orphan, 'text', case
                when v_rec.status = 'Available'
                    and not recording_finalize_internal.has_event(p_recording_id)
                then (
                    -- Republish discovery, as discover_unpublished judges it.
                    select case
                        when d.republish_window = interval '0' then 'nothing: it has no event, '
                            'and republish discovery is off (RFR_REPUBLISH_WINDOW=0)'
                        when recording_finalize_internal.service_events_pending_only()
                            then 'nothing: it has no event, and republish discovery holds: '
                            'recording_finalize_adapter.service_events shows pending events '
                            'only (its published_at is always NULL)'
                        when d.republish_held_since is not null then 'nothing: it has no event, '
                            'and ' || h.problem || '; way out: ' || h.fix
                        when v_rec.available_at <= d.republish_not_before then 'nothing: it has '
                            'no event, and it became Available before a republish hold ended '
                            '(what a hold kept back stays as it is)'
                        when v_rec.available_at
                            < recording_finalize_internal.service_events_remembered_from()
                        then 'nothing: it has no event that recording_finalize_adapter.'
                            'service_events shows, but that view shows no event as old as it '
                            '(the service''s outbox deletes delivered events after a while): '
                            'its event may have been sent, so it is left as it is'
                        when v_rec.available_at > now() - v_policy.sla_timeout then 'nothing '
                            'yet: it has no event; once it has been Available for the SLA, '
                            'republish discovery opens a finalize row and enqueues it'
                        when v_rec.available_at > now() - v_policy.sla_timeout
                            - coalesce(d.republish_window, interval '1 day')
                        then 'on the next cycle: it has no event, so republish discovery opens '
                            'a finalize row, due now, and the claim enqueues it'
                        else 'nothing: it has no event, but it became Available before the '
                            'republish window (RFR_REPUBLISH_WINDOW)'
                    end
                    from recording_finalize.discovery_sweep as d
                    cross join recording_finalize.republish_hold() as h
                )
                when v_rec.status in ('Available', 'Failed') then format(
                    'nothing: the recording is %s and has no finalize row', v_rec.status)
                when v_orphan then 'on the next cycle: the worker discovers it (its session '
                    'ended past the SLA and it has no finalize row) and opens one, due now'
                when v_session.id is null then format('nothing: recording_finalize_adapter.'
                    'sessions shows no session of it (kind %s, id %s), so discovery never finds '
                    'it stuck and opens no finalize row: a person must look (its session '
                    'restored, or the recording finalized through the service)',
                    coalesce(v_kind, 'unknown'), coalesce(v_session_id::text, 'unknown'))
                else 'nothing yet: a finalize row is opened when the recording stops or its '
                    'session ends, or by discovery once the session ended past the SLA'
            end);
    elsif v_row.status = 'Done' then
        v_next := jsonb_build_object('action', 'none', 'text', 'nothing: the finalize row is Done');
    elsif v_row.status = 'Quarantined' then
        v_next := jsonb_build_object('action', 'none', 'text', format(
            'nothing until an operator requeues it: quarantined (%s)', v_row.quarantine_reason));
    else
        v_at := greatest(v_row.next_attempt_at, now());
        select d.* into v_claim
        from recording_finalize_internal.claim_decision(
            v_rec.status,
            v_rec.status = 'Available' and recording_finalize_internal.has_event(p_recording_id),
            v_session.id is not null, v_session.ended_at, v_row.attempts, v_row.last_outcome,
            v_policy.max_attempts, v_policy.sla_timeout, v_at,
            p_republish => v_republish
                and coalesce(v_rec.available_at
                    >= recording_finalize_internal.service_events_remembered_from(), true)
        ) as d;
        v_next := jsonb_build_object(
            'action', v_claim.action,
            'detail', v_claim.detail,
            'quarantineReason', v_claim.quarantine_reason,
            'at', v_at,
            'due', v_row.next_attempt_at <= now(),
            'attempt', v_claim.attempts,
            'maxAttempts', v_policy.max_attempts,
            'text', format('%s %s',
                case when v_row.next_attempt_at <= now() then 'on the next cycle:'
                    else format('at %s (in %s s):', recording_finalize_internal.iso_utc(v_at),
                        ceil(extract(epoch from v_at - now()))) end,
                case v_claim.action
                    when 'reconcile' then format('check the binary in the file storage (attempt '
                        '%s of %s)', v_claim.attempts, v_policy.max_attempts)
                    when 'republished' then 'enqueue its lost event again and close the row'
                    when 'closed' then case v_claim.detail
                        when 'RepublishOff' then 'close the row without an event: the '
                            'recording is Available, and its event is the service''s to '
                            'publish while republishing is off or held, or while '
                            'recording_finalize_adapter.service_events shows no event as old as '
                            'it (an outbox that deletes delivered events after a while)'
                        else 'close the row (the recording is terminal)' end
                    when 'deferred_by_sla' then case v_claim.detail
                        when 'SessionNotEnded' then 'wait: the session has not ended'
                        else format('wait for the SLA (session ended + %s)',
                            v_policy.sla_timeout) end
                    else format('quarantine it (%s)', v_claim.quarantine_reason)
                end)
        );
    end if;

    return jsonb_build_object(
        'recordingId', p_recording_id,
        'recording', case when v_rec.id is not null then jsonb_build_object(
            'status', v_rec.status, 'version', v_rec.version, 'mediaType', v_rec.media_type,
            'trigger', v_rec.trigger, 'fileId', v_rec.file_id, 'sizeBytes', v_rec.size_bytes,
            'durationSeconds', v_rec.duration_seconds, 'format', v_rec.format,
            'failureReason', v_rec.failure_reason, 'startedAt', v_rec.started_at,
            'endedAt', v_rec.ended_at, 'availableAt', v_rec.available_at,
            'failedAt', v_rec.failed_at, 'createdAt', v_rec.created_at,
            'updatedAt', v_rec.updated_at) end,
        'session', case when v_session.id is not null then jsonb_build_object(
            'kind', v_kind, 'id', v_session.id, 'startedAt', v_session.started_at,
            'endedAt', v_session.ended_at,
            'slaDueAt', v_session.ended_at + v_policy.sla_timeout)
            else jsonb_build_object('kind', v_kind, 'id', v_session_id, 'found', false) end,
        'finalize', case when v_has_row then jsonb_build_object(
            'status', v_row.status, 'attempts', v_row.attempts,
            'nextAttemptAt', v_row.next_attempt_at, 'lastError', v_row.last_error,
            'lastOutcome', v_row.last_outcome, 'quarantineReason', v_row.quarantine_reason,
            'openedBy', v_row.opened_by, 'claimedAt', v_row.claimed_at,
            'createdAt', v_row.created_at, 'updatedAt', v_row.updated_at) end,
        'outbox', (
            select jsonb_build_object('id', o.id, 'createdAt', o.created_at,
                'publishedAt', o.published_at, 'eventId', o.headers ->> 'event-id',
                'leasedUntil', l.leased_until)
            from recording_finalize.outbox as o
            left join recording_finalize.relay_leases as l on l.outbox_id = o.id
            where o.recording_id = p_recording_id
        ),
        'serviceEvent', (
            select jsonb_build_object('enqueuedAt', e.enqueued_at, 'publishedAt', e.published_at)
            from recording_finalize_adapter.service_events as e
            where e.recording_id = p_recording_id
            limit 1
        ),
        'operatorActions', (
            select coalesce(jsonb_agg(jsonb_build_object('action', a.action_kind,
                'operator', a.operator_name, 'login', a.login_role, 'reason', a.reason,
                'at', a.created_at, 'detail', a.detail) order by a.id), '[]')
            from recording_finalize.operator_actions as a where a.recording_id = p_recording_id
        ),
        'next', v_next
    );
end
$$;

comment on function recording_finalize.explain(uuid) is
'Read-only: the recording and its session as the adapter shows them (with the SLA due time), its '
'finalize row, the product''s event (enqueued, published, event-id, lease) or the service''s '
'(service_events), the operators'' actions on it, '
'and next: what the worker will do and when, decided by recording_finalize_internal.claim_decision '
'(action reconcile, republished, closed, deferred_by_sla, quarantined; discover for an orphan the '
'next cycle''s discovery opens a row for; none). For a reconcile row the driver adds what the '
'file storage says now and asks preview_outcomes what that verdict would do. RF021 for an id that '
'is neither a recording nor a finalize row. The policy: the stored one. Operator API (SECURITY '
'DEFINER).';

revoke all on function recording_finalize.explain(uuid) from public;
grant execute on function recording_finalize.explain(uuid) to recording_finalize_operator;
