-- Records the S3 verdict of one claimed row: transition, finalize row and outboxes at once.

create or replace function recording_finalize.apply_outcome(
    p_recording_id uuid,
    p_claim_token uuid,
    p_outcome text,
    p_file_id text default null,
    p_size_bytes bigint default null,
    p_duration_seconds integer default null,
    p_format text default null,
    p_error text default null,
    p_max_attempts integer default 8,
    p_topic text default null,
    p_upload_grace interval default '30 minutes'
)
returns table (result text, finalize_status text, attempts integer)
language plpgsql
volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
    v_rec messenger.call_recordings%rowtype;
    v_row messenger.recording_finalize_attempts%rowtype;
    v_defer record;
    -- last_error holds an error class and code: never a URL, never more than the column takes.
    v_error text := left(
        regexp_replace(
            coalesce(p_error, ''), '[A-Za-z][A-Za-z0-9+.-]*://[^[:space:]]*', '<url>', 'g'
        ),
        400
    );
    v_topic text := recording_finalize.our_topic(p_topic);
begin
    perform recording_finalize.check_policy(p_max_attempts);
    if p_outcome is null
        or p_outcome not in ('found', 'missing', 'transient', 'invalid_metadata', 'config_error') then
        raise exception using
            errcode = 'RF001',
            message = format(
                'apply_outcome: p_outcome must be found, missing, transient, invalid_metadata or '
                'config_error, got %s', coalesce(p_outcome, 'NULL')
            );
    end if;
    if p_max_attempts is null or p_max_attempts < 1 then
        raise exception using
            errcode = 'RF001',
            message = format('apply_outcome: p_max_attempts must be > 0, got %s', p_max_attempts);
    end if;

    -- Lock order everywhere: session, recording, finalize row (the session is only read).
    select r.* into v_rec from messenger.call_recordings as r
    where r.id = p_recording_id
    for no key update;

    select f.* into v_row from messenger.recording_finalize_attempts as f
    where f.recording_id = p_recording_id
    for no key update;

    -- Another runner re-claimed the row, or it was settled meanwhile: this verdict is stale.
    if not found or v_row.status <> 'Pending' or v_row.claim_token is distinct from p_claim_token
        or p_claim_token is null then
        result := 'stale';
        finalize_status := v_row.status;
        attempts := v_row.attempts;
        return next;
        return;
    end if;

    if v_rec.id is null then
        perform recording_finalize.settle_finalize_row(
            p_recording_id, 'Quarantined', 'RecordingNotFound: no call_recordings row with this id'
        );
        result := 'quarantined';
        finalize_status := 'Quarantined';
        attempts := v_row.attempts;
        return next;
        return;
    end if;

    -- Status guard (under the row lock taken above): a terminal recording is never rewritten
    -- (the ingest callback won the race). The version is not compared: a non-terminal step in
    -- between (session_ended: Recording -> Uploading) must not make the verdict stale.
    if v_rec.status in ('Available', 'Failed') then
        if v_rec.status = 'Available' then
            perform recording_finalize.enqueue_available(v_rec.id, v_topic);
        end if;
        perform recording_finalize.settle_finalize_row(p_recording_id, 'Done');
        result := 'terminal';
        finalize_status := 'Done';
        attempts := v_row.attempts;
        return next;
        return;
    end if;

    if p_outcome = 'found' then
        perform recording_finalize.transition_available(
            p_recording_id, p_file_id, p_size_bytes, p_duration_seconds, p_format, v_topic
        );
        perform recording_finalize.settle_finalize_row(p_recording_id, 'Done');
        result := 'reconciled';
        finalize_status := 'Done';

    elsif p_outcome = 'missing' then
        -- A 404 during or just after a storage incident may be an upload still catching up:
        -- recording_finalize.upload_deferral holds the rule. Deferred: attempt given back.
        select d.* into v_defer
        from recording_finalize.upload_deferral(p_recording_id, p_upload_grace) as d;
        if v_defer.defer_until is not null then
            update messenger.recording_finalize_attempts as f
            set attempts = greatest(f.attempts - 1, 0), next_attempt_at = v_defer.defer_until,
                claim_token = null, last_error = v_defer.reason, updated_at = now()
            where f.id = v_row.id;
            result := 'deferred';
            finalize_status := 'Pending';
            attempts := greatest(v_row.attempts - 1, 0);
            return next;
            return;
        end if;
        update messenger.call_recordings as r
        set status = 'Failed',
            failure_reason = 'Timeout',
            failed_at = now(),
            ended_at = coalesce(r.ended_at, now()),
            version = r.version + 1,
            updated_at = now()
        where r.id = p_recording_id;
        insert into messenger.realtime_outbox (kind, session_kind, session_id, reference_id, payload)
        values (
            'RecordingFailed', v_rec.session_kind, v_rec.session_id, v_rec.id,
            jsonb_build_object('recordingId', v_rec.id, 'status', 'Failed', 'reason', 'Timeout')
        )
        on conflict (reference_id, kind)
        where kind in ('RecordingAvailable', 'RecordingFailed')
        do nothing;
        perform recording_finalize.settle_finalize_row(
            p_recording_id, 'Done', 'Timeout: no object in file storage after the SLA'
        );
        result := 'failed';
        finalize_status := 'Done';

    elsif p_outcome = 'transient' then
        -- next_attempt_at was already pushed by the claim; only quarantine is decided here.
        if v_row.attempts >= p_max_attempts then
            perform recording_finalize.settle_finalize_row(
                p_recording_id, 'Quarantined',
                'Transient: ' || coalesce(nullif(v_error, ''), 'unspecified')
            );
            finalize_status := 'Quarantined';
            result := 'quarantined';
        else
            update messenger.recording_finalize_attempts as f
            set claim_token = null,
                last_error = 'Transient: ' || coalesce(nullif(v_error, ''), 'unspecified'),
                updated_at = now()
            where f.id = v_row.id;
            finalize_status := 'Pending';
            result := 'backoff';
        end if;

    elsif p_outcome = 'invalid_metadata' then
        perform recording_finalize.settle_finalize_row(
            p_recording_id, 'Quarantined',
            'InvalidMetadata: ' || coalesce(nullif(v_error, ''), 'unspecified')
        );
        result := 'quarantined';
        finalize_status := 'Quarantined';

    else  -- config_error: the deployment is wrong, not the recording; give the attempt back.
        update messenger.recording_finalize_attempts as f
        set attempts = greatest(f.attempts - 1, 0),
            next_attempt_at = now(),
            claim_token = null,
            last_error = 'ConfigError: ' || coalesce(nullif(v_error, ''), 'unspecified'),
            updated_at = now()
        where f.id = v_row.id;
        result := 'released';
        finalize_status := 'Pending';
        attempts := greatest(v_row.attempts - 1, 0);
        return next;
        return;
    end if;

    attempts := v_row.attempts;
    return next;
end
$$;

comment on function recording_finalize.apply_outcome(
    uuid, uuid, text, text, bigint, integer, text, text, integer, text, interval
) is
'One call, one transaction per reconciled row. p_outcome: '
'found - recording -> Available with the adopted metadata, event + realtime RecordingAvailable, '
'row Done (RF002 if the metadata is unusable); '
'missing - recording -> Failed (Timeout), realtime RecordingFailed, row Done; unless a storage '
'incident overlapping its upload window is open or ended less than p_upload_grace ago '
'(recording_finalize.upload_deferral): then result deferred, the attempt is given back, the row '
'is due at incident end + p_upload_grace and last_error names the incident; '
'transient - row stays Pending on the backoff set at claim, Quarantined once attempts >= '
'p_max_attempts; invalid_metadata - row Quarantined, recording untouched; '
'config_error - the attempt is given back and the row is due again. '
'result is reconciled | failed | backoff | quarantined | released, or a no-op: stale (the claim '
'token no longer matches: another runner re-claimed or settled the row) and terminal (the '
'recording is already Available/Failed: never rewritten; row closed - a status guard under '
'the recording''s row lock; the claim''s recording_version is not compared). p_error is stored '
'as last_error with URLs masked; a settle without an error keeps the last one. Locks the '
'recording, then the finalize row (FOR NO KEY UPDATE). RF001 for an unknown outcome, RF010 for '
'p_max_attempts above the server''s bound (check_policy), RF009 for a p_topic other than the '
'server''s (NULL = the server''s topic; our_topic); RF001 for missing when p_upload_grace '
'is not > 0. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.apply_outcome(
    uuid, uuid, text, text, bigint, integer, text, text, integer, text, interval
) from public;
grant execute on function recording_finalize.apply_outcome(
    uuid, uuid, text, text, bigint, integer, text, text, integer, text, interval
) to recording_finalize_worker;
