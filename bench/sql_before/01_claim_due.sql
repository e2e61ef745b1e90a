-- The body of recording_finalize.claim_due before issue 14 (main at f82ad26): one UPDATE per
-- claimed row.
-- Claims one batch of due finalize rows and settles every row that needs no file-storage check.

create or replace function recording_finalize.claim_due(
    p_batch_size integer default 100,
    p_max_attempts integer default 8,
    p_sla_timeout interval default '30 minutes',
    p_backoff_base interval default '1 minute',
    p_backoff_factor double precision default 2.0,
    p_backoff_cap interval default '15 minutes',
    p_backoff_jitter double precision default 0.1,
    p_topic text default null
)
returns table (
    recording_id uuid,
    session_kind text,
    session_id uuid,
    action text,
    attempts integer,
    claim_token uuid,
    recording_version integer,
    detail text
)
language plpgsql
volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
    v_pair record;
    v_row messenger.recording_finalize_attempts%rowtype;
    v_rec messenger.call_recordings%rowtype;
    v_session messenger.call_sessions%rowtype;
    v_token uuid;
    v_claimed integer := 0;
    v_topic text := recording_finalize.our_topic(p_topic);
begin
    perform recording_finalize.check_policy(
        p_max_attempts, p_sla_timeout, p_backoff_base, p_backoff_factor, p_backoff_cap,
        p_backoff_jitter
    );
    if p_batch_size is null or p_batch_size not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('claim_due: p_batch_size must be 1..10000, got %s', p_batch_size);
    end if;
    if p_max_attempts is null or p_max_attempts < 1 then
        raise exception using
            errcode = 'RF001',
            message = format('claim_due: p_max_attempts must be > 0, got %s', p_max_attempts);
    end if;
    if p_sla_timeout is null or p_sla_timeout <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('claim_due: p_sla_timeout must be > 0, got %s', p_sla_timeout);
    end if;
    -- Validates the backoff settings up front, before any row is touched.
    perform recording_finalize.backoff_delay(
        1, p_backoff_base, p_backoff_factor, p_backoff_cap, p_backoff_jitter
    );

    -- One statement locks each due row AND its recording, SKIP LOCKED on both, below the LIMIT
    -- (the plan is Limit -> LockRows -> join): a row whose recording an in-flight callback holds
    -- is skipped before it is counted, so a batch of n comes back with n rows whenever n are
    -- claimable, and a second runner gets a disjoint batch. Never waits, so taking the finalize
    -- row and the recording together cannot deadlock with the session -> recording -> finalize
    -- row order of the other functions. FOR NO KEY UPDATE: no key changes, and it still
    -- conflicts with every writer's FOR NO KEY UPDATE / UPDATE of the same rows.
    for v_pair in
        select f as frow, r as rrow
        from messenger.recording_finalize_attempts as f
        inner join messenger.call_recordings as r on r.id = f.recording_id
        where f.status = 'Pending' and f.next_attempt_at <= now()
        order by f.next_attempt_at
        limit p_batch_size
        for no key update of f, r skip locked
    loop
        v_claimed := v_claimed + 1;
        v_row := v_pair.frow;
        v_rec := v_pair.rrow;
        recording_id := v_row.recording_id;
        session_kind := v_row.session_kind;
        session_id := v_row.session_id;
        attempts := v_row.attempts;
        claim_token := null;
        -- Informational (logs): the version seen at claim. apply_outcome guards on the status
        -- under the row lock, which is what matters (terminal is never left).
        recording_version := v_rec.version;
        detail := null;

        -- Terminal recordings only need their row closed; an Available one without its event is
        -- the republish phase, settled right here without a round trip to the driver.
        if v_rec.status in ('Available', 'Failed') then
            if v_rec.status = 'Available'
                and recording_finalize.enqueue_available(v_rec.id, v_topic) then
                action := 'republished';
            else
                action := 'closed';
            end if;
            attempts := recording_finalize.settle_finalize_row(
                v_row.recording_id, 'Done', p_count_attempt => true
            );
            detail := v_rec.status;
            return next;
            continue;
        end if;

        v_session := recording_finalize.session_of(v_rec.session_kind, v_rec.session_id);
        if v_session.id is null then
            perform recording_finalize.settle_finalize_row(
                v_row.recording_id, 'Quarantined',
                format('SessionNotFound: no %s session %s', v_rec.session_kind, v_rec.session_id)
            );
            action := 'quarantined';
            detail := 'SessionNotFound';
            return next;
            continue;
        end if;

        -- Not ours yet: the happy path still has its SLA. No attempt is counted.
        if v_session.ended_at is null or v_session.ended_at + p_sla_timeout > now() then
            update messenger.recording_finalize_attempts as f
            set next_attempt_at = coalesce(v_session.ended_at, now()) + p_sla_timeout,
                updated_at = now()
            where f.id = v_row.id;
            action := 'deferred';
            detail := case when v_session.ended_at is null
                then 'SessionNotEnded' else 'WithinSla' end;
            return next;
            continue;
        end if;

        -- Pre-increment happened on every earlier claim, so a row that crashed the worker each
        -- time arrives here exhausted and is quarantined instead of handed out again.
        if v_row.attempts >= p_max_attempts then
            perform recording_finalize.settle_finalize_row(
                v_row.recording_id, 'Quarantined',
                format(
                    'MaxAttemptsExceeded: %s attempts; last error: %s',
                    v_row.attempts, coalesce(v_row.last_error, 'none recorded')
                )
            );
            action := 'quarantined';
            detail := 'MaxAttemptsExceeded';
            return next;
            continue;
        end if;

        v_token := gen_random_uuid();
        update messenger.recording_finalize_attempts as f
        set attempts = f.attempts + 1,
            next_attempt_at = now() + recording_finalize.backoff_delay(
                f.attempts + 1, p_backoff_base, p_backoff_factor, p_backoff_cap, p_backoff_jitter
            ),
            claim_token = v_token,
            claimed_at = now(),
            updated_at = now()
        where f.id = v_row.id;
        action := 'reconcile';
        attempts := v_row.attempts + 1;
        claim_token := v_token;
        detail := v_rec.status;
        return next;
    end loop;

    -- Rows whose recording does not exist (deleted by hand) cannot join above; the rest of the
    -- batch quarantines them, SKIP LOCKED as well. With a full batch they wait for the next claim.
    if v_claimed < p_batch_size then
        for v_row in
            select f.*
            from messenger.recording_finalize_attempts as f
            where f.status = 'Pending' and f.next_attempt_at <= now()
                and not exists (
                    select from messenger.call_recordings as r where r.id = f.recording_id
                )
            order by f.next_attempt_at
            limit p_batch_size - v_claimed
            for no key update of f skip locked
        loop
            perform recording_finalize.settle_finalize_row(
                v_row.recording_id, 'Quarantined',
                'RecordingNotFound: no call_recordings row with this id'
            );
            recording_id := v_row.recording_id;
            session_kind := v_row.session_kind;
            session_id := v_row.session_id;
            action := 'quarantined';
            attempts := v_row.attempts;
            claim_token := null;
            recording_version := null;
            detail := 'RecordingNotFound';
            return next;
        end loop;
    end if;
end
$$;

comment on function recording_finalize.claim_due(
    integer, integer, interval, interval, double precision, interval, double precision, text
) is
'One call per batch. Locks up to p_batch_size Pending rows with next_attempt_at <= now() in '
'next_attempt_at order together with their recordings, in one statement (FOR NO KEY UPDATE '
'OF f, r SKIP LOCKED below the LIMIT: a row whose recording an in-flight ingest callback '
'holds is skipped without costing the batch a place), and returns one row per claimed row '
'with its action: '
'reconcile - the driver must HEAD the object and call apply_outcome with claim_token; '
'attempts was incremented and next_attempt_at = now() + backoff_delay(attempts) before the '
'check (pre-increment, so a crash loop still ends in quarantine). '
'republished - recording Available without its event: event + realtime row enqueued, row Done. '
'closed - recording already Failed, or Available with its event: row Done. '
'deferred - session not ended, or ended less than p_sla_timeout ago: re-timed, attempt not '
'counted. quarantined - attempts >= p_max_attempts, or the recording/session does not exist '
'(rows without a recording are taken after the others, in what is left of the batch). '
'recording_version is the version seen at claim, for logs only. '
'Raises RF001 for out-of-range settings (batch 1..10000, max attempts > 0, SLA > 0, backoff '
'as backoff_delay), RF010 for a policy argument outside the server''s bounds (check_policy), '
'RF009 for a p_topic other than the server''s (NULL = the server''s topic; our_topic). '
'Never waits on a lock. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.claim_due(
    integer, integer, interval, interval, double precision, interval, double precision, text
) from public;
grant execute on function recording_finalize.claim_due(
    integer, integer, interval, interval, double precision, interval, double precision, text
) to recording_finalize_worker;
