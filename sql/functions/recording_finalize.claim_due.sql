-- Claims one batch of due finalize rows and settles every row that needs no file-storage check.

create or replace function recording_finalize.claim_due(
    p_batch_size integer default 100
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
-- one index (the due rows, then rows by key: nested loops), so these settings only take that
-- choice away.
set enable_seqscan = off
set enable_bitmapscan = off
set enable_sort = off
set enable_hashjoin = off
set enable_mergejoin = off
-- A switched-off plan is costed as if it were huge, which would have the claim compiled by JIT
-- (a few hundred milliseconds) on every call: never worth it for a batch.
set jit = off
-- With the choices above taken away, each call's own plan would be the plan the session
-- already has: planned once, not again for every batch (that planning cost more CPU than the
-- claim's reads).
set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    -- Asked once: may an Available recording without an event we can see get one from us?
    v_republish boolean := recording_finalize_internal.republish_trusted();
    -- One claimed row: the finalize row, its recording (rec), the recording's session and the
    -- claim's decision.
    v_row record;
    v_rec recording_finalize_internal.recording;
    v_session recording_finalize_internal.session;
    -- A service transaction was writing a republished event: the batch's other republishes wait
    -- for the next claim instead of waiting too.
    v_busy_seen boolean := false;
    -- The rows handed to the driver, claimed together in one UPDATE after the loop.
    v_reconcile_ids uuid[] := array[]::uuid[];
    v_tokens uuid[] := array[]::uuid[];
begin
    if p_batch_size is null or p_batch_size not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: claim_due: p_batch_size must be 1..10000, got %s',
                p_batch_size);
    end if;

    -- One statement for the batch. The due rows in ix_rfa_due order, limited and locked in a
    -- sub-select of their own (SKIP LOCKED: a row another claim holds is passed over), so no
    -- statistics can turn the plan into a scan of the backlog and no row is locked that is not
    -- returned; then, row by row by key, its recording (only read: the claim holds no service
    -- row, so the service never waits for one behind it), the recording's session, whether an
    -- Available recording has its event, and recording_finalize_internal.claim_decision's word.
    -- A recording an in-flight callback is settling is handed out like any other; apply_outcome
    -- locks it (SKIP LOCKED) and finds the verdict stale or the recording terminal.
    for v_row in
        select f.id, f.recording_id, f.session_kind, f.session_id, f.attempts,
            x as rec, s as session, d.action, d.detail, d.quarantine_reason, d.finalize_status,
            d.attempts as attempts_after, d.next_attempt_at as deferred_until, d.last_error
        from (
            select due.id, due.recording_id, due.session_kind, due.session_id, due.attempts,
                due.last_error, due.last_outcome, due.next_attempt_at
            from messenger.recording_finalize_attempts as due
            where due.status = 'Pending' and due.next_attempt_at <= now()
            order by due.next_attempt_at
            limit p_batch_size
            for no key update skip locked
        ) as f
        left join lateral recording_finalize_internal.recording_row(f.recording_id) as x
            on true
        left join lateral recording_finalize_internal.session_row(x.session_kind, x.session_id)
            as s on true
        -- Asked only of an Available recording: has it its event? (A join, not an EXISTS in
        -- the decider's arguments: a sub-select there would stop PostgreSQL inlining it; the
        -- LIMIT keeps it a sub-plan of its own, so the status test gates the lookup.)
        left join lateral (
            select true as found
            where x.status = 'Available' and recording_finalize_internal.has_event(x.id)
            limit 1
        ) as event on true
        -- Asked only of an Available recording without an event we can see (the rare row the
        -- answer is for), while the batch may republish at all: does service_events still
        -- remember events as old as its? Once per row (the decider reads its answer in several
        -- places, and an argument is copied into each), and the service's outbox read once per
        -- call at most (a sub-select of no row's: evaluated when first needed, then kept).
        left join lateral (
            select coalesce(x.available_at
                >= (select recording_finalize_internal.service_events_remembered_from()), true)
                as remembered
            where x.status = 'Available' and event.found is null and v_republish
            offset 0
        ) as memory on true
        cross join lateral recording_finalize_internal.claim_decision(
            x.status, event.found is not null, s.id is not null, s.ended_at, f.attempts,
            f.last_outcome, v_policy.max_attempts, v_policy.sla_timeout, now(), f.last_error,
            x.session_kind, x.session_id, v_republish and memory.remembered is not false
        ) as d
        order by f.next_attempt_at
    loop
        v_rec := v_row.rec;
        v_session := v_row.session;
        recording_id := v_row.recording_id;
        session_kind := v_row.session_kind;
        session_id := v_row.session_id;
        attempts := v_row.attempts;
        claim_token := null;
        -- Informational (logs): apply_outcome guards on the status, not on this number.
        recording_version := v_rec.version;
        detail := v_row.detail;

        -- claim_decision said what becomes of the row; here it is carried out.
        action := v_row.action;
        if action = 'reconcile' then
            v_reconcile_ids := pg_catalog.array_append(v_reconcile_ids, v_row.id);
            claim_token := gen_random_uuid();
            v_tokens := pg_catalog.array_append(v_tokens, claim_token);
            attempts := v_row.attempts_after;
        elsif action = 'deferred_by_sla' then
            update messenger.recording_finalize_attempts as f
            set next_attempt_at = v_row.deferred_until,
                updated_at = now()
            where f.id = v_row.id;
        elsif action = 'quarantined' then
            update messenger.recording_finalize_attempts as f
            set status = v_row.finalize_status,
                quarantine_reason = v_row.quarantine_reason,
                last_error = v_row.last_error,
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
                        v_rec, v_session, v_policy.topic) then
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
            -- Busy: the claim's own give-back, not the decision's (the row stays as it was).
            update messenger.recording_finalize_attempts as f
            set status = case when action = 'busy' then f.status else v_row.finalize_status end,
                attempts = case when action = 'busy' then f.attempts else v_row.attempts_after end,
                next_attempt_at = case when action = 'busy'
                    then now() + v_policy.backoff_base else f.next_attempt_at end,
                claim_token = null,
                updated_at = now()
            where f.id = v_row.id
            returning f.attempts into attempts;
        end if;
        return next;
    end loop;

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

comment on function recording_finalize.claim_due(integer) is
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
'batch''s other republishes are left busy without trying. The policy: the stored one '
'(recording_finalize.policy, set_policy). Waits on no row lock; on a unique key at most once, '
'100 ms. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.claim_due(integer) from public;
grant execute on function recording_finalize.claim_due(integer) to recording_finalize_worker;
