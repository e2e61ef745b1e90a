-- Records the file-storage verdict of one claimed row: recording, finalize row and outboxes, at
-- once.

create or replace function recording_finalize.apply_outcome(
    p_recording_id uuid,
    p_claim_token uuid,
    p_outcome text,
    p_file_id text default null,
    p_size_bytes bigint default null,
    p_duration_seconds integer default null,
    p_format text default null,
    p_error text default null,
    -- What the cycle saw of the storage as a whole: outcome_decision believes a 404 by it.
    p_bucket_confirmed boolean default null,
    p_objects_found integer default null,
    p_known_missing integer default null,
    p_known_other integer default null
)
returns table (result text, finalize_status text, attempts integer, detail text)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
-- Every wait on a service row or key is short and the worker is the one that gives up: well
-- below any deadlock_timeout, so in a deadlock with a service transaction ours is the one that
-- ends (see "busy" below) and the service's commits.
set lock_timeout = '100ms'
as $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    -- last_error holds an error class and code: never a URL, never more than the column takes.
    v_error text := recording_finalize_internal.mask_urls(p_error, 400);
    v_row messenger.recording_finalize_attempts%rowtype;
    v_rec recording_finalize_internal.recording;
    v_session recording_finalize_internal.session;
    -- The recording as locked, with its session.
    v_locked record;
    v_decision record;
    v_busy boolean := false;
    -- True while the found metadata is being written: a CHECK it breaks is the recording's.
    v_adopting boolean := false;
    v_constraint text;
    v_table text;
    v_schema text;
    v_context text;
begin
    if p_outcome is null
        or p_outcome not in ('found', 'missing', 'transient', 'invalid_metadata', 'config_error')
    then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: apply_outcome: p_outcome must be found, missing, '
                'transient, invalid_metadata or config_error, got %s', coalesce(p_outcome, 'NULL'));
    end if;

    -- The product's own row first, without waiting: a row another transaction is settling (the
    -- ingest callback) or that another runner re-claimed is not this verdict's any more.
    select f.* into v_row from messenger.recording_finalize_attempts as f
    where f.recording_id = p_recording_id
    for no key update skip locked;
    if not found or v_row.status <> 'Pending' or p_claim_token is null
        or v_row.claim_token is distinct from p_claim_token then
        result := 'stale';
        finalize_status := v_row.status;
        attempts := v_row.attempts;
        return next;
        return;
    end if;

    -- Everything that touches the service's rows, in one subtransaction: a lock that cannot be
    -- had quickly undoes it whole and the attempt is given back.
    begin
        -- Through the adapter: a locking clause on its recordings view locks the service's row,
        -- and the same statement reads it as locked (recording_row's columns, in step with the
        -- type recording_finalize_internal.recording) with its session
        -- (only read): one statement where a lock and two reads would be three, on the path
        -- every reconciled row takes.
        select row(r.id, r.session_kind, r.session_id, r.media_type, r.trigger, r.status,
                r.file_id, r.size_bytes, r.duration_seconds, r.format, r.failure_reason,
                r.started_at, r.ended_at, r.available_at, null::timestamptz, null::integer,
                null::timestamptz, null::timestamptz)::recording_finalize_internal.recording
                as rec,
            s as session
        into v_locked
        from recording_finalize_adapter.recordings as r
        left join lateral recording_finalize_internal.session_row(r.session_kind, r.session_id)
            as s on true
        where r.id = p_recording_id
        for no key update of r skip locked;
        if not found then
            -- Held by another transaction, or not there at all.
            v_busy := exists (
                select from recording_finalize_adapter.recordings as r where r.id = p_recording_id
            );
        end if;
        v_rec := v_locked.rec;
        v_session := v_locked.session;
        if v_rec.id is null and not v_busy then
            select 'quarantined' as result, 'Quarantined' as finalize_status,
                v_row.attempts as attempts, null::timestamptz as next_attempt_at,
                'RecordingNotFound: recording_finalize_adapter.recordings shows no recording '
                    'with this id' as last_error,
                'recording_not_found' as quarantine_reason
            into v_decision;
        elsif v_busy then
            null;  -- held by another transaction: given back below
        elsif v_rec.status in ('Available', 'Failed') then
            -- Status guard: a terminal recording is never rewritten (the ingest callback won
            -- the race); an Available one gets its event if it has none - while republishing is
            -- trusted: otherwise the service made it Available and its event is the service's
            -- (an outbox that deletes what it delivered shows nothing of it).
            if v_rec.status = 'Available' and recording_finalize_internal.republish_trusted()
                and coalesce(v_rec.available_at
                    >= recording_finalize_internal.service_events_remembered_from(), true)
            then
                perform recording_finalize_internal.enqueue_available(
                    v_rec,
                    recording_finalize_internal.session_of(v_rec.session_kind, v_rec.session_id),
                    v_policy.topic);
            end if;
            select 'terminal' as result, 'Done' as finalize_status, v_row.attempts as attempts,
                null::timestamptz as next_attempt_at, null::text as last_error,
                null::text as quarantine_reason
            into v_decision;
        else
            select d.* into v_decision
            from recording_finalize_internal.outcome_decision(
                p_outcome,
                case when p_outcome = 'found' then recording_finalize_internal.metadata_problem(
                    p_file_id, p_size_bytes, p_duration_seconds, p_format) end,
                v_error,
                v_row.attempts,
                v_policy.max_attempts,
                -- The upload window opens when the recording stopped or its session ended.
                least(v_rec.ended_at, v_session.ended_at),
                v_policy.upload_grace,
                v_policy.upload_grace_max,
                now(),
                p_bucket_confirmed,
                p_objects_found,
                p_known_missing,
                p_known_other
            ) as d;
            if v_decision.result = 'reconciled' then
                v_adopting := true;
                -- Called as a condition, not by PERFORM: a call in an expression starts no
                -- executor of its own, and every reconciled row comes here. Its answer (whether
                -- the event is new) changes nothing in this row.
                if recording_finalize_internal.transition_available(
                    p_recording_id, v_rec.status, p_file_id, p_size_bytes, p_duration_seconds,
                    p_format, v_session, v_policy.topic)
                then
                end if;
                v_adopting := false;
            elsif v_decision.result = 'failed' then
                -- The recording is locked: only a port that does not move it fails here.
                if not recording_finalize_adapter.make_failed(
                    p_recording_id, v_rec.status, 'Timeout', now())
                then
                    raise exception using
                        errcode = 'RF007',
                        message = format('recording_conflict: recording_finalize_adapter.'
                            'make_failed did not move recording %s from %s', p_recording_id,
                            v_rec.status);
                end if;
                perform recording_finalize_adapter.enqueue_realtime(
                    'RecordingFailed', v_rec.session_kind, v_rec.session_id, v_rec.id,
                    jsonb_build_object('recordingId', v_rec.id, 'status', 'Failed',
                        'reason', 'Timeout'));
            end if;
        end if;
    exception
        when lock_not_available or deadlock_detected then
            v_busy := true;
        when check_violation or string_data_right_truncation then
            -- The service's table refused metadata the product found usable: its own rule, and
            -- this recording's - but only when the make_available port (or what fires beneath
            -- it) refused it. Any other write it refuses (make_failed, the realtime push, the
            -- event) refuses every row: raised, so the worker stops the cycle and gives the
            -- attempts back: a schema that refuses every row is no single recording's fault.
            get stacked diagnostics v_constraint = constraint_name, v_table = table_name,
                v_schema = schema_name, v_context = pg_exception_context;
            if not v_adopting or v_context not like '%make_available%' then
                raise;
            end if;
            select 'quarantined' as result, 'Quarantined' as finalize_status,
                v_row.attempts as attempts, null::timestamptz as next_attempt_at,
                format('InvalidMetadata: refused by %s (%s)',
                    coalesce(nullif(v_schema || '.' || v_table, '.'), 'the recordings table'),
                    coalesce(nullif(v_constraint, ''), 'a column length')) as last_error,
                'invalid_metadata' as quarantine_reason
            into v_decision;
    end;

    if v_busy then
        -- A service transaction holds the recording (or the event's key): it goes first; this
        -- attempt did not count, and the row is tried again after the backoff base.
        update messenger.recording_finalize_attempts as f
        set attempts = greatest(f.attempts - 1, 0),
            next_attempt_at = now() + v_policy.backoff_base,
            claim_token = null,
            last_error = 'Busy: the recording was held by another transaction; attempt given back',
            updated_at = now()
        where f.id = v_row.id
        returning 'busy', f.status, f.attempts, f.last_error
        into result, finalize_status, attempts, detail;
        return next;
        return;
    end if;

    update messenger.recording_finalize_attempts as f
    set status = v_decision.finalize_status,
        attempts = v_decision.attempts,
        next_attempt_at = coalesce(v_decision.next_attempt_at, f.next_attempt_at),
        last_error = coalesce(left(v_decision.last_error, 512), f.last_error),
        quarantine_reason = v_decision.quarantine_reason,
        last_outcome = p_outcome,
        claim_token = null,
        updated_at = now()
    where f.id = v_row.id;
    result := v_decision.result;
    finalize_status := v_decision.finalize_status;
    attempts := v_decision.attempts;
    detail := v_decision.last_error;
    return next;
end
$$;

comment on function recording_finalize.apply_outcome(
    uuid, uuid, text, text, bigint, integer, text, text, boolean, integer, integer, integer
) is
'One call, one transaction per reconciled row: recording_finalize_internal.outcome_decision '
'decides, this carries it out on the recording, the finalize row and both outboxes, all or '
'nothing. p_outcome found (with the file metadata as the object says it, judged by '
'metadata_problem here; a value the driver could not convert is NULL and p_error says what it '
'saw), missing, transient, invalid_metadata or config_error (RF001 otherwise); p_error is '
'stored in last_error with URLs masked. p_bucket_confirmed, p_objects_found, p_known_missing, '
'p_known_other: what the cycle saw of the storage as a whole (its HeadBucket, the objects its '
'HEADs found, the known uploads'' HEADs; NULL: not reported), by which outcome_decision decides '
'whether a 404 is believed: a 404 with the bucket unconfirmed is read as transient, one while '
'the known uploads all answered 404 as config_error (KeyLayoutUnconfirmed). result: '
'reconciled (Available, event and realtime row, row Done), failed (Failed '
'Timeout, realtime row, row Done), deferred_by_incident (a 404 while storage is not trusted: '
'attempt given back, due at incident end + grace), backoff, held_by_incident (transient while '
'the worker''s own incident is open: attempt given back), quarantined (quarantine_reason set; '
'found metadata that metadata_problem refuses, or that the service''s own constraints refuse '
'while the make_available port writes it, is quarantined invalid_metadata, never raised; a CHECK '
'or column length that refuses any other write - make_failed, the realtime push - refuses every '
'row and is raised), config_error_released (attempt given back, due now); and the '
'no-ops: stale (the claim token no longer matches: re-claimed or settled meanwhile), terminal '
'(the recording is already Available/Failed: never rewritten, row closed; an Available one '
'without an event gets the product''s only while republish_trusted()), busy (another '
'transaction held the recording, or the product''s event key for longer than 100 ms: nothing '
'written '
'but the give-back; due again after the backoff base). detail is the last_error written. Locks: '
'the finalize row SKIP LOCKED, then the recording SKIP LOCKED; a unique-key wait is cut at '
'lock_timeout 100 ms, so a service transaction is never the one that fails. The policy: '
'the stored one (recording_finalize.policy, set_policy). Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.apply_outcome(
    uuid, uuid, text, text, bigint, integer, text, text, boolean, integer, integer, integer
) from public;
grant execute on function recording_finalize.apply_outcome(
    uuid, uuid, text, text, bigint, integer, text, text, boolean, integer, integer, integer
) to recording_finalize_worker;
