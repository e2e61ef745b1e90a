-- Claims one batch of due finalize rows and settles every row that needs no file-storage check.

create or replace function recording_finalize.claim_due(
    p_batch_size integer default 100,
    p_policy jsonb default '{}'
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
set search_path = pg_catalog, pg_temp
-- The claim locks only the product's own rows, never waiting (SKIP LOCKED), and no recording at
-- all; this bounds the one wait left, a republished event whose dedupe key a concurrent service
-- transaction is writing (see below), which happens at most once a claim.
set lock_timeout = '100ms'
-- The due rows must be read in ix_rfa_due order, whatever the statistics say: after a burst,
-- before autovacuum has analyzed, the planner may believe a few rows are due and prefer a
-- bitmap scan and a sort of what is, in truth, the whole backlog. Every statement here reads
-- one index (the due rows, then rows by key), so these settings only take that choice away.
set enable_seqscan = off
set enable_bitmapscan = off
set enable_sort = off
as $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
    v_row messenger.recording_finalize_attempts%rowtype;
    v_rec recording_finalize_internal.recording;
    v_session recording_finalize_internal.session;
    v_decision record;
    v_enqueued boolean;
    -- A service transaction was writing a republished event: the batch's other republishes wait
    -- for the next claim instead of waiting too.
    v_busy_seen boolean := false;
    v_claimed integer := 0;
    -- The rows handed to the driver, claimed together in one UPDATE after the loop.
    v_reconcile_ids uuid[] := array[]::uuid[];
    v_tokens uuid[] := array[]::uuid[];
    -- The due rows in ix_rfa_due order, each locked only when it is fetched: a FOR loop would
    -- prefetch (and so lock) rows past the batch, which a concurrent claim would then skip.
    v_due cursor for
        select f.*
        from messenger.recording_finalize_attempts as f
        where f.status = 'Pending' and f.next_attempt_at <= now()
        order by f.next_attempt_at
        for no key update skip locked;
begin
    if p_batch_size is null or p_batch_size not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: claim_due: p_batch_size must be 1..10000, got %s',
                p_batch_size);
    end if;

    -- The due rows in ix_rfa_due order, no join, so no statistics can turn the plan into a
    -- scan of the backlog; fetched one at a time until the batch is full, so the claim locks
    -- no row it does not return. Each row's recording is only read (its committed state): the
    -- claim holds no recording, so the service never waits for one behind it. A recording an
    -- in-flight callback is settling is handed out like any other; apply_outcome locks it
    -- (SKIP LOCKED) and finds the verdict stale or the recording terminal.
    open v_due;
    loop
        fetch v_due into v_row;
        exit when not found;
        select x.* into v_rec
        from recording_finalize_internal.recording_row(v_row.recording_id) as x;
        v_claimed := v_claimed + 1;

        v_session := null;
        v_enqueued := false;
        if v_rec.status = 'Available' then
            v_enqueued := exists (
                select from messenger.integration_outbox as o
                where o.topic = v_policy.topic and o.dedupe_key = v_rec.id::text
            );
        elsif v_rec.status is not null and v_rec.status <> 'Failed' then
            v_session := recording_finalize_internal.session_of(
                v_rec.session_kind, v_rec.session_id);
        end if;
        select d.* into v_decision
        from recording_finalize_internal.claim_decision(
            v_rec.status, v_enqueued, v_session.id is not null, v_session.ended_at,
            v_row.attempts, v_row.last_outcome, v_policy.max_attempts, v_policy.sla_timeout,
            now()
        ) as d;

        recording_id := v_row.recording_id;
        session_kind := v_row.session_kind;
        session_id := v_row.session_id;
        attempts := v_row.attempts;
        claim_token := null;
        -- Informational (logs): apply_outcome guards on the status, not on this number.
        recording_version := v_rec.version;
        detail := v_decision.detail;

        action := v_decision.action;
        if action = 'reconcile' then
            v_reconcile_ids := pg_catalog.array_append(v_reconcile_ids, v_row.id);
            claim_token := gen_random_uuid();
            v_tokens := pg_catalog.array_append(v_tokens, claim_token);
            attempts := v_row.attempts + 1;
        elsif action = 'deferred_by_sla' then
            update messenger.recording_finalize_attempts as f
            set next_attempt_at = coalesce(v_session.ended_at, now()) + v_policy.sla_timeout,
                updated_at = now()
            where f.id = v_row.id;
        elsif action = 'quarantined' then
            update messenger.recording_finalize_attempts as f
            set status = 'Quarantined',
                quarantine_reason = v_decision.quarantine_reason,
                last_error = left(case v_decision.detail
                    when 'MaxAttemptsExceeded' then format(
                        'MaxAttemptsExceeded: %s attempts; last error: %s',
                        v_row.attempts, coalesce(v_row.last_error, 'none recorded'))
                    when 'SessionNotFound' then format('SessionNotFound: no %s session %s',
                        v_rec.session_kind, v_rec.session_id)
                    else 'RecordingNotFound: no messenger.call_recordings row with this id'
                end, 512),
                claim_token = null,
                updated_at = now()
            where f.id = v_row.id;
        else
            -- closed, or republished: the event of an Available recording, enqueued right here
            -- (closed after all when a concurrent writer enqueued it first).
            if action = 'republished' and v_busy_seen then
                action := 'busy';  -- one wait a claim: this one waits for the next claim
            elsif action = 'republished' then
                begin
                    if not recording_finalize_internal.enqueue_available(
                        v_rec,
                        recording_finalize_internal.session_of(
                            v_rec.session_kind, v_rec.session_id),
                        v_policy.topic) then
                        action := 'closed';
                    end if;
                exception when lock_not_available or deadlock_detected then
                    -- A service transaction is writing this event (and may wait for something
                    -- this claim holds): it goes first. The row is tried again after the
                    -- backoff base.
                    action := 'busy';
                    v_busy_seen := true;
                end;
            end if;
            update messenger.recording_finalize_attempts as f
            set status = case when action = 'busy' then 'Pending' else 'Done' end,
                attempts = case when action = 'busy' then f.attempts else f.attempts + 1 end,
                next_attempt_at = case when action = 'busy'
                    then now() + v_policy.backoff_base else f.next_attempt_at end,
                claim_token = null,
                updated_at = now()
            where f.id = v_row.id
            returning f.attempts into attempts;
        end if;
        return next;
        exit when v_claimed >= p_batch_size;
    end loop;
    close v_due;

    -- One UPDATE for every row handed to the driver: the attempt counted before the check,
    -- the backoff from now (its jitter drawn per row), the token the row was returned with.
    update messenger.recording_finalize_attempts as f
    set attempts = f.attempts + 1,
        next_attempt_at = now() + recording_finalize_internal.backoff_delay(
            f.attempts + 1, v_policy.backoff_base, v_policy.backoff_factor, v_policy.backoff_cap,
            v_policy.backoff_jitter
        ),
        claim_token = c.token,
        claimed_at = now(),
        updated_at = now()
    from unnest(v_reconcile_ids, v_tokens) as c (id, token)
    where f.id = c.id;
end
$$;

comment on function recording_finalize.claim_due(integer, jsonb) is
'One call per batch. Takes up to p_batch_size (1..10000) Pending rows with next_attempt_at <= '
'now() in next_attempt_at order (ix_rfa_due, FOR NO KEY UPDATE SKIP LOCKED), reads each one''s '
'recording without locking it (the claim holds no service row: the service never waits behind '
'a claim for one), lets recording_finalize_internal.claim_decision decide, and '
'returns one row per claimed row with what was done (action): '
'reconcile - the driver must check the file storage and call apply_outcome with claim_token; '
'attempts was incremented and next_attempt_at = now() + backoff before the check '
'(pre-increment: a crash loop still ends in quarantine); '
'republished - Available without its event: event + realtime row enqueued, row Done; '
'closed - Failed, or Available with its event: row Done; '
'deferred_by_sla - session not ended or within the SLA: re-timed, no attempt counted; '
'quarantined - no recording, no session, or attempts >= max attempts (quarantine_reason set); '
'busy - a republish whose event a service transaction is writing at that moment: left Pending '
'for the backoff base (the service goes first); after one such wait (lock_timeout 100 ms) the '
'batch''s other republishes are left busy without trying. p_policy: see check_policy (RF001, '
'RF009, RF010). Waits on no row lock; on a unique key at most once, 100 ms. Worker API '
'(SECURITY DEFINER).';

revoke all on function recording_finalize.claim_due(integer, jsonb) from public;
grant execute on function recording_finalize.claim_due(integer, jsonb) to recording_finalize_worker;
