-- The current shape of everything recording-finalize-retry owns: GENERATED, do not edit.
-- `make schema` rewrites it from a fresh migrate (tools/schema_snapshot.py); `make test`
-- fails when it differs from what sql/migrations and sql/functions produce. The service's own
-- tables are not here (sql/service/schema.sql is their reference DDL).

--
-- PostgreSQL database dump
--

--
-- Name: recording_finalize; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA recording_finalize;

--
-- Name: SCHEMA recording_finalize; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON SCHEMA recording_finalize IS 'recording-finalize-retry: the API functions (granted to the worker, operator and service roles) and the product''s own tables. The messenger tables stay the service''s.';

--
-- Name: recording_finalize_internal; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA recording_finalize_internal;

--
-- Name: SCHEMA recording_finalize_internal; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON SCHEMA recording_finalize_internal IS 'recording-finalize-retry internals: helper functions and types, granted to nobody. Called by the API functions of schema recording_finalize, which run as the owner.';

--
-- Name: recording_finalize_migrations; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA recording_finalize_migrations;

--
-- Name: SCHEMA recording_finalize_migrations; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON SCHEMA recording_finalize_migrations IS 'Bookkeeping of recording-finalize migrate: yoyo-migrations'' tables and the checksums of the applied files. Owner only; the worker reads it through recording_finalize.schema_state().';

--
-- Name: policy; Type: TYPE; Schema: recording_finalize_internal; Owner: -
--

CREATE TYPE recording_finalize_internal.policy AS (
	topic text,
	max_attempts integer,
	sla_timeout interval,
	backoff_base interval,
	backoff_factor double precision,
	backoff_cap interval,
	backoff_jitter double precision,
	upload_grace interval,
	upload_grace_max interval
);

--
-- Name: TYPE policy; Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON TYPE recording_finalize_internal.policy IS 'A call''s policy after recording_finalize_internal.policy() read the settings once and checked every value: the server''s topic, max attempts, SLA, backoff, upload grace (and its cap).';

--
-- Name: recording; Type: TYPE; Schema: recording_finalize_internal; Owner: -
--

CREATE TYPE recording_finalize_internal.recording AS (
	id uuid,
	session_kind text,
	session_id uuid,
	media_type text,
	trigger text,
	status text,
	file_id text,
	size_bytes bigint,
	duration_seconds integer,
	format text,
	failure_reason text,
	started_at timestamp with time zone,
	ended_at timestamp with time zone,
	available_at timestamp with time zone,
	failed_at timestamp with time zone,
	version integer,
	created_at timestamp with time zone,
	updated_at timestamp with time zone
);

--
-- Name: TYPE recording; Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON TYPE recording_finalize_internal.recording IS 'The columns of messenger.call_recordings the product reads (recording_finalize_internal.recording_row), as a type of the product''s own.';

--
-- Name: session; Type: TYPE; Schema: recording_finalize_internal; Owner: -
--

CREATE TYPE recording_finalize_internal.session AS (
	id uuid,
	chat_id uuid,
	deal_id uuid,
	tenant_id uuid,
	started_at timestamp with time zone,
	ended_at timestamp with time zone
);

--
-- Name: TYPE session; Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON TYPE recording_finalize_internal.session IS 'The columns of messenger.call_sessions / conference_sessions the product reads.';

--
-- Name: apply_outcome(uuid, uuid, text, text, bigint, integer, text, text, jsonb); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.apply_outcome(p_recording_id uuid, p_claim_token uuid, p_outcome text, p_file_id text DEFAULT NULL::text, p_size_bytes bigint DEFAULT NULL::bigint, p_duration_seconds integer DEFAULT NULL::integer, p_format text DEFAULT NULL::text, p_error text DEFAULT NULL::text, p_policy jsonb DEFAULT '{}'::jsonb) RETURNS TABLE(result text, finalize_status text, attempts integer, detail text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '100ms'
    AS $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
    -- last_error holds an error class and code: never a URL, never more than the column takes.
    v_error text := recording_finalize_internal.mask_urls(p_error, 400);
    v_row messenger.recording_finalize_attempts%rowtype;
    v_rec recording_finalize_internal.recording;
    v_session recording_finalize_internal.session;
    v_decision record;
    v_busy boolean := false;
    v_constraint text;
    v_table text;
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
        perform from messenger.call_recordings as r
        where r.id = p_recording_id
        for no key update skip locked;
        v_busy := not found;
        select x.* into v_rec from recording_finalize_internal.recording_row(p_recording_id) as x;
        if v_rec.id is null then
            v_busy := false;
            select 'quarantined' as result, 'Quarantined' as finalize_status,
                v_row.attempts as attempts, null::timestamptz as next_attempt_at,
                'RecordingNotFound: no messenger.call_recordings row with this id' as last_error,
                'recording_not_found' as quarantine_reason
            into v_decision;
        elsif v_busy then
            null;  -- held by another transaction: given back below
        elsif v_rec.status in ('Available', 'Failed') then
            -- Status guard: a terminal recording is never rewritten (the ingest callback won
            -- the race); an Available one gets its event if it has none.
            if v_rec.status = 'Available' then
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
            select x.* into v_session
            from recording_finalize_internal.session_row(v_rec.session_kind, v_rec.session_id) as x;
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
                now()
            ) as d;
            if v_decision.result = 'reconciled' then
                perform recording_finalize_internal.transition_available(
                    p_recording_id, p_file_id, p_size_bytes, p_duration_seconds, p_format,
                    v_session, v_policy.topic);
            elsif v_decision.result = 'failed' then
                update messenger.call_recordings as r
                set status = 'Failed',
                    failure_reason = 'Timeout',
                    failed_at = now(),
                    ended_at = coalesce(r.ended_at, now()),
                    version = r.version + 1,
                    updated_at = now()
                where r.id = p_recording_id;
                insert into messenger.realtime_outbox (
                    kind, session_kind, session_id, reference_id, payload
                )
                values (
                    'RecordingFailed', v_rec.session_kind, v_rec.session_id, v_rec.id,
                    jsonb_build_object('recordingId', v_rec.id, 'status', 'Failed',
                        'reason', 'Timeout')
                );
            end if;
        end if;
    exception
        when lock_not_available or deadlock_detected then
            v_busy := true;
        when check_violation or string_data_right_truncation then
            -- The service's table refused metadata the product found usable: its own rule.
            get stacked diagnostics v_constraint = constraint_name, v_table = table_name;
            select 'quarantined' as result, 'Quarantined' as finalize_status,
                v_row.attempts as attempts, null::timestamptz as next_attempt_at,
                format('InvalidMetadata: refused by messenger.%s (%s)',
                    coalesce(nullif(v_table, ''), 'call_recordings'),
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

--
-- Name: FUNCTION apply_outcome(p_recording_id uuid, p_claim_token uuid, p_outcome text, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_error text, p_policy jsonb); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.apply_outcome(p_recording_id uuid, p_claim_token uuid, p_outcome text, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_error text, p_policy jsonb) IS 'One call, one transaction per reconciled row: recording_finalize_internal.outcome_decision decides, this carries it out on the recording, the finalize row and both outboxes, all or nothing. p_outcome found (with the adopted file metadata), missing, transient, invalid_metadata or config_error (RF001 otherwise); p_error is stored in last_error with URLs masked. result: reconciled (Available, event and realtime row, row Done), failed (Failed Timeout, realtime row, row Done), deferred_by_incident (a 404 while storage is not trusted: attempt given back, due at incident end + grace), backoff, held_by_incident (transient while the worker''s own incident is open: attempt given back), quarantined (quarantine_reason set; found metadata that metadata_problem or the service''s own constraints refuse is quarantined invalid_metadata, never raised), config_error_released (attempt given back, due now); and the no-ops: stale (the claim token no longer matches: re-claimed or settled meanwhile), terminal (the recording is already Available/Failed: never rewritten, row closed), busy (another transaction held the recording, or the event''s key for longer than 100 ms: nothing written but the give-back; due again after the backoff base). detail is the last_error written. Locks: the finalize row SKIP LOCKED, then the recording SKIP LOCKED; a unique-key wait is cut at lock_timeout 100 ms, so a service transaction is never the one that fails. p_policy: see check_policy (RF001, RF009, RF010). Worker API (SECURITY DEFINER).';

--
-- Name: audit(jsonb, interval, integer, interval); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.audit(p_policy jsonb DEFAULT '{}'::jsonb, p_polling_interval interval DEFAULT '00:01:00'::interval, p_examples integer DEFAULT 5, p_lookback interval DEFAULT '1 day'::interval) RETURNS TABLE(check_name text, reason text, found bigint, examples text[])
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
begin
    if p_polling_interval is null or p_polling_interval <= interval '0'
        or p_examples is null or p_examples not between 0 and 100
        or p_lookback is null or p_lookback <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: audit: p_polling_interval and p_lookback must be '
                '> 0 and p_examples 0..100, got %s, %s, %s', p_polling_interval, p_lookback,
                p_examples);
    end if;

    -- Available within the lookback, no event of our topic, and no Pending row that would
    -- enqueue it. (Older events are the service's retention to remove: not findings.)
    return query
    with hits as (
        select r.id::text as id from messenger.call_recordings as r
        where r.status = 'Available' and r.available_at > now() - p_lookback
            and not exists (select from messenger.integration_outbox as o
                where o.topic = v_policy.topic and o.dedupe_key = r.id::text)
            and not exists (select from messenger.recording_finalize_attempts as f
                where f.recording_id = r.id and f.status = 'Pending')
    )
    select 'available_without_event', null::text, count(*),
        (array_agg(h.id order by h.id))[1:p_examples]
    from hits as h;

    -- Stuck without a finalize row: the next cycle's discovery opens one for each.
    return query
    select 'orphaned_recordings', null::text, count(*),
        (array_agg(o.recording_id::text order by o.recording_id))[1:p_examples]
    from recording_finalize_internal.orphans(v_policy.sla_timeout) as o;

    -- A Done row closes a recording that reached a terminal state; anything else is a lie.
    return query
    with hits as (
        select f.recording_id::text as id from messenger.recording_finalize_attempts as f
        left join messenger.call_recordings as r on r.id = f.recording_id
        where f.status = 'Done' and f.updated_at > now() - p_lookback
            and r.status is distinct from 'Available' and r.status is distinct from 'Failed'
    )
    select 'done_not_terminal', null::text, count(*),
        (array_agg(h.id order by h.id))[1:p_examples]
    from hits as h;

    -- The relay publishes within one polling interval.
    return query
    with hits as (
        select o.dedupe_key as id from messenger.integration_outbox as o
        where o.topic = v_policy.topic and o.published_at is null
            and o.created_at < now() - p_polling_interval
    )
    select 'unpublished_overdue', null::text, count(*),
        (array_agg(h.id order by h.id))[1:p_examples]
    from hits as h;

    -- Quarantined rows wait for a human: one line per reason, or one line with 0.
    return query
    select 'quarantined', q.reason, q.found, q.examples
    from (
        select f.quarantine_reason::text as reason, count(*) as found,
            (array_agg(f.recording_id::text order by f.recording_id))[1:p_examples] as examples
        from messenger.recording_finalize_attempts as f
        where f.status = 'Quarantined'
        group by f.quarantine_reason
    ) as q
    union all
    select 'quarantined', null, 0, array[]::text[]
    where not exists (
        select from messenger.recording_finalize_attempts as f where f.status = 'Quarantined'
    )
    order by 2 nulls first;
end
$$;

--
-- Name: FUNCTION audit(p_policy jsonb, p_polling_interval interval, p_examples integer, p_lookback interval); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.audit(p_policy jsonb, p_polling_interval interval, p_examples integer, p_lookback interval) IS 'Read-only invariant checks, each with a count and up to p_examples (0..100) recording ids: available_without_event (Available within p_lookback, no event of the topic, no Pending row to enqueue it), orphaned_recordings (recording_finalize_internal.orphans: stuck without a finalize row; the next discovery opens one), done_not_terminal (a Done row settled within p_lookback whose recording is not terminal), unpublished_overdue (older than p_polling_interval), quarantined (one line per reason). RF001 for bad arguments. Reads the service''s tables: available_without_event scans the recordings of the lookback. p_policy: see check_policy. Operator API (SECURITY DEFINER).';

--
-- Name: audit_repair(text, jsonb, integer); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.audit_repair(p_operator text, p_policy jsonb DEFAULT '{}'::jsonb, p_limit integer DEFAULT 1000) RETURNS TABLE(recording_id uuid, session_kind text, session_id uuid)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '100ms'
    AS $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
    v_ids uuid[];
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: audit_repair: p_limit must be 1..10000, got %s',
                p_limit);
    end if;
    perform recording_finalize_internal.check_operator(
        'repair', p_operator, 'audit --repair: orphaned recording');

    -- The same rows discovery would open, due now and audited. A lifecycle call or the next
    -- discovery may open a row meanwhile: then it is not ours to open (ON CONFLICT).
    with opened as (
        insert into messenger.recording_finalize_attempts as f (
            recording_id, session_kind, session_id, next_attempt_at, opened_by
        )
        select o.recording_id, o.session_kind, o.session_id, now(), 'repair'
        from recording_finalize_internal.orphans(v_policy.sla_timeout) as o
        limit p_limit
        on conflict (recording_id) do nothing
        returning f.recording_id
    )
    select array_agg(x.recording_id order by x.recording_id) into v_ids from opened as x;
    if v_ids is null then
        return;
    end if;
    perform recording_finalize_internal.record_operator_action(
        v_ids, 'repair', p_operator,
        'audit --repair: orphaned recording (session ended past the SLA, no finalize row)',
        jsonb_build_object('slaTimeout', v_policy.sla_timeout::text)
    );
    return query
    select f.recording_id, f.session_kind::text, f.session_id
    from messenger.recording_finalize_attempts as f
    where f.recording_id = any(v_ids)
    order by f.recording_id;
end
$$;

--
-- Name: FUNCTION audit_repair(p_operator text, p_policy jsonb, p_limit integer); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.audit_repair(p_operator text, p_policy jsonb, p_limit integer) IS 'Opens a finalize row (Pending, due now, opened_by repair) for up to p_limit (1..10000) orphaned recordings (recording_finalize_internal.orphans, the rule discovery uses), one audit row each naming p_operator; nothing else. Returns the recordings it opened rows for. RF001 for a bad limit or operator. p_policy: see check_policy. Operator API (SECURITY DEFINER).';

--
-- Name: check_policy(jsonb, integer, interval); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.check_policy(p_policy jsonb DEFAULT '{}'::jsonb, p_relay_batch_size integer DEFAULT NULL::integer, p_retention interval DEFAULT NULL::interval) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
begin
    -- The relay's batch and the pruner's retention are their calls' own arguments, checked by
    -- the same helpers relay_claim and prune call.
    if p_relay_batch_size is not null then
        perform recording_finalize_internal.check_relay_batch(p_relay_batch_size);
    end if;
    if p_retention is not null then
        perform recording_finalize_internal.check_retention(p_retention);
    end if;
    return pg_catalog.jsonb_build_object(
        'topic', v_policy.topic,
        'max_attempts', v_policy.max_attempts,
        'sla_timeout_seconds', extract(epoch from v_policy.sla_timeout),
        'backoff_base_seconds', extract(epoch from v_policy.backoff_base),
        'backoff_factor', v_policy.backoff_factor,
        'backoff_cap_seconds', extract(epoch from v_policy.backoff_cap),
        'backoff_jitter', v_policy.backoff_jitter,
        'upload_grace_seconds', extract(epoch from v_policy.upload_grace)
    );
end
$$;

--
-- Name: FUNCTION check_policy(p_policy jsonb, p_relay_batch_size integer, p_retention interval); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.check_policy(p_policy jsonb, p_relay_batch_size integer, p_retention interval) IS 'The policy every worker call takes (p_policy), resolved and checked exactly as claim_due and apply_outcome do (recording_finalize_internal.policy): keys topic, max_attempts, sla_timeout_seconds, backoff_base_seconds, backoff_factor, backoff_cap_seconds, backoff_jitter, upload_grace_seconds, all optional (the defaults filled in); with p_relay_batch_size and p_retention also the relay''s batch and the pruner''s retention, as relay_claim and prune check them. Returns the resolved policy; raises RF001 (a value the policy''s own rules refuse, an unknown key), RF009 (another topic) or RF010 (outside recording_finalize.settings, naming the bound), each with the key in the error''s COLUMN field. The driver calls it once at start and exits 2 naming the variable. Read-only. Worker and operator API (SECURITY DEFINER).';

--
-- Name: claim_due(integer, jsonb); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.claim_due(p_batch_size integer DEFAULT 100, p_policy jsonb DEFAULT '{}'::jsonb) RETURNS TABLE(recording_id uuid, session_kind text, session_id uuid, action text, attempts integer, claim_token uuid, recording_version integer, detail text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '100ms'
    SET enable_seqscan TO 'off'
    SET enable_bitmapscan TO 'off'
    SET enable_sort TO 'off'
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    SET jit TO 'off'
    AS $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
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
        select f.id, f.recording_id, f.session_kind, f.session_id, f.attempts, f.last_error,
            x as rec, s as session, d.action, d.detail, d.quarantine_reason
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
            from messenger.integration_outbox as o
            where x.status = 'Available' and o.topic = v_policy.topic
                and o.dedupe_key = x.id::text
            limit 1
        ) as event on true
        cross join lateral recording_finalize_internal.claim_decision(
            x.status, event.found is not null, s.id is not null, s.ended_at, f.attempts,
            f.last_outcome, v_policy.max_attempts, v_policy.sla_timeout, now()
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

        action := v_row.action;
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
                quarantine_reason = v_row.quarantine_reason,
                last_error = left(case v_row.detail
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

--
-- Name: FUNCTION claim_due(p_batch_size integer, p_policy jsonb); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.claim_due(p_batch_size integer, p_policy jsonb) IS 'One call per batch. Takes up to p_batch_size (1..10000) Pending rows with next_attempt_at <= now() in next_attempt_at order (ix_rfa_due, FOR NO KEY UPDATE SKIP LOCKED), reads each one''s recording without locking it (the claim holds no service row: the service never waits behind a claim for one), lets recording_finalize_internal.claim_decision decide, and returns one row per claimed row with what was done (action): reconcile - the driver must check the file storage and call apply_outcome with claim_token; attempts was incremented and next_attempt_at = now() + backoff before the check (pre-increment: a crash loop still ends in quarantine); republished - Available without its event: event + realtime row enqueued, row Done; closed - Failed, or Available with its event: row Done; deferred_by_sla - session not ended or within the SLA: re-timed, no attempt counted; quarantined - no recording, no session, or attempts >= max attempts (quarantine_reason set); busy - a republish whose event a service transaction is writing at that moment: left Pending for the backoff base (the service goes first); after one such wait (lock_timeout 100 ms) the batch''s other republishes are left busy without trying. p_policy: see check_policy (RF001, RF009, RF010). Waits on no row lock; on a unique key at most once, 100 ms. Worker API (SECURITY DEFINER).';

--
-- Name: claim_preview(integer, jsonb); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.claim_preview(p_limit integer DEFAULT 1000, p_policy jsonb DEFAULT '{}'::jsonb) RETURNS TABLE(recording_id uuid, session_kind text, session_id uuid, action text, attempts integer, next_attempt_at timestamp with time zone, detail text, quarantine_reason text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET enable_seqscan TO 'off'
    SET enable_bitmapscan TO 'off'
    SET enable_sort TO 'off'
    AS $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: claim_preview: p_limit must be 1..10000, got %s',
                p_limit);
    end if;
    -- The inputs claim_due gives claim_decision, read without a lock: the recording's status,
    -- whether its event exists, its session. A row whose recording a writer holds right now is
    -- reported here; the real claim would pass it over until the writer is done.
    return query
    select f.recording_id, f.session_kind::text, f.session_id, d.action,
        f.attempts + case when d.counts_attempt then 1 else 0 end, f.next_attempt_at, d.detail,
        d.quarantine_reason
    from (
        select x.* from messenger.recording_finalize_attempts as x
        where x.status = 'Pending' and x.next_attempt_at <= now()
        order by x.next_attempt_at
        limit p_limit
    ) as f
    left join messenger.call_recordings as r on r.id = f.recording_id
    left join lateral (
        select s.id, s.ended_at from messenger.call_sessions as s
        where r.session_kind = 'Direct' and s.id = r.session_id
        union all
        select s.id, s.ended_at from messenger.conference_sessions as s
        where r.session_kind = 'Conference' and s.id = r.session_id
    ) as s on true
    cross join lateral recording_finalize_internal.claim_decision(
        r.status,
        r.status = 'Available' and exists (
            select from messenger.integration_outbox as o
            where o.topic = v_policy.topic and o.dedupe_key = r.id::text
        ),
        s.id is not null,
        s.ended_at,
        f.attempts,
        f.last_outcome,
        v_policy.max_attempts,
        v_policy.sla_timeout,
        now()
    ) as d
    order by f.next_attempt_at;
end
$$;

--
-- Name: FUNCTION claim_preview(p_limit integer, p_policy jsonb); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.claim_preview(p_limit integer, p_policy jsonb) IS 'Dry run beside claim_due: the Pending rows due now (up to p_limit, 1..10000) in claim order, each with the action claim_due would take, decided by the same recording_finalize_internal.claim_decision (reconcile, republished, closed, deferred_by_sla, quarantined), the attempts it would leave, its detail and quarantine reason. STABLE: no row lock, no attempt counted, nothing written. p_policy: see check_policy. Operator API (SECURITY DEFINER).';

--
-- Name: discover_stuck(integer, jsonb, integer); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.discover_stuck(p_limit integer DEFAULT 1000, p_policy jsonb DEFAULT '{}'::jsonb, p_scan integer DEFAULT 1000) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '100ms'
    SET enable_seqscan TO 'off'
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    SET jit TO 'off'
    AS $$
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
    v_after_kind text;
    v_after_id uuid;
    v_scanned integer;
    v_opened integer;
    v_last_kind text;
    v_last_id uuid;
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: discover_stuck: p_limit must be 1..10000, got %s',
                p_limit);
    end if;
    if p_scan is null or p_scan not between 1 and 100000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: discover_stuck: p_scan must be 1..100000, got %s',
                p_scan);
    end if;
    -- Where the previous call stopped. Another discovery at this moment (there is one runner)
    -- holds it: this call passes.
    select d.after_session_kind, d.after_session_id into v_after_kind, v_after_id
    from recording_finalize.discovery_sweep as d
    for update skip locked;
    if not found then
        return 0;
    end if;

    -- The next p_scan active recordings in ix_recording_active order (the index the contract
    -- requires): the call reads a slice, never every active recording. Of those, the orphans
    -- (recording_finalize_internal.orphans) get a row, due at session end + SLA, which has
    -- passed: the next claim takes them. A lifecycle call that opens the row meanwhile wins: it
    -- holds the recording (FOR NO KEY UPDATE) before it inserts, so FOR SHARE SKIP LOCKED passes
    -- over a recording whose row is being opened (without it, the INSERT would wait for that
    -- uncommitted row and the lock timeout would fail the whole batch); one that committed since
    -- the snapshot is ON CONFLICT's.
    with slice as (
        select r.id, r.session_kind::text as session_kind, r.session_id
        from messenger.call_recordings as r
        where r.status in ('Pending', 'Recording', 'Uploading')
            and (r.session_kind::text, r.session_id)
                > (coalesce(v_after_kind, ''),
                    coalesce(v_after_id, '00000000-0000-0000-0000-000000000000'))
        order by r.session_kind, r.session_id
        limit p_scan
    ),
    opened as (
        insert into messenger.recording_finalize_attempts as f (
            recording_id, session_kind, session_id, next_attempt_at, opened_by
        )
        select o.recording_id, o.session_kind, o.session_id,
            o.session_ended_at + v_policy.sla_timeout, 'discovery'
        from slice
        join recording_finalize_internal.orphans(v_policy.sla_timeout) as o
            on o.recording_id = slice.id
        join messenger.call_recordings as r on r.id = o.recording_id
        limit p_limit
        for share of r skip locked
        on conflict (recording_id) do nothing
        returning 1
    )
    select (select count(*) from slice), (select count(*) from opened), l.session_kind,
        l.session_id
    into v_scanned, v_opened, v_last_kind, v_last_id
    from (select) as one
    left join lateral (
        select s.session_kind, s.session_id from slice as s
        order by s.session_kind desc, s.session_id desc
        limit 1
    ) as l on true;

    -- The end of the active recordings: the next call starts over. Otherwise the next call goes
    -- on after this slice, unless p_limit cut it short: then it reads the same slice again
    -- (the recordings opened now are no orphans any more).
    if v_scanned < p_scan then
        update recording_finalize.discovery_sweep as d
        set after_session_kind = null, after_session_id = null, sweeps = d.sweeps + 1,
            updated_at = now();
    elsif v_opened < p_limit then
        update recording_finalize.discovery_sweep as d
        set after_session_kind = v_last_kind, after_session_id = v_last_id, updated_at = now();
    end if;
    return v_opened;
end
$$;

--
-- Name: FUNCTION discover_stuck(p_limit integer, p_policy jsonb, p_scan integer); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.discover_stuck(p_limit integer, p_policy jsonb, p_scan integer) IS 'Once per cycle: opens a finalize row (Pending, due at session end + SLA, opened_by discovery) for up to p_limit (1..10000) recordings in Pending/Recording/Uploading whose session ended more than the policy''s SLA ago and that have none (recording_finalize_internal.orphans), so the worker rescues an unmodified service. Returns how many it opened. Reads the next p_scan (1..100000) active recordings in ix_recording_active order after where the previous call stopped (recording_finalize.discovery_sweep), starting over at the end: a call''s cost is bounded by p_scan whatever the number of active recordings, and every one is looked at once per sweep. Never reads the history; writes only the product''s tables. Never waits for a lifecycle call that is opening a row: the recording it holds is passed over (FOR SHARE SKIP LOCKED); the lifecycle''s row wins. p_policy: see check_policy. Worker API (SECURITY DEFINER).';

--
-- Name: explain(uuid, jsonb); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.explain(p_recording_id uuid, p_policy jsonb DEFAULT '{}'::jsonb) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
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
    v_session := recording_finalize_internal.session_of(v_kind, v_session_id);

    -- What happens next, decided as the worker will decide it (claim_decision) at the moment
    -- the row is due.
    if not v_has_row then
        v_orphan := exists (
            select from recording_finalize_internal.orphans(v_policy.sla_timeout) as o
            where o.recording_id = p_recording_id
        );
        v_next := jsonb_build_object('action', case when v_orphan then 'discover' else 'none' end,
            'orphan', v_orphan, 'text', case
                when v_rec.status in ('Available', 'Failed') then format(
                    'nothing: the recording is %s and has no finalize row', v_rec.status)
                when v_orphan then 'on the next cycle: the worker discovers it (its session '
                    'ended past the SLA and it has no finalize row) and opens one, due now'
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
            v_rec.status = 'Available' and exists (
                select from messenger.integration_outbox as o
                where o.topic = v_policy.topic and o.dedupe_key = p_recording_id::text
            ),
            v_session.id is not null, v_session.ended_at, v_row.attempts, v_row.last_outcome,
            v_policy.max_attempts, v_policy.sla_timeout, v_at
        ) as d;
        v_next := jsonb_build_object(
            'action', v_claim.action,
            'detail', v_claim.detail,
            'quarantineReason', v_claim.quarantine_reason,
            'at', v_at,
            'due', v_row.next_attempt_at <= now(),
            'attempt', v_row.attempts + case when v_claim.counts_attempt then 1 else 0 end,
            'maxAttempts', v_policy.max_attempts,
            'text', format('%s %s',
                case when v_row.next_attempt_at <= now() then 'on the next cycle:'
                    else format('at %s (in %s s):', recording_finalize_internal.iso_utc(v_at),
                        ceil(extract(epoch from v_at - now()))) end,
                case v_claim.action
                    when 'reconcile' then format('check the binary in the file storage (attempt '
                        '%s of %s)', v_row.attempts + 1, v_policy.max_attempts)
                    when 'republished' then 'enqueue its lost event again and close the row'
                    when 'closed' then 'close the row (the recording is terminal)'
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
            from messenger.integration_outbox as o
            left join recording_finalize.relay_leases as l on l.outbox_id = o.id
            where o.topic = v_policy.topic and o.dedupe_key = p_recording_id::text
        ),
        'realtime', (
            select coalesce(jsonb_agg(jsonb_build_object('kind', t.kind,
                'createdAt', t.created_at, 'dispatchedAt', t.dispatched_at) order by t.id), '[]')
            from messenger.realtime_outbox as t where t.reference_id = p_recording_id
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

--
-- Name: FUNCTION explain(p_recording_id uuid, p_policy jsonb); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.explain(p_recording_id uuid, p_policy jsonb) IS 'Read-only: the recording, its session (with the SLA due time), its finalize row, its integration event (enqueued, published, event-id, lease) and realtime rows, the operators'' actions on it, and next: what the worker will do and when, decided by recording_finalize_internal.claim_decision (action reconcile, republished, closed, deferred_by_sla, quarantined; discover for an orphan the next cycle''s discovery opens a row for; none). For a reconcile row the driver adds what the file storage says now and asks preview_outcomes what that verdict would do. RF021 for an id that is neither a recording nor a finalize row. p_policy: see check_policy. Operator API (SECURITY DEFINER).';

--
-- Name: failed_recordings(integer); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.failed_recordings(p_limit integer DEFAULT 1000) RETURNS TABLE(recording_id uuid, session_kind text, session_id uuid, failure_reason text, failed_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: failed_recordings: p_limit must be 1..10000, '
                'got %s', p_limit);
    end if;
    return query
    select r.id, r.session_kind::text, r.session_id, r.failure_reason::text, r.failed_at
    from messenger.call_recordings as r
    where r.status = 'Failed'
    order by r.failed_at desc, r.id
    limit p_limit;
end
$$;

--
-- Name: FUNCTION failed_recordings(p_limit integer); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.failed_recordings(p_limit integer) IS 'Read-only. The p_limit (1..10000, RF001 otherwise) most recently Failed recordings, newest first: audit HEADs each one''s object, and a binary found there is an orphaned binary for a human to look at (Failed is terminal). Operator API (SECURITY DEFINER).';

--
-- Name: operator_state(); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.operator_state() RETURNS TABLE(reconcile_paused boolean, relay_paused boolean, pauses jsonb, quarantined_by_reason jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select
        exists (select from recording_finalize.pause as p where p.part = 'reconcile'),
        exists (select from recording_finalize.pause as p where p.part = 'relay'),
        coalesce(
            (select jsonb_agg(jsonb_build_object('part', p.part, 'pausedAt', p.paused_at,
                'pausedBy', p.paused_by, 'login', p.login_role, 'reason', p.reason)
                order by p.part)
                from recording_finalize.pause as p),
            '[]'
        ),
        -- Reads the quarantined rows' partial index only: finished rows cost nothing.
        coalesce(
            (select jsonb_object_agg(q.reason, q.n)
                from (
                    select f.quarantine_reason::text as reason, count(*) as n
                    from messenger.recording_finalize_attempts as f
                    where f.status = 'Quarantined'
                    group by 1
                ) as q),
            '{}'
        )
$$;

--
-- Name: FUNCTION operator_state(); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.operator_state() IS 'The pause switch (reconcile_paused, relay_paused, and each pause with who, when and why) and the quarantined rows counted by quarantine_reason: one read per cycle for every runner, and for status. Read-only. Worker and operator API (SECURITY DEFINER).';

--
-- Name: preview_outcomes(jsonb, jsonb); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.preview_outcomes(p_verdicts jsonb, p_policy jsonb DEFAULT '{}'::jsonb) RETURNS TABLE(recording_id uuid, claim_action text, result text, finalize_status text, attempts integer, next_attempt_at timestamp with time zone, detail text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
    v_verdict jsonb;
    v_id uuid;
    v_size_bytes bigint;
    v_duration integer;
    v_bucket_confirmed boolean;
    v_row messenger.recording_finalize_attempts%rowtype;
    v_rec recording_finalize_internal.recording;
    v_session recording_finalize_internal.session;
    v_claim record;
    v_outcome record;
begin
    if p_verdicts is null or jsonb_typeof(p_verdicts) <> 'array'
        or jsonb_array_length(p_verdicts) > 10000 then
        raise exception using
            errcode = 'RF001',
            message = 'invalid_parameter: preview_outcomes: p_verdicts must be a JSON array of at '
                'most 10000 verdicts {recording_id, outcome, file_id, size_bytes, '
                'duration_seconds, format, error, bucket_confirmed}';
    end if;
    for v_verdict in select v from jsonb_array_elements(p_verdicts) as v loop
        -- Every verdict names its recording by UUID, with whole numbers for the sizes: an
        -- element that is not an object, or an id that is missing, would otherwise be previewed
        -- as "no row" (none), and a bad number fail a cast.
        begin
            v_id := (v_verdict ->> 'recording_id')::uuid;
            v_size_bytes := (v_verdict ->> 'size_bytes')::bigint;
            v_duration := (v_verdict ->> 'duration_seconds')::integer;
        exception when invalid_text_representation or numeric_value_out_of_range then
            v_id := null;
        end;
        if jsonb_typeof(v_verdict) <> 'object' or v_id is null then
            raise exception using
                errcode = 'RF001',
                message = format('invalid_parameter: preview_outcomes: each verdict must be an '
                    'object with a UUID recording_id (and whole numbers for size_bytes and '
                    'duration_seconds), got %s', v_verdict);
        end if;
        recording_id := v_id;
        if v_verdict ->> 'outcome' is null or v_verdict ->> 'outcome' not in (
            'found', 'missing', 'transient', 'invalid_metadata', 'config_error') then
            raise exception using
                errcode = 'RF001',
                message = format('invalid_parameter: preview_outcomes: outcome must be found, '
                    'missing, transient, invalid_metadata or config_error, got %s',
                    coalesce(v_verdict ->> 'outcome', 'NULL'));
        end if;
        -- Whether the HeadBucket the verdict came with answered (absent or null: not known).
        if jsonb_typeof(v_verdict -> 'bucket_confirmed') not in ('boolean', 'null') then
            raise exception using
                errcode = 'RF001',
                message = format('invalid_parameter: preview_outcomes: bucket_confirmed must be '
                    'true, false or null, got %s', v_verdict -> 'bucket_confirmed');
        end if;
        v_bucket_confirmed := nullif(v_verdict -> 'bucket_confirmed', 'null')::boolean;
        select f.* into v_row from messenger.recording_finalize_attempts as f
        where f.recording_id = v_id;
        select x.* into v_rec from recording_finalize_internal.recording_row(v_id) as x;
        v_session := case when v_rec.status not in ('Available', 'Failed') then
            recording_finalize_internal.session_of(v_rec.session_kind, v_rec.session_id) end;
        -- What the claim would do now (only a Pending row is claimed at all)...
        select d.* into v_claim
        from recording_finalize_internal.claim_decision(
            v_rec.status,
            v_rec.status = 'Available' and exists (
                select from messenger.integration_outbox as o
                where o.topic = v_policy.topic and o.dedupe_key = v_rec.id::text
            ),
            v_session.id is not null, v_session.ended_at, v_row.attempts, v_row.last_outcome,
            v_policy.max_attempts, v_policy.sla_timeout, now()
        ) as d;
        claim_action := case when v_row.status is distinct from 'Pending' then 'none'
            else v_claim.action end;
        -- ...and, for a row it hands to the driver, what this verdict would do after it.
        if claim_action = 'reconcile' then
            select d.* into v_outcome
            from recording_finalize_internal.outcome_decision(
                v_verdict ->> 'outcome',
                case when v_verdict ->> 'outcome' = 'found' then
                    recording_finalize_internal.metadata_problem(
                        v_verdict ->> 'file_id', v_size_bytes, v_duration,
                        v_verdict ->> 'format') end,
                recording_finalize_internal.mask_urls(v_verdict ->> 'error', 400),
                v_row.attempts + 1,
                v_policy.max_attempts,
                least(v_rec.ended_at, v_session.ended_at),
                v_policy.upload_grace,
                v_policy.upload_grace_max,
                now(),
                v_bucket_confirmed
            ) as d;
            result := v_outcome.result;
            finalize_status := v_outcome.finalize_status;
            attempts := v_outcome.attempts;
            -- The claim's backoff (without its jitter) where the verdict keeps it.
            next_attempt_at := case when v_outcome.finalize_status = 'Pending' then coalesce(
                v_outcome.next_attempt_at,
                now() + recording_finalize_internal.backoff_delay(v_row.attempts + 1,
                    v_policy.backoff_base, v_policy.backoff_factor, v_policy.backoff_cap, 0)) end;
            detail := v_outcome.last_error;
        else
            result := claim_action;
            finalize_status := case claim_action
                when 'none' then v_row.status
                when 'quarantined' then 'Quarantined'
                when 'deferred_by_sla' then 'Pending'
                else 'Done' end;
            attempts := v_row.attempts + case when claim_action <> 'none' and v_claim.counts_attempt
                then 1 else 0 end;
            next_attempt_at := case when claim_action = 'deferred_by_sla'
                then coalesce(v_session.ended_at, now()) + v_policy.sla_timeout end;
            detail := v_claim.detail;
        end if;
        return next;
    end loop;
end
$$;

--
-- Name: FUNCTION preview_outcomes(p_verdicts jsonb, p_policy jsonb); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.preview_outcomes(p_verdicts jsonb, p_policy jsonb) IS 'What the next cycle would do with each recording of p_verdicts (a JSON array of {recording_id, outcome, file_id, size_bytes, duration_seconds, format, error, bucket_confirmed}: the file-storage verdict the driver just saw, as for apply_outcome, and whether the HeadBucket it came with answered, which decides the worker''s own storage incident before the next cycle claims: see outcome_decision''s p_bucket_confirmed), decided by the real path''s own functions: claim_action from recording_finalize_internal.claim_decision (none when the row is not Pending or there is no row), and for reconcile the result of recording_finalize_internal.outcome_decision with the attempt the claim would count (reconciled, failed, deferred_by_incident, backoff, held_by_incident, quarantined, config_error_released); for the other claim actions result is that action. next_attempt_at: when a Pending row would be due (the claim''s backoff without its jitter). The busy and stale no-ops of a race cannot be previewed. STABLE: writes nothing, locks nothing. RF001 for a bad verdict list (not an array, more than 10000, an element that is not an object with a UUID recording_id and a known outcome, sizes that are not whole numbers, a bucket_confirmed that is not a boolean). Operator API (SECURITY DEFINER): run-once --dry-run and explain.';

--
-- Name: prune(interval, integer, boolean); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.prune(p_older_than interval, p_batch_size integer DEFAULT 1000, p_dry_run boolean DEFAULT false) RETURNS TABLE(finalize bigint, leases bigint, incidents bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '100ms'
    AS $$
#variable_conflict use_column
declare
    v_cutoff timestamptz;
    v_incident_cutoff timestamptz;
    v_upload_grace_max interval;
begin
    perform recording_finalize_internal.check_retention(p_older_than);
    if p_batch_size is null or p_batch_size not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: prune: p_batch_size must be 1..10000, got %s',
                p_batch_size);
    end if;
    if p_dry_run is null then
        raise exception using
            errcode = 'RF001', message = 'invalid_parameter: prune: p_dry_run must be set';
    end if;
    select s.upload_grace_max into v_upload_grace_max from recording_finalize.settings as s;
    v_cutoff := now() - p_older_than;
    -- An incident defers a 404 for the upload grace after it ended, and no grace exceeds
    -- settings.upload_grace_max: only an incident that ended before both is of no more use
    -- (the owner may lower retention_min below the grace cap).
    v_incident_cutoff := least(v_cutoff, now() - v_upload_grace_max);

    if p_dry_run then
        return query select
            (select count(*) from messenger.recording_finalize_attempts as f
                where f.status = 'Done' and f.updated_at < v_cutoff
                    and not exists (select from messenger.call_recordings as r
                        where r.id = f.recording_id and r.status not in ('Available', 'Failed'))),
            (select count(*) from recording_finalize.relay_leases as l
                where l.leased_until < now()),
            (select count(*) from recording_finalize.storage_incidents as i
                where i.ended_at < v_incident_cutoff);
        return;
    end if;

    -- Done rows settled before the cutoff (oldest first, recording_finalize_attempts_done_idx).
    -- A Done row is the product's record that its work on a recording is over; the recording and
    -- its events are the service's, and the service's retention, not this one, removes them. A
    -- Done row of a recording that is not terminal is an audit finding (done_not_terminal): kept.
    with gone as (
        delete from messenger.recording_finalize_attempts as f
        where f.id in (
            select x.id from messenger.recording_finalize_attempts as x
            where x.status = 'Done' and x.updated_at < v_cutoff
                and not exists (select from messenger.call_recordings as r
                    where r.id = x.recording_id and r.status not in ('Available', 'Failed'))
            order by x.updated_at
            limit p_batch_size
            for update skip locked
        )
        returning 1
    )
    select count(*) into finalize from gone;

    -- Leases that expired: the relay deletes the leases it marks; these are leases of events it
    -- never marked (a failed delivery, a killed relay, an event the service removed meanwhile).
    with gone as (
        delete from recording_finalize.relay_leases as l
        where l.outbox_id in (
            select x.outbox_id from recording_finalize.relay_leases as x
            where x.leased_until < now()
            limit p_batch_size
            for update skip locked
        )
        returning 1
    )
    select count(*) into leases from gone;

    -- Storage incidents that ended before the cutoff, and before any upload grace, can defer
    -- nothing any more.
    with gone as (
        delete from recording_finalize.storage_incidents as i
        where i.id in (
            select x.id from recording_finalize.storage_incidents as x
            where x.ended_at < v_incident_cutoff
            order by x.ended_at
            limit p_batch_size
            for update skip locked
        )
        returning 1
    )
    select count(*) into incidents from gone;
    return next;
end
$$;

--
-- Name: FUNCTION prune(p_older_than interval, p_batch_size integer, p_dry_run boolean); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.prune(p_older_than interval, p_batch_size integer, p_dry_run boolean) IS 'Retention of the product''s own rows, one batch per call (the driver calls it until every count is below p_batch_size, each call its own transaction): deletes up to p_batch_size (1..10000) each of Done finalize rows settled before now() - p_older_than (>= 1 minute and >= settings.retention_min: RF010; a Done row of a recording that is not terminal is kept), expired relay leases, and storage incidents that ended before the cutoff and more than settings.upload_grace_max ago (one that may still defer a 404 is kept). Never a row of the service: integration_outbox and realtime_outbox retention is the messenger service''s. SKIP LOCKED: never waits on the worker or the service. p_dry_run: counts what would go, deletes nothing. RF001 for bad arguments (the COLUMN field says retention for p_older_than, as for RF010). Worker (run''s hourly pruner) and operator API (SECURITY DEFINER).';

--
-- Name: quarantined_rows(integer, text, timestamp with time zone); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.quarantined_rows(p_limit integer DEFAULT 100, p_reason_code text DEFAULT NULL::text, p_since timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(recording_id uuid, session_kind text, session_id uuid, attempts integer, last_error text, quarantine_reason text, quarantined_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: quarantined_rows: p_limit must be 1..10000, '
                'got %s', p_limit);
    end if;
    if p_reason_code is not null and p_reason_code not in (
        'max_attempts', 'crash_loop', 'invalid_metadata', 'recording_not_found',
        'session_not_found') then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: quarantined_rows: unknown quarantine reason code '
                '%L', p_reason_code),
            hint = 'One of max_attempts, crash_loop, invalid_metadata, recording_not_found, '
                'session_not_found.';
    end if;
    return query
    select f.recording_id, f.session_kind::text, f.session_id, f.attempts, f.last_error::text,
        f.quarantine_reason::text, f.updated_at
    from messenger.recording_finalize_attempts as f
    where f.status = 'Quarantined'
        and (p_reason_code is null or f.quarantine_reason = p_reason_code)
        and (p_since is null or f.updated_at >= p_since)
    order by f.updated_at, f.recording_id
    limit p_limit;
end
$$;

--
-- Name: FUNCTION quarantined_rows(p_limit integer, p_reason_code text, p_since timestamp with time zone); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.quarantined_rows(p_limit integer, p_reason_code text, p_since timestamp with time zone) IS 'Runbook listing: up to p_limit (1..10000) Quarantined rows, oldest first, with attempts, last_error (error class and code, no PII, no URL) and quarantine_reason; only those of p_reason_code and quarantined since p_since when given (RF001 for an unknown code). What the bulk requeue hands to reschedule. Read-only. Operator API (SECURITY DEFINER).';

--
-- Name: recording_ingest_completed(uuid, text, bigint, integer, text, text); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.recording_ingest_completed(p_recording_id uuid, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_topic text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_topic text := recording_finalize_internal.topic(p_topic);
    v_rec recording_finalize_internal.recording;
    v_problem text;
    v_result text;
begin
    -- Lock order everywhere: session, recording, finalize row (the session is only read). This
    -- is the service's transaction: the worker holds no recording it would wait for (the claim
    -- locks none; apply_outcome takes it SKIP LOCKED and gives up what it cannot have at once);
    -- it may wait for a claim that holds the finalize row, for that claim's call (a batch).
    perform from messenger.call_recordings as r
    where r.id = p_recording_id
    for no key update;
    if not found then
        raise exception using
            errcode = 'RF003',
            message = format('recording_not_found: recording_ingest_completed: recording %s does '
                'not exist', p_recording_id);
    end if;
    select x.* into v_rec from recording_finalize_internal.recording_row(p_recording_id) as x;

    if v_rec.status = 'Available' then
        -- A duplicated callback. If the worker's row is not closed (Pending, or Quarantined: a
        -- human was to look), the event is made sure of (a no-op when it exists) before the row
        -- closes below; a Done or absent row means it was enqueued already (and maybe published
        -- and removed by the service's retention since: never enqueued twice).
        if exists (
            select from messenger.recording_finalize_attempts as f
            where f.recording_id = p_recording_id and f.status <> 'Done'
        ) then
            perform recording_finalize_internal.enqueue_available(
                v_rec,
                recording_finalize_internal.session_of(v_rec.session_kind, v_rec.session_id),
                v_topic);
        end if;
        v_result := 'already_available';
    elsif v_rec.status = 'Failed' then
        -- A callback after the safety net gave up: terminal states are never left.
        v_result := 'already_failed';
    else
        v_problem := recording_finalize_internal.metadata_problem(
            p_file_id, p_size_bytes, p_duration_seconds, p_format);
        if v_problem is not null then
            raise exception using
                errcode = 'RF002',
                message = format('invalid_file_metadata: recording %s: unusable file metadata: %s',
                    p_recording_id, v_problem);
        end if;
        perform recording_finalize_internal.transition_available(
            p_recording_id, p_file_id, p_size_bytes, p_duration_seconds, p_format,
            recording_finalize_internal.session_of(v_rec.session_kind, v_rec.session_id),
            v_topic);
        v_result := 'available';
    end if;

    -- The recording is terminal: the worker's row, if any, is done (its claim token spent).
    update messenger.recording_finalize_attempts as f
    set status = 'Done', claim_token = null, quarantine_reason = null, updated_at = now()
    where f.recording_id = p_recording_id and f.status <> 'Done';
    return v_result;
end
$$;

--
-- Name: FUNCTION recording_ingest_completed(p_recording_id uuid, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_topic text); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.recording_ingest_completed(p_recording_id uuid, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_topic text) IS 'Service API, the ingest callback of the media recorder (happy path): a non-terminal recording gets the same transition and outbox rows as apply_outcome(found) - Available, event, realtime row - and its finalize row, if any, is closed Done; returns available. Idempotent: an Available recording returns already_available (its event made sure of while the worker''s row is Pending or Quarantined; nothing rewritten), a Failed one already_failed (terminal is never left); either way its finalize row is closed. RF003 unknown recording, RF002 unusable metadata (the rule in words, recording_finalize_internal.metadata_problem), RF009 for a p_topic other than the server''s (NULL = the server''s). The service''s transaction: it may wait for a claim holding the finalize row (that call''s duration), never the worker for it. Service API (SECURITY DEFINER).';

--
-- Name: recording_started(uuid, text, uuid, text, text); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.recording_started(p_recording_id uuid, p_session_kind text, p_session_id uuid, p_media_type text, p_trigger text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_session recording_finalize_internal.session;
begin
    -- The enumerations are checked here: the service's table may or may not have CHECKs.
    if p_media_type is null or p_media_type not in ('Audio', 'Video')
        or p_trigger is null or p_trigger not in ('Manual', 'Auto') then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: recording_started: media type must be Audio or '
                'Video and trigger Manual or Auto, got %s and %s', coalesce(p_media_type, 'NULL'),
                coalesce(p_trigger, 'NULL'));
    end if;
    -- FOR SHARE on the session before ended_at is read: a concurrent session_ended (an UPDATE
    -- of that row) waits until this start commits and then sees the recording, or ended first
    -- and this read sees its ended_at. Lock order everywhere: session, recording, finalize row.
    v_session := recording_finalize_internal.session_of(
        p_session_kind, p_session_id, p_for_share => true);
    if v_session.id is null then
        raise exception using
            errcode = 'RF004',
            message = format('recording_started: no %s session %s', p_session_kind, p_session_id);
    end if;
    if v_session.ended_at is not null then
        raise exception using
            errcode = 'RF007',
            message = format('recording_started: session %s has already ended', p_session_id);
    end if;

    -- A repeated start of the same recording is a no-op; the same id in another session is not.
    if exists (select from messenger.call_recordings as r where r.id = p_recording_id) then
        if not exists (
            select from messenger.call_recordings as r
            where r.id = p_recording_id and r.session_kind = p_session_kind
                and r.session_id = p_session_id
        ) then
            raise exception using
                errcode = 'RF007',
                message = format(
                    'recording_started: recording %s belongs to another session, not %s %s',
                    p_recording_id, p_session_kind, p_session_id
                );
        end if;
        return;
    end if;

    begin
        insert into messenger.call_recordings (
            id, session_kind, session_id, media_type, trigger, status, started_at
        )
        values (
            p_recording_id, p_session_kind, p_session_id, p_media_type, p_trigger, 'Recording',
            now()
        );
    exception when unique_violation then
        -- Told by what is there, not by the constraint's name (the table is the service's): a
        -- concurrent delivery of the same start committed first (at-least-once retry) is a no-op;
        -- the same id in another session, or another active recording in this one, is not.
        if exists (
            select from messenger.call_recordings as r
            where r.id = p_recording_id and r.session_kind = p_session_kind
                and r.session_id = p_session_id
        ) then
            return;
        elsif exists (select from messenger.call_recordings as r where r.id = p_recording_id) then
            raise exception using
                errcode = 'RF007',
                message = format(
                    'recording_conflict: recording_started: recording %s belongs to another '
                    'session, not %s %s', p_recording_id, p_session_kind, p_session_id
                );
        end if;
        raise exception using
            errcode = 'RF007',
            message = format(
                'recording_conflict: recording_started: session %s already has an active '
                'recording', p_session_id
            ),
            hint = 'ix_recording_active allows one non-terminal recording per session.';
    end;
end
$$;

--
-- Name: FUNCTION recording_started(p_recording_id uuid, p_session_kind text, p_session_id uuid, p_media_type text, p_trigger text); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.recording_started(p_recording_id uuid, p_session_kind text, p_session_id uuid, p_media_type text, p_trigger text) IS 'Service API, lifecycle (the messenger service, as a login granted recording_finalize_service): inserts the recording in status Recording, started_at = now(). No finalize row yet: one is opened when the recording or its session ends. Idempotent by RecordingId, also under concurrency (two deliveries of the same start at once: the one that loses the primary-key race returns too). RF001 bad session kind, RF004 unknown session, RF007 session ended, another non-terminal recording in it (ix_recording_active), or the recording id already belongs to another session; RF001 for a media type other than Audio/Video or a trigger other than Manual/Auto. Concurrency: locks the session FOR SHARE, so a concurrent session_ended either waits for this start (and opens its finalize row) or ended first (RF007 here).';

--
-- Name: recording_stopped(uuid, interval); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.recording_stopped(p_recording_id uuid, p_sla_timeout interval DEFAULT '00:30:00'::interval) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_rec recording_finalize_internal.recording;
begin
    if p_sla_timeout is null or p_sla_timeout <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('recording_stopped: p_sla_timeout must be > 0, got %s', p_sla_timeout);
    end if;

    -- Lock order everywhere: session, recording, finalize row. The session is only read here
    -- (no lock), so taking the recording first keeps that order.
    perform from messenger.call_recordings as r
    where r.id = p_recording_id
    for no key update;
    if not found then
        raise exception using
            errcode = 'RF003',
            message = format('recording_not_found: recording_stopped: recording %s does not exist',
                p_recording_id);
    end if;
    select x.* into v_rec from recording_finalize_internal.recording_row(p_recording_id) as x;
    if v_rec.status in ('Available', 'Failed') then
        return v_rec.status;
    end if;

    if v_rec.status in ('Pending', 'Recording') then
        update messenger.call_recordings as r
        set status = 'Uploading',
            ended_at = coalesce(r.ended_at, now()),
            version = r.version + 1,
            updated_at = now()
        where r.id = p_recording_id;
    end if;

    -- Due one SLA after the session ends; while it runs, one SLA from now (claim re-times it).
    perform recording_finalize_internal.schedule_finalize(
        v_rec.id, v_rec.session_kind, v_rec.session_id,
        coalesce(
            (recording_finalize_internal.session_of(v_rec.session_kind, v_rec.session_id)).ended_at,
            now()
        ) + p_sla_timeout
    );
    return 'Uploading';
end
$$;

--
-- Name: FUNCTION recording_stopped(p_recording_id uuid, p_sla_timeout interval); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.recording_stopped(p_recording_id uuid, p_sla_timeout interval) IS 'Service API, lifecycle (the messenger service, as a login granted recording_finalize_service): Pending/Recording -> Uploading (ended_at = now(), version + 1) and opens the finalize row, due at session end + p_sla_timeout (now() + p_sla_timeout while the session still runs). Idempotent: Uploading stays, a terminal recording is left alone and its status returned. RF001 bad SLA, RF003 unknown recording.';

--
-- Name: relay_claim(integer, interval, bigint, text); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.relay_claim(p_limit integer DEFAULT 500, p_lease interval DEFAULT '00:01:00'::interval, p_lock_key bigint DEFAULT NULL::bigint, p_topic text DEFAULT NULL::text) RETURNS TABLE(id bigint, message_key text, payload text, headers jsonb, lease_token uuid)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '100ms'
    AS $$
#variable_conflict use_column
declare
    v_topic text := recording_finalize_internal.topic(p_topic);
    v_s recording_finalize.settings%rowtype;
    v_token uuid := gen_random_uuid();
    v_holder integer;
    v_live integer[];
    v_ids bigint[];
begin
    perform recording_finalize_internal.check_relay_batch(p_limit);
    if p_lease is null or p_lease <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: relay_claim: p_lease must be > 0, got %s',
                p_lease);
    end if;
    select s.* into v_s from recording_finalize.settings as s;

    -- The session that holds the single-runner lock now (the caller's cycle, p_lock_key). A
    -- lease taken under an earlier holder is void: that runner lost the lock (it died, or its
    -- session ended), so its events are published by this cycle, not after its lease.
    if p_lock_key is not null then
        select l.pid into v_holder
        from pg_catalog.pg_locks as l
        where l.locktype = 'advisory' and l.granted and l.objsubid = 1
            and l.database = (
                select d.oid from pg_catalog.pg_database as d
                where d.datname = pg_catalog.current_database()
            )
            and l.classid = ((p_lock_key >> 32) & 4294967295)::oid
            and l.objid = (p_lock_key & 4294967295)::oid
        limit 1;
        -- The backends that hold a session advisory lock of this database now: a lease whose
        -- holder is one of them is live (a runner of another lock key, a concurrent relay, keeps
        -- its leases); any other holder lost its lock, and its lease is void.
        select pg_catalog.array_agg(l.pid) into v_live
        from pg_catalog.pg_locks as l
        where l.locktype = 'advisory' and l.granted and l.objsubid = 1
            and l.database = (
                select d.oid from pg_catalog.pg_database as d
                where d.datname = pg_catalog.current_database()
            );
    end if;

    -- The lease lives in the product's table: the service's outbox is only read here. A lease
    -- never lasts longer than the server allows. Two relays at once: the second's INSERT waits
    -- for the lease rows the first has not committed yet (a unique-key wait), at most
    -- lock_timeout; past it, this call leases nothing (below) rather than fail the cycle.
    begin
        with candidates as (
            select o.id
            from messenger.integration_outbox as o
            where o.topic = v_topic
                and o.published_at is null
                and not exists (
                    select from recording_finalize.relay_leases as l
                    where l.outbox_id = o.id and l.leased_until > now()
                        and (v_holder is null or l.holder_pid = any(v_live))
                )
            order by o.id
            limit p_limit
        ),
        leased as (
            insert into recording_finalize.relay_leases as l (
                outbox_id, lease_token, leased_until, holder_pid
            )
            select c.id, v_token, now() + least(p_lease, v_s.relay_lease_max), v_holder
            from candidates as c
            on conflict (outbox_id) do update
            set lease_token = excluded.lease_token,
                leased_until = excluded.leased_until,
                holder_pid = excluded.holder_pid,
                leased_at = now()
            where l.leased_until <= now()
                or (excluded.holder_pid is not null
                    and not coalesce(l.holder_pid = any(v_live), false))
            returning l.outbox_id
        )
        select pg_catalog.array_agg(x.outbox_id) into v_ids from leased as x;
    exception when lock_not_available then
        -- Another relay (or prune) holds lease rows of this batch at this moment: they are
        -- its; the rows left are the next call's. Nothing was leased by this one (the block
        -- rolled back), so nothing is returned.
        return;
    end;

    -- Returned only once every lease is in: a row is never handed out unleased.
    return query
    select o.id, o.message_key, o.payload::text, o.headers, v_token
    from messenger.integration_outbox as o
    where o.id = any(v_ids)
    order by o.id;
end
$$;

--
-- Name: FUNCTION relay_claim(p_limit integer, p_lease interval, p_lock_key bigint, p_topic text); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.relay_claim(p_limit integer, p_lease interval, p_lock_key bigint, p_topic text) IS 'Outbox relay, call 1 of 2: leases up to p_limit (1..10000, and at most settings.relay_batch_max: RF010) unpublished integration-outbox rows of the server''s topic for p_lease (capped at settings.relay_lease_max), oldest first, and returns them with payload as the exact text to publish and one lease_token for the batch. The lease is a row of recording_finalize.relay_leases (nothing is written in the service''s outbox). Live leases are skipped; an expired lease is taken over; with p_lock_key (the single-runner lock the caller''s cycle holds) so is every lease whose holder no longer holds a session advisory lock of this database (it lost the runner lock: killed, its session ended, unlocked), so events leased by a killed relay are published by the next cycle, and a live runner of another lock key keeps its leases. Never waits longer than lock_timeout (100 ms) for another relay''s uncommitted leases: past it, it leases nothing and returns no row (no error). RF001 for bad arguments, RF009 for a p_topic other than the server''s (NULL = the server''s); the COLUMN field of an RF001 or RF010 about p_limit says relay_batch_size. Worker API (SECURITY DEFINER).';

--
-- Name: relay_mark_published(bigint[], uuid); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.relay_mark_published(p_ids bigint[], p_lease_token uuid) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_topic text := recording_finalize_internal.topic(null);
    v_marked integer;
begin
    -- Only rows of our topic leased with this token: another topic's rows, rows another relay
    -- took over, rows never leased are left alone. A row the service holds at this moment is
    -- skipped, never waited for: it is published again by a later cycle (at least once).
    with mine as (
        delete from recording_finalize.relay_leases as l
        where l.outbox_id = any(p_ids) and l.lease_token = p_lease_token
        returning l.outbox_id
    ),
    free as (
        select o.id from messenger.integration_outbox as o
        inner join mine as m on m.outbox_id = o.id
        where o.topic = v_topic and o.published_at is null
        for no key update of o skip locked
    )
    update messenger.integration_outbox as o
    set published_at = now()
    from free
    where o.id = free.id;
    get diagnostics v_marked = row_count;
    return v_marked;
end
$$;

--
-- Name: FUNCTION relay_mark_published(p_ids bigint[], p_lease_token uuid); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.relay_mark_published(p_ids bigint[], p_lease_token uuid) IS 'Outbox relay, call 2 of 2 (called as acknowledgements arrive, so a crash re-delivers only what was in flight): sets published_at on the rows of p_ids that are unpublished rows of the server''s topic leased with p_lease_token, and drops their leases; returns how many it marked. Never waits: a row another transaction holds is skipped (its lease is dropped, so a later cycle publishes it again). Worker API (SECURITY DEFINER).';

--
-- Name: release_claims(uuid[], uuid[]); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.release_claims(p_recording_ids uuid[], p_claim_tokens uuid[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '100ms'
    AS $$
declare
    v_released integer;
begin
    if p_recording_ids is null or p_claim_tokens is null
        or cardinality(p_recording_ids) <> cardinality(p_claim_tokens)
        or cardinality(p_recording_ids) > 10000 then
        raise exception using
            errcode = 'RF001',
            message = 'invalid_parameter: release_claims: p_recording_ids and p_claim_tokens must '
                'be arrays of the same length, at most 10000';
    end if;
    -- Only a row still claimed with that token: one another runner re-claimed, or that was
    -- settled meanwhile, is not this worker's to give back. A row another transaction holds
    -- right now (the ingest callback closing it) is skipped, not waited for: a stopping worker
    -- must not fail its whole release on one row that is being settled anyway.
    update messenger.recording_finalize_attempts as f
    set attempts = greatest(f.attempts - 1, 0),
        next_attempt_at = now(),
        claim_token = null,
        updated_at = now()
    where f.id in (
        select x.id
        from messenger.recording_finalize_attempts as x
        join unnest(p_recording_ids, p_claim_tokens) as c (recording_id, token)
            on x.recording_id = c.recording_id and x.claim_token = c.token
        where x.status = 'Pending'
        for no key update of x skip locked
    );
    get diagnostics v_released = row_count;
    return v_released;
end
$$;

--
-- Name: FUNCTION release_claims(p_recording_ids uuid[], p_claim_tokens uuid[]); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.release_claims(p_recording_ids uuid[], p_claim_tokens uuid[]) IS 'For a stopping worker (SIGTERM): the rows it claimed and will not check get their attempt back and are due now, their claim token cleared; only rows still Pending and claimed with the token given (re-claimed or settled rows are left alone); a row another transaction holds is skipped (SKIP LOCKED), never waited for. Returns how many it released. RF001 for arrays of different lengths or more than 10000. Worker API (SECURITY DEFINER).';

--
-- Name: requeue(uuid, text); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.requeue(p_recording_id uuid, p_reason text DEFAULT 'recording_finalize.requeue()'::text) RETURNS TABLE(recording_id uuid, status text, attempts integer, next_attempt_at timestamp with time zone, last_error text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    return query
    select r.recording_id, r.status, r.attempts, r.next_attempt_at, r.last_error
    from recording_finalize.reschedule(
        array[p_recording_id], 'Quarantined', session_user::text, p_reason, true
    ) as r;
end
$$;

--
-- Name: FUNCTION requeue(p_recording_id uuid, p_reason text); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.requeue(p_recording_id uuid, p_reason text) IS 'The runbook''s re-enqueue (SPEC section 3): Quarantined -> Pending, attempts = 0, due now, audited with the login as operator; exactly reschedule(array[p_recording_id], ''Quarantined'', session_user, p_reason, true). RF005 no finalize row, RF006 not Quarantined. Operator API (SECURITY DEFINER).';

--
-- Name: reschedule(uuid[], text, text, text, boolean); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.reschedule(p_recording_ids uuid[], p_from_status text, p_operator text, p_reason text, p_strict boolean DEFAULT true) RETURNS TABLE(recording_id uuid, status text, attempts integer, next_attempt_at timestamp with time zone, last_error text, quarantine_reason text, quarantined_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '1s'
    AS $$
#variable_conflict use_column
declare
    v_missing uuid;
    v_wrong record;
begin
    if p_from_status is null or p_from_status not in ('Quarantined', 'Pending') then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: reschedule: p_from_status must be Quarantined '
                '(requeue) or Pending (retry), got %s', coalesce(p_from_status, 'NULL'));
    end if;
    -- A NULL id names no row: in strict mode it would slip past the RF005 check below.
    if p_recording_ids is null or cardinality(p_recording_ids) not between 1 and 1000
        or pg_catalog.array_position(p_recording_ids, null) is not null
        or p_strict is null then
        raise exception using
            errcode = 'RF001',
            message = 'invalid_parameter: reschedule: p_recording_ids must hold 1..1000 ids, '
                'none NULL, and p_strict be set';
    end if;
    perform recording_finalize_internal.check_operator(
        case p_from_status when 'Quarantined' then 'requeue' else 'retry' end,
        p_operator, p_reason);

    -- One lock form, in one order (by recording id, so two operators never deadlock).
    perform from messenger.recording_finalize_attempts as f
    where f.recording_id = any(p_recording_ids)
    order by f.recording_id
    for no key update;

    if p_strict then
        select x into v_missing from unnest(p_recording_ids) as x
        where not exists (
            select from messenger.recording_finalize_attempts as f where f.recording_id = x
        )
        order by x
        limit 1;
        if v_missing is not null then
            raise exception using
                errcode = 'RF005',
                message = format('finalize_row_not_found: recording %s has no finalize row',
                    v_missing);
        end if;
        select f.recording_id, f.status into v_wrong
        from messenger.recording_finalize_attempts as f
        where f.recording_id = any(p_recording_ids) and f.status <> p_from_status
        order by f.recording_id
        limit 1;
        if v_wrong.recording_id is not null then
            raise exception using
                errcode = case p_from_status when 'Quarantined' then 'RF006' else 'RF020' end,
                message = format('%s: the finalize row of recording %s is %s, not %s',
                    case p_from_status when 'Quarantined' then 'not_quarantined'
                        else 'not_pending' end,
                    v_wrong.recording_id, v_wrong.status, p_from_status),
                hint = case p_from_status when 'Quarantined'
                    then 'A Pending row backing off is made due now with retry.'
                    else 'A Quarantined row is handed back with requeue.' end;
        end if;
    end if;

    -- Requeue: Quarantined -> Pending with attempts 0, its verdict history cleared (so that a
    -- crash loop after it is recognised again). Retry: a Pending row becomes due now, attempts
    -- and last verdict kept. Both: due now, no claim, the last error kept for the record.
    return query
    with before as (
        select f.id, f.recording_id, f.attempts, f.last_error, f.quarantine_reason,
            f.updated_at
        from messenger.recording_finalize_attempts as f
        where f.recording_id = any(p_recording_ids) and f.status = p_from_status
    ),
    moved as (
        update messenger.recording_finalize_attempts as f
        set status = 'Pending',
            attempts = case when p_from_status = 'Quarantined' then 0 else f.attempts end,
            last_outcome = case when p_from_status = 'Quarantined' then null
                else f.last_outcome end,
            quarantine_reason = null,
            next_attempt_at = now(),
            claim_token = null,
            updated_at = now()
        from before as b
        where f.id = b.id
        returning f.recording_id, f.status, f.attempts, f.next_attempt_at, f.last_error
    ),
    -- A data-modifying WITH runs whether or not it is read.
    audited as (
        insert into recording_finalize.operator_actions (
            recording_id, action_kind, operator_name, reason, detail
        )
        select b.recording_id,
            case when p_from_status = 'Quarantined' then 'requeue' else 'retry' end,
            btrim(p_operator), btrim(p_reason),
            jsonb_build_object('attempts', b.attempts, 'quarantineReason', b.quarantine_reason,
                'lastError', b.last_error, 'bulk', cardinality(p_recording_ids) > 1)
        from before as b
    )
    select m.recording_id, m.status::text, m.attempts, m.next_attempt_at, m.last_error::text,
        b.quarantine_reason::text,
        case when p_from_status = 'Quarantined' then b.updated_at end
    from moved as m
    inner join before as b on b.recording_id = m.recording_id
    order by m.recording_id;
end
$$;

--
-- Name: FUNCTION reschedule(p_recording_ids uuid[], p_from_status text, p_operator text, p_reason text, p_strict boolean); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.reschedule(p_recording_ids uuid[], p_from_status text, p_operator text, p_reason text, p_strict boolean) IS 'The operator''s one way to hand rows back to the worker, set-based (1..1000 recording ids) and audited (one row per recording in recording_finalize.operator_actions naming p_operator and p_reason, both required: RF001; a NULL id is RF001 too). p_from_status Quarantined (requeue): Pending, attempts 0, quarantine reason and last verdict cleared, due now. p_from_status Pending (retry): due now, attempts and last verdict kept. The last error is kept either way. Locks the rows FOR NO KEY UPDATE in recording-id order. p_strict (the single-id commands): RF005 when an id has no finalize row, RF006 (requeue) or RF020 (retry) when a row is not in p_from_status, nothing changed; not strict (the bulk form): such ids are skipped. Returns the rescheduled rows with the reason they were quarantined for and since when. Operator API (SECURITY DEFINER).';

--
-- Name: schema_state(); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.schema_state() RETURNS TABLE(kind text, name text, sha256 text, recorded_md5 text, live_md5 text, package_version text, recorded_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- Every migration yoyo applied, with the checksum migrate recorded for its file (if any).
    select 'migration', m.migration_id::text, c.sha256::text, null, null,
        c.package_version, m.applied_at_utc at time zone 'UTC'
    from recording_finalize_migrations._yoyo_migration as m
    left join recording_finalize_migrations.file_checksums as c
        on c.kind = 'migration' and m.migration_id = c.file_name
    union all
    -- Every function file migrate applied: as recorded then, and the definitions as they are.
    select 'function', c.file_name, c.sha256::text, c.definition_md5::text,
        recording_finalize_internal.function_fingerprint(c.file_name), c.package_version,
        c.recorded_at
    from recording_finalize_migrations.file_checksums as c
    where c.kind = 'function'
    union all
    -- The last successful migrate: name is the schema version it left.
    select 'migrate', s.schema_version, null, null, null, s.package_version, s.migrated_at
    from recording_finalize_migrations.migrate_state as s
$$;

--
-- Name: FUNCTION schema_state(); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.schema_state() IS 'Schema drift check: one row per applied migration (kind migration: id, file sha256 recorded by migrate), per applied function file (kind function: file name, sha256 and definition fingerprint recorded right after applying it, live_md5 = the fingerprint now) and one row kind migrate (name = schema version, package_version of the last migrate). The driver compares it with the installed package before run/run-once touch a row, and status shows it. Read-only. Worker API (SECURITY DEFINER).';

--
-- Name: server_settings(); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.server_settings() RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET "IntervalStyle" TO 'postgres'
    AS $$
    select pg_catalog.to_jsonb(s) - 'singleton' - 'policy_seal_key'
    from recording_finalize.settings as s
$$;

--
-- Name: FUNCTION server_settings(); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.server_settings() IS 'The one row of recording_finalize.settings as a JSON object (topic and every bound, intervals in the postgres IntervalStyle whatever the session''s, e.g. 00:00:01, 1 day): what check_policy compares a policy with. Read-only; only the owner changes the table (UPDATE). Worker and operator API (SECURITY DEFINER).';

--
-- Name: session_ended(text, uuid, interval); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.session_ended(p_session_kind text, p_session_id uuid, p_sla_timeout interval DEFAULT '00:30:00'::interval) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_ended_at timestamptz;
    v_recording_id uuid;
    v_status text;
begin
    if p_sla_timeout is null or p_sla_timeout <= interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('session_ended: p_sla_timeout must be > 0, got %s', p_sla_timeout);
    end if;

    -- The only writer of ended_at, so the update stays here (the lookups share session_of).
    -- It locks the session first: lock order everywhere is session, recording, finalize row, and
    -- it waits for a recording_started holding the session FOR SHARE.
    if p_session_kind = 'Direct' then
        update messenger.call_sessions as s
        set ended_at = coalesce(s.ended_at, now())
        where s.id = p_session_id
        returning s.ended_at into v_ended_at;
    elsif p_session_kind = 'Conference' then
        update messenger.conference_sessions as s
        set ended_at = coalesce(s.ended_at, now())
        where s.id = p_session_id
        returning s.ended_at into v_ended_at;
    else
        raise exception using
            errcode = 'RF001',
            message = format(
                'session_ended: p_session_kind must be Direct or Conference, got %s',
                coalesce(p_session_kind, 'NULL')
            );
    end if;
    if v_ended_at is null then
        raise exception using
            errcode = 'RF004',
            message = format('session_ended: no %s session %s', p_session_kind, p_session_id);
    end if;

    select r.id, r.status::text into v_recording_id, v_status from messenger.call_recordings as r
    where r.session_kind = p_session_kind
        and r.session_id = p_session_id
        and r.status in ('Pending', 'Recording', 'Uploading')
    for no key update;
    if not found then
        return null;
    end if;

    if v_status = 'Recording' then
        update messenger.call_recordings as r
        set status = 'Uploading',
            ended_at = coalesce(r.ended_at, v_ended_at),
            version = r.version + 1,
            updated_at = now()
        where r.id = v_recording_id;
    end if;

    perform recording_finalize_internal.schedule_finalize(
        v_recording_id, p_session_kind, p_session_id, v_ended_at + p_sla_timeout
    );
    return v_recording_id;
end
$$;

--
-- Name: FUNCTION session_ended(p_session_kind text, p_session_id uuid, p_sla_timeout interval); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.session_ended(p_session_kind text, p_session_id uuid, p_sla_timeout interval) IS 'Service API, lifecycle (the messenger service, as a login granted recording_finalize_service): sets the session''s ended_at (kept if already set); its non-terminal recording, if any, goes Recording -> Uploading and gets its finalize row due at ended_at + p_sla_timeout (an untried row is re-timed). Returns that recording''s id or NULL. Idempotent. RF001 bad kind or SLA, RF004 unknown session.';

--
-- Name: set_pause(text, boolean, text, text); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.set_pause(p_part text, p_paused boolean, p_operator text, p_reason text DEFAULT NULL::text) RETURNS TABLE(part text, paused boolean, paused_at timestamp with time zone, paused_by text, reason text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
    v_parts text[];
    v_reason text := nullif(btrim(p_reason), '');
begin
    if p_part is null or p_part not in ('reconcile', 'relay', 'all') then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: pause: the part must be reconcile, relay or '
                'all, got %L', p_part);
    end if;
    if p_paused is null then
        raise exception using
            errcode = 'RF001', message = 'invalid_parameter: pause: p_paused must be set';
    end if;
    -- Every operator action states why (the CLI passes its own text when --reason is omitted).
    if v_reason is null then
        raise exception using
            errcode = 'RF001',
            message = 'invalid_parameter: pause: p_reason must be given (a pause or resume is '
                'an audited action)';
    end if;
    v_parts := case when p_part = 'all' then array['reconcile', 'relay'] else array[p_part] end;
    perform recording_finalize_internal.record_operator_action(
        null, case when p_paused then 'pause' else 'resume' end, p_operator, v_reason,
        jsonb_build_object('part', p_part)
    );
    if p_paused then
        insert into recording_finalize.pause as s (part, paused_by, reason)
        select x, btrim(p_operator), v_reason from unnest(v_parts) as x
        on conflict (part) do update
        -- A re-pause is a new pause: its time and login go with its name and reason.
        set paused_by = excluded.paused_by, reason = excluded.reason, paused_at = now(),
            login_role = session_user;
    else
        delete from recording_finalize.pause as s where s.part = any(v_parts);
    end if;
    return query
    select x, s.part is not null, s.paused_at, s.paused_by, s.reason
    from unnest(array['reconcile', 'relay']) as x
    left join recording_finalize.pause as s on s.part = x
    order by x;
end
$$;

--
-- Name: FUNCTION set_pause(p_part text, p_paused boolean, p_operator text, p_reason text); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.set_pause(p_part text, p_paused boolean, p_operator text, p_reason text) IS 'Pause switch: p_paused true pauses p_part (reconcile, relay or all) for every runner from its next cycle, false resumes it; idempotent (pausing a paused part again records the new paused_at, name, login_role = session_user and reason). Writes one operator audit row (pause/resume, with the login). Returns the state of both parts after the change. RF001 for an unknown part, an empty operator or a missing reason. Operator API (SECURITY DEFINER).';

--
-- Name: stats(text); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.stats(p_topic text DEFAULT NULL::text) RETURNS TABLE(backlog bigint, due bigint, oldest_age_seconds double precision, quarantined bigint, publish_backlog bigint, oldest_unpublished_age_seconds double precision)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
    v_topic text := recording_finalize_internal.topic(p_topic);
    v_unpublished bigint;
    v_oldest_id bigint;
begin
    -- The unpublished events counted and the lowest id found in one pass. Not an ORDER BY id
    -- LIMIT 1 of its own: the planner takes the primary key for it (it expects an unpublished
    -- row every few ids) and walks every published row before the first unpublished one, even
    -- with the recommended partial index, which this pass reads index-only.
    select count(*), min(o.id) into v_unpublished, v_oldest_id
    from messenger.integration_outbox as o
    where o.topic = v_topic and o.published_at is null;
    -- Each count of the product's table is an index-only scan of the rows it counts (partial
    -- indexes of the baseline): finished rows cost nothing, however many there are. The
    -- publish backlog (above) reads the service's outbox: cheap with the service-side index on
    -- its unpublished rows (service-sql recommended), one scan of the outbox without it.
    return query select
        (select count(*) from messenger.recording_finalize_attempts as f
            where f.status = 'Pending'),
        (select count(*) from messenger.recording_finalize_attempts as f
            where f.status = 'Pending' and f.next_attempt_at <= now()),
        coalesce(
            (select extract(epoch from now() - f.created_at)::double precision
                from messenger.recording_finalize_attempts as f where f.status = 'Pending'
                order by f.created_at limit 1),
            0
        ),
        (select count(*) from messenger.recording_finalize_attempts as f
            where f.status = 'Quarantined'),
        v_unpublished,
        -- The lowest id stands for the oldest: ids are handed out in insertion order.
        coalesce(
            (select extract(epoch from now() - o.created_at)::double precision
                from messenger.integration_outbox as o
                where o.id = v_oldest_id),
            0
        );
end
$$;

--
-- Name: FUNCTION stats(p_topic text); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.stats(p_topic text) IS 'The gauges: backlog (Pending finalize rows), due (of those, next_attempt_at <= now()), age of the oldest Pending row in seconds (0 when none), Quarantined rows, publish backlog (unpublished events of the server''s topic) and the age of the oldest (lowest id) of them, found in one pass over them (index-only with the recommended index on unpublished rows). p_topic NULL is the server''s topic; any other raises RF009. Read-only. Worker and operator API (SECURITY DEFINER).';

--
-- Name: storage_incident_close(text, timestamp with time zone, text); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.storage_incident_close(p_source text DEFAULT 'worker'::text, p_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_reason text DEFAULT NULL::text) RETURNS TABLE(id bigint, source text, started_at timestamp with time zone, ended_at timestamp with time zone, reason text, opened_by text, closed_by text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
    v_row recording_finalize.storage_incidents%rowtype;
    v_note text := nullif(recording_finalize_internal.mask_urls(p_reason, 400), '');
begin
    perform recording_finalize_internal.check_incident_caller(p_source, p_at, 'close');

    select i.* into v_row from recording_finalize.storage_incidents as i
    where i.source = p_source and i.ended_at is null
    for update;
    if v_row.id is null then
        return;  -- nothing open: closing is idempotent
    end if;
    if coalesce(p_at, now()) < v_row.started_at then
        raise exception using
            errcode = 'RF017',
            message = format('incident_time_invalid: storage_incident_close: p_at %s is before '
                'the incident''s start %s',
                recording_finalize_internal.iso_utc(p_at),
                recording_finalize_internal.iso_utc(v_row.started_at));
    end if;

    update recording_finalize.storage_incidents as i
    set ended_at = coalesce(p_at, now()),
        closed_by = session_user,
        reason = case when v_note is null then i.reason
            else left(coalesce(i.reason || ' | ', '') || 'closed: ' || v_note, 512) end,
        updated_at = now()
    where i.id = v_row.id
    returning * into v_row;

    id := v_row.id;
    source := v_row.source;
    started_at := v_row.started_at;
    ended_at := v_row.ended_at;
    reason := v_row.reason;
    opened_by := v_row.opened_by;
    closed_by := v_row.closed_by;
    return next;
end
$$;

--
-- Name: FUNCTION storage_incident_close(p_source text, p_at timestamp with time zone, p_reason text); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.storage_incident_close(p_source text, p_at timestamp with time zone, p_reason text) IS 'Closes the open file-storage incident of p_source (default worker) at p_at (default now(); may be back-dated, never before the incident''s start nor in the future); p_reason is appended to its reason. Returns the closed incident, or no row when that source has none open (idempotent). A 404 stays untrusted for the upload grace after ended_at (recording_finalize_internal.outcome_decision). Same callers and errors as storage_incident_open (RF016, RF017, RF018); RF017 also when p_at is before started_at. Locks the incident row. Worker, service and operator API (SECURITY DEFINER).';

--
-- Name: storage_incident_list(interval, integer); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.storage_incident_list(p_recent interval DEFAULT '7 days'::interval, p_limit integer DEFAULT 100) RETURNS TABLE(id bigint, source text, started_at timestamp with time zone, ended_at timestamp with time zone, is_open boolean, duration_seconds double precision, reason text, opened_by text, closed_by text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('storage_incident_list: p_limit must be in 1..10000, got %s',
                coalesce(p_limit::text, 'NULL'));
    end if;
    if p_recent is null or p_recent < interval '0' then
        raise exception using
            errcode = 'RF001',
            message = format('storage_incident_list: p_recent must be >= 0, got %s',
                coalesce(p_recent::text, 'NULL'));
    end if;
    return query
    select i.id, i.source::text, i.started_at, i.ended_at, i.ended_at is null,
        extract(epoch from coalesce(i.ended_at, now()) - i.started_at)::double precision,
        i.reason::text, i.opened_by, i.closed_by
    from recording_finalize.storage_incidents as i
    where i.ended_at is null or i.ended_at >= now() - p_recent
    order by i.ended_at is null desc, coalesce(i.ended_at, i.started_at) desc, i.id desc
    limit p_limit;
end
$$;

--
-- Name: FUNCTION storage_incident_list(p_recent interval, p_limit integer); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.storage_incident_list(p_recent interval, p_limit integer) IS 'The open file-storage incidents (first) and those that ended within p_recent (default 7 days), newest first, at most p_limit (1..10000); duration_seconds runs to now() for an open one. RF001 for a bad p_limit or a negative p_recent. Read-only. Worker and operators.';

--
-- Name: storage_incident_open(text, text, timestamp with time zone); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.storage_incident_open(p_source text DEFAULT 'worker'::text, p_reason text DEFAULT NULL::text, p_at timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(id bigint, source text, started_at timestamp with time zone, ended_at timestamp with time zone, reason text, opened_by text, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
#variable_conflict use_column
declare
    v_row recording_finalize.storage_incidents%rowtype;
    v_reason text := nullif(recording_finalize_internal.mask_urls(p_reason, 512), '');
begin
    perform recording_finalize_internal.check_incident_caller(p_source, p_at, 'open');

    for v_try in 1..3 loop
        insert into recording_finalize.storage_incidents (source, started_at, reason, opened_by)
        values (p_source, coalesce(p_at, now()), v_reason, session_user)
        on conflict (source) where ended_at is null do nothing
        returning * into v_row;
        if v_row.id is not null then
            created := true;
            exit;
        end if;
        -- Already open: return that one, unchanged.
        select i.* into v_row from recording_finalize.storage_incidents as i
        where i.source = p_source and i.ended_at is null;
        if v_row.id is not null then
            created := false;
            exit;
        end if;
        -- It was closed between our insert and our read: try again.
    end loop;

    id := v_row.id;
    source := v_row.source;
    started_at := v_row.started_at;
    ended_at := v_row.ended_at;
    reason := v_row.reason;
    opened_by := v_row.opened_by;
    return next;
end
$$;

--
-- Name: FUNCTION storage_incident_open(p_source text, p_reason text, p_at timestamp with time zone); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.storage_incident_open(p_source text, p_reason text, p_at timestamp with time zone) IS 'Opens a file-storage incident of p_source (default worker), started at p_at (default now(); may be back-dated, never in the future) with p_reason (URLs masked, 512 characters at most). Idempotent: if that source already has an open incident, it is returned unchanged with created = false (one open incident per source, storage_incidents_one_open_uq; concurrent calls return the same row). While it is open, and for the upload grace after it is closed, a 404 fails no recording whose upload window overlapped it (recording_finalize_internal.outcome_decision), and while an incident of source worker is open a transient verdict costs no attempt. Callers (recording_finalize_internal.check_incident_caller, by membership): the worker (source worker), the service (source recorders), operators and the owner (any source); RF018 otherwise. RF016 for a source that is not ^[a-z][a-z0-9_.-]{0,63}$, RF017 for p_at in the future. Worker, service and operator API (SECURITY DEFINER).';

--
-- Name: try_lock_runner(bigint); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.try_lock_runner(p_lock_key bigint DEFAULT '5928001741300501'::bigint) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select pg_catalog.pg_try_advisory_lock(p_lock_key)
$$;

--
-- Name: FUNCTION try_lock_runner(p_lock_key bigint); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.try_lock_runner(p_lock_key bigint) IS 'Tries the single-runner lock (session-level advisory lock p_lock_key; default 5928001741300501) without waiting: true = this session runs the cycle, false = another runner holds it, skip this tick. The lock dies with the session, so hold it on a dedicated, unpooled connection (never behind transaction pooling). Worker API (SECURITY DEFINER).';

--
-- Name: unlock_runner(bigint); Type: FUNCTION; Schema: recording_finalize; Owner: -
--

CREATE FUNCTION recording_finalize.unlock_runner(p_lock_key bigint DEFAULT '5928001741300501'::bigint) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    select pg_catalog.pg_advisory_unlock(p_lock_key)
$$;

--
-- Name: FUNCTION unlock_runner(p_lock_key bigint); Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON FUNCTION recording_finalize.unlock_runner(p_lock_key bigint) IS 'Releases the single-runner lock taken by try_lock_runner in this session; false (and a server WARNING) when this session did not hold it. Closing the session releases it too. Worker API (SECURITY DEFINER).';

--
-- Name: backoff_delay(integer, interval, double precision, interval, double precision); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.backoff_delay(p_attempts integer, p_base interval, p_factor double precision, p_cap interval, p_jitter double precision) RETURNS interval
    LANGUAGE sql PARALLEL RESTRICTED
    AS $$
    select pg_catalog.make_interval(secs =>
        -- Compared in log space, so the exponent is capped before power() runs: base *
        -- factor^(n-1) would overflow double precision (and timestamptz long before) for a
        -- large n.
        case
            when (p_attempts - 1) * pg_catalog.ln(p_factor)
                < pg_catalog.ln(extract(epoch from p_cap)::double precision
                    / extract(epoch from p_base)::double precision)
                then extract(epoch from p_base)::double precision
                    * pg_catalog.power(p_factor, (p_attempts - 1)::double precision)
            else extract(epoch from p_cap)::double precision
        end
        -- Proportional jitter, U(1 - jitter, 1 + jitter); none at all when jitter is 0.
        * case
            when p_jitter > 0 then 1 - p_jitter + 2 * p_jitter * pg_catalog.random()
            else 1
        end)
$$;

--
-- Name: FUNCTION backoff_delay(p_attempts integer, p_base interval, p_factor double precision, p_cap interval, p_jitter double precision); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.backoff_delay(p_attempts integer, p_base interval, p_factor double precision, p_cap interval, p_jitter double precision) IS 'Internal. delay(n) = min(cap, base * factor^(n-1)) * U(1 - jitter, 1 + jitter), n = attempts after the claim''s increment (>= 1). jitter = 0 makes it exact. The exponent is capped in log space, so any n is safe. The arguments are a checked policy (recording_finalize_internal.policy holds the rules: base > 0, factor >= 1, cap >= base, jitter in [0, 1)); nothing here checks them again. Inlined into the caller''s statement. VOLATILE and PARALLEL RESTRICTED, like the random() it calls; reads no table.';

--
-- Name: check_incident_caller(text, timestamp with time zone, text); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.check_incident_caller(p_source text, p_at timestamp with time zone, p_what text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
begin
    if p_source is null or p_source !~ '^[a-z][a-z0-9_.-]{0,63}$' then
        raise exception using
            errcode = 'RF016',
            message = format('incident_source_invalid: storage_incident_%s: the source must match '
                '^[a-z][a-z0-9_.-]{0,63}$ (worker, recorders, ops...), got %s', p_what,
                coalesce(quote_literal(p_source), 'NULL'));
    end if;
    if p_at is not null and p_at > now() then
        raise exception using
            errcode = 'RF017',
            message = format('incident_time_invalid: storage_incident_%s: p_at %s is in the '
                'future (now %s)', p_what, recording_finalize_internal.iso_utc(p_at),
                recording_finalize_internal.iso_utc(now()));
    end if;
    -- Deny by default, by membership (not inherited usage: a NOINHERIT login that SET ROLEs is
    -- still what it logged in as). Operators and the owner record any source; the worker only
    -- what it saw itself; the service only what its recorders saw. current_user is the owner
    -- here (the callers are SECURITY DEFINER).
    if pg_catalog.pg_has_role(session_user, 'recording_finalize_operator', 'MEMBER')
        or pg_catalog.pg_has_role(session_user, current_user, 'MEMBER')
        or (p_source = 'worker'
            and pg_catalog.pg_has_role(session_user, 'recording_finalize_worker', 'MEMBER'))
        or (p_source = 'recorders'
            and pg_catalog.pg_has_role(session_user, 'recording_finalize_service', 'MEMBER')) then
        return;
    end if;
    raise exception using
        errcode = 'RF018',
        message = format('incident_source_forbidden: storage_incident_%s: role %s may not record '
            'incidents of source %s', p_what, session_user, p_source),
        hint = 'The worker records source worker, the service source recorders; any other '
            'source needs a login granted recording_finalize_operator.';
end
$_$;

--
-- Name: FUNCTION check_incident_caller(p_source text, p_at timestamp with time zone, p_what text); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.check_incident_caller(p_source text, p_at timestamp with time zone, p_what text) IS 'Internal. RF016 for a source not matching ^[a-z][a-z0-9_.-]{0,63}$, RF017 for p_at in the future, RF018 unless the login (session_user, by membership) is an operator or the owner (any source), the worker (source worker) or the service (source recorders).';

--
-- Name: check_operator(text, text, text); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.check_operator(p_action text, p_operator text, p_reason text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    if p_operator is null or length(btrim(p_operator)) not between 1 and 128 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: %s: the operator must be 1..128 characters, '
                'got %L', p_action, p_operator);
    end if;
    if p_reason is null or length(btrim(p_reason)) not between 1 and 512 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: %s: a reason of 1..512 characters is required',
                p_action),
            hint = 'Say why, for whoever reads the audit trail (recording-finalize explain).';
    end if;
end
$$;

--
-- Name: FUNCTION check_operator(p_action text, p_operator text, p_reason text); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.check_operator(p_action text, p_operator text, p_reason text) IS 'Internal, pure. RF001 unless p_operator is 1..128 and p_reason 1..512 characters (trimmed): every audited operator action (reschedule, audit_repair, set_pause) calls it first, a dry run included.';

--
-- Name: check_relay_batch(integer); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.check_relay_batch(p_limit integer) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_max integer;
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: relay_batch_size must be 1..10000, got %s',
                p_limit),
            column = 'relay_batch_size';
    end if;
    select s.relay_batch_max into v_max from recording_finalize.settings as s;
    if p_limit > v_max then
        raise exception using
            errcode = 'RF010',
            message = format('policy_out_of_bounds: relay_batch_size is %s; the server''s bound '
                'is at most %s (recording_finalize.settings)', p_limit, v_max),
            hint = 'Lower RFR_RELAY_BATCH_SIZE, or have the owner raise '
                'recording_finalize.settings.relay_batch_max.',
            column = 'relay_batch_size';
    end if;
end
$$;

--
-- Name: FUNCTION check_relay_batch(p_limit integer); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.check_relay_batch(p_limit integer) IS 'Internal. RF001 unless p_limit is 1..10000, RF010 above settings.relay_batch_max (COLUMN relay_batch_size). Called by relay_claim for its batch and by check_policy for the driver''s start-up check: the one place of this rule. Read-only.';

--
-- Name: check_retention(interval); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.check_retention(p_older_than interval) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_min interval;
begin
    if p_older_than is null or p_older_than < interval '1 minute' then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: retention (prune p_older_than) must be at least '
                '1 minute, got %s', p_older_than),
            column = 'retention';
    end if;
    select s.retention_min into v_min from recording_finalize.settings as s;
    if p_older_than < v_min then
        raise exception using
            errcode = 'RF010',
            message = format('policy_out_of_bounds: retention is %s; the server''s bound '
                '(recording_finalize.settings.retention_min) is at least %s', p_older_than,
                v_min),
            hint = 'Prune older history only, or have the owner lower '
                'recording_finalize.settings.retention_min.',
            column = 'retention';
    end if;
end
$$;

--
-- Name: FUNCTION check_retention(p_older_than interval); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.check_retention(p_older_than interval) IS 'Internal. RF001 below 1 minute, RF010 below settings.retention_min (COLUMN retention). Called by prune and by check_policy for the driver''s start-up check (RFR_RETENTION): the one place of this rule. Read-only.';

--
-- Name: claim_decision(text, boolean, boolean, timestamp with time zone, integer, text, integer, interval, timestamp with time zone); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.claim_decision(p_recording_status text, p_event_enqueued boolean, p_session_found boolean, p_session_ended_at timestamp with time zone, p_attempts integer, p_last_outcome text, p_max_attempts integer, p_sla_timeout interval, p_now timestamp with time zone) RETURNS TABLE(action text, detail text, quarantine_reason text, counts_attempt boolean)
    LANGUAGE sql IMMUTABLE
    AS $$
    select d.action, d.detail,
        case when d.action = 'quarantined' then case d.detail
            when 'RecordingNotFound' then 'recording_not_found'
            when 'SessionNotFound' then 'session_not_found'
            -- Exhausted while no verdict was ever recorded: every claim went unanswered.
            when 'MaxAttemptsExceeded' then case when p_last_outcome is null
                then 'crash_loop' else 'max_attempts' end
        end end,
        -- A claim that hands the row out or settles it counts an attempt; re-timing and
        -- quarantine do not.
        d.action in ('reconcile', 'republished', 'closed')
    from (
        select case
            -- A finalize row whose recording is gone cannot be worked on: a human looks.
            when p_recording_status is null then 'quarantined'
            -- Terminal: a Failed recording has no event; an Available one needs its event
            -- once (the republish phase, settled in the claim: no round trip to the driver).
            when p_recording_status = 'Failed' then 'closed'
            when p_recording_status = 'Available' and p_event_enqueued then 'closed'
            when p_recording_status = 'Available' then 'republished'
            when not p_session_found then 'quarantined'
            -- Not ours yet: the happy path still has its SLA. No attempt is counted.
            when p_session_ended_at is null or p_session_ended_at + p_sla_timeout > p_now
                then 'deferred_by_sla'
            -- Attempts are counted at claim (pre-increment), so a row that crashed the worker
            -- on every claim arrives here exhausted and is quarantined, not handed out again.
            when p_attempts >= p_max_attempts then 'quarantined'
            else 'reconcile'
        end as action,
        case
            when p_recording_status is null then 'RecordingNotFound'
            when p_recording_status in ('Failed', 'Available') then p_recording_status
            when not p_session_found then 'SessionNotFound'
            when p_session_ended_at is null then 'SessionNotEnded'
            when p_session_ended_at + p_sla_timeout > p_now then 'WithinSla'
            when p_attempts >= p_max_attempts then 'MaxAttemptsExceeded'
            else p_recording_status
        end as detail
    ) as d
$$;

--
-- Name: FUNCTION claim_decision(p_recording_status text, p_event_enqueued boolean, p_session_found boolean, p_session_ended_at timestamp with time zone, p_attempts integer, p_last_outcome text, p_max_attempts integer, p_sla_timeout interval, p_now timestamp with time zone); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.claim_decision(p_recording_status text, p_event_enqueued boolean, p_session_found boolean, p_session_ended_at timestamp with time zone, p_attempts integer, p_last_outcome text, p_max_attempts integer, p_sla_timeout interval, p_now timestamp with time zone) IS 'Internal, pure. The claim''s decision for one due finalize row, in the words claim_due returns; claim_due carries it out, claim_preview, preview_outcomes and explain report it: quarantined (recording or session not found, or attempts >= max attempts), closed (recording Failed, or Available with its event), republished (Available without its event: the claim enqueues it), deferred_by_sla (the session has not ended, or ended less than the SLA ago) or reconcile (check the file storage). detail names the cause: RecordingNotFound, SessionNotFound, MaxAttemptsExceeded, SessionNotEnded, WithinSla, or the recording''s status; quarantine_reason the code a quarantined row gets (crash_loop: exhausted while p_last_outcome is NULL, i.e. no verdict was recorded since the row was opened or rescheduled); counts_attempt whether the claim counts an attempt (reconcile, republished, closed).';

--
-- Name: enqueue_available(recording_finalize_internal.recording, recording_finalize_internal.session, text); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.enqueue_available(p_recording recording_finalize_internal.recording, p_session recording_finalize_internal.session, p_topic text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_inserted integer;
begin
    if p_recording.status is distinct from 'Available' then
        raise exception using
            errcode = 'RF007',
            message = format('recording_conflict: recording %s is not Available (%s)',
                p_recording.id, coalesce(p_recording.status, 'missing'));
    end if;

    -- The only place the payload is built, so the happy path and the safety net emit the same
    -- bytes. Once per recording: (topic, dedupe_key) is unique, a second enqueue is a no-op
    -- whoever wrote the first (the service's own event under dedupe key = recording id too).
    insert into messenger.integration_outbox (
        topic, message_key, event_type, dedupe_key, payload, headers
    )
    values (
        p_topic,
        p_recording.session_id::text,
        'call-recording-available',
        p_recording.id::text,
        jsonb_build_object(
            'recordingId', p_recording.id,
            'sessionKind', p_recording.session_kind,
            'sessionId', p_recording.session_id,
            'chatId', p_session.chat_id,
            'dealId', p_session.deal_id,
            'tenantId', p_session.tenant_id,
            'mediaType', p_recording.media_type,
            'fileId', p_recording.file_id,
            'format', p_recording.format,
            'durationSeconds', p_recording.duration_seconds,
            'sizeBytes', p_recording.size_bytes,
            'trigger', p_recording.trigger,
            -- A writer that made the row Available directly may have left the times empty;
            -- the contract has no null times, so they are derived from what is certain.
            'startedAt', recording_finalize_internal.iso_utc(coalesce(
                p_recording.started_at,
                coalesce(p_recording.ended_at, p_recording.available_at)
                - make_interval(secs => p_recording.duration_seconds)
            )),
            'endedAt', recording_finalize_internal.iso_utc(
                coalesce(p_recording.ended_at, p_recording.available_at)),
            'availableAt', recording_finalize_internal.iso_utc(p_recording.available_at)
        ),
        jsonb_build_object(
            'event-type', 'call-recording-available',
            'event-id', gen_random_uuid()::text
        )
    )
    on conflict (topic, dedupe_key) do nothing;
    get diagnostics v_inserted = row_count;
    -- An event that existed already came with its push (or was the service's own).
    if v_inserted = 0 then
        return false;
    end if;

    -- The push carries no URL and no secret: the client fetches by FileId through the API.
    insert into messenger.realtime_outbox (kind, session_kind, session_id, reference_id, payload)
    values (
        'RecordingAvailable',
        p_recording.session_kind,
        p_recording.session_id,
        p_recording.id,
        jsonb_build_object('recordingId', p_recording.id, 'status', 'Available')
    );
    return true;
end
$$;

--
-- Name: FUNCTION enqueue_available(p_recording recording_finalize_internal.recording, p_session recording_finalize_internal.session, p_topic text); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.enqueue_available(p_recording recording_finalize_internal.recording, p_session recording_finalize_internal.session, p_topic text) IS 'Internal. For an Available recording and its session: the integration event (topic p_topic, key = SessionId, dedupe_key = RecordingId, headers event-type and a fresh event-id) and, only with a new event, the realtime RecordingAvailable row. The only place the payload is built. Idempotent by (topic, dedupe_key): returns true only when the event is new; an event the service enqueued itself under dedupe key = recording id is never doubled. A missing ended_at is taken as available_at, a missing started_at as ended_at - duration. RF007 when the recording is not Available. Runs in the caller''s transaction; may wait on a concurrent writer of the same dedupe key (the caller bounds it with lock_timeout).';

--
-- Name: function_fingerprint(text); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.function_fingerprint(p_file_name text) RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    -- A file sql/functions/<schema>.<name>.sql defines the function(s) <schema>.<name>: every
    -- overload, with its definition, its privileges and its comment (all three are in the file).
    select pg_catalog.md5(
        pg_catalog.string_agg(
            pg_catalog.pg_get_functiondef(p.oid)
            || coalesce(p.proacl::text, '')
            || coalesce(pg_catalog.obj_description(p.oid, 'pg_proc'), ''),
            E'\n' order by p.oid::regprocedure::text
        )
    )
    from pg_catalog.pg_proc as p
    inner join pg_catalog.pg_namespace as n on p.pronamespace = n.oid
    where
        n.nspname = pg_catalog.split_part(p_file_name, '.', 1)
        and p.proname = pg_catalog.split_part(p_file_name, '.', 2)
$$;

--
-- Name: FUNCTION function_fingerprint(p_file_name text); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.function_fingerprint(p_file_name text) IS 'Internal. md5 of the definitions (pg_get_functiondef), privileges and comments of every function the file p_file_name (<schema>.<name>.sql) defines; NULL when it defines none that exist. Read-only; independent of the caller''s search_path. migrate records it right after applying a file; schema_state() compares it with that record (the drift check).';

--
-- Name: iso_utc(timestamp with time zone); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.iso_utc(p_at timestamp with time zone) RETURNS text
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    AS $$
    select pg_catalog.to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

--
-- Name: FUNCTION iso_utc(p_at timestamp with time zone); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.iso_utc(p_at timestamp with time zone) IS 'Internal. ISO-8601 UTC text with microseconds and a Z suffix, e.g. 2026-11-30T09:14:34.123456Z: the event payload''s instants (enqueue_available) and the instants in messages. NULL in, NULL out. STABLE, not IMMUTABLE: to_char() is STABLE.';

--
-- Name: mask_urls(text, integer); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.mask_urls(p_text text, p_max integer) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    select pg_catalog.left(
        pg_catalog.regexp_replace(
            pg_catalog.btrim(p_text), '[A-Za-z][A-Za-z0-9+.-]*://[^[:space:]]*', '<url>', 'g'
        ),
        p_max
    )
$$;

--
-- Name: FUNCTION mask_urls(p_text text, p_max integer); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.mask_urls(p_text text, p_max integer) IS 'Internal. p_text trimmed, every scheme://... replaced by <url>, cut to p_max characters: the one URL mask of every free text the product stores (last_error, incident reasons). NULL stays NULL.';

--
-- Name: metadata_problem(text, bigint, integer, text); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.metadata_problem(p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    select case
        when p_file_id is null or p_size_bytes is null or p_duration_seconds is null
            or p_format is null
            then 'file_id, size_bytes, duration_seconds and format are all required'
        -- Blank: nothing but white space (tabs and line breaks too, not only spaces).
        when p_file_id !~ '[^[:space:]]' then 'file_id is blank'
        when pg_catalog.length(p_file_id) > 1024 then 'file_id is longer than 1024 characters'
        -- INV-REC-6: a stable storage reference, never a URL.
        when p_file_id ~ '^[A-Za-z][A-Za-z0-9+.-]*://'
            then 'file_id is a URL, not a storage reference'
        when p_size_bytes < 0 then 'size_bytes must be >= 0'
        when p_duration_seconds < 0 then 'duration_seconds must be >= 0'
        when p_format not in ('Webm', 'Mp4', 'Ogg', 'M4a')
            then 'format must be one of Webm, Mp4, Ogg, M4a'
    end
$$;

--
-- Name: FUNCTION metadata_problem(p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.metadata_problem(p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text) IS 'Internal, pure. The rules a recording''s adopted file metadata obeys before it may become Available (apply_outcome found, recording_ingest_completed): all four present; file_id not blank (white space only), at most 1024 characters, not a URL; size and duration >= 0; format Webm, Mp4, Ogg or M4a. Returns the first rule broken, in words, or NULL. The product checks them itself: the service''s table may have other CHECKs, or none.';

--
-- Name: orphans(interval); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.orphans(p_sla_timeout interval) RETURNS TABLE(recording_id uuid, session_kind text, session_id uuid, session_ended_at timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$
    -- Driven by the non-terminal recordings: the predicate is implied by the service's partial
    -- unique index ix_recording_active (a contract requirement), so the scan is the size of
    -- the active recordings, never of the history.
    select r.id, r.session_kind::text, r.session_id, s.ended_at
    from messenger.call_recordings as r
    cross join lateral (
        select c.ended_at from messenger.call_sessions as c
        where r.session_kind = 'Direct' and c.id = r.session_id
        union all
        select k.ended_at from messenger.conference_sessions as k
        where r.session_kind = 'Conference' and k.id = r.session_id
    ) as s
    where r.status in ('Pending', 'Recording', 'Uploading')
        and s.ended_at <= pg_catalog.now() - p_sla_timeout
        and not exists (
            select from messenger.recording_finalize_attempts as f where f.recording_id = r.id
        )
$$;

--
-- Name: FUNCTION orphans(p_sla_timeout interval); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.orphans(p_sla_timeout interval) IS 'Internal. The recordings in Pending, Recording or Uploading whose session ended more than p_sla_timeout ago and that have no finalize row: what discover_stuck opens rows for, what audit counts (orphaned_recordings), audit_repair repairs and explain describes. Reads the active recordings through ix_recording_active; a recording whose session is missing is not an orphan (its session never ended). No LIMIT inside: the caller''s limit and filters are applied to the inlined query (explain''s recording id reaches the primary key).';

--
-- Name: outcome_decision(text, text, text, integer, integer, timestamp with time zone, interval, interval, timestamp with time zone); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.outcome_decision(p_outcome text, p_metadata_problem text, p_error text, p_attempts integer, p_max_attempts integer, p_window_start timestamp with time zone, p_upload_grace interval, p_upload_grace_max interval, p_now timestamp with time zone) RETURNS TABLE(result text, finalize_status text, attempts integer, next_attempt_at timestamp with time zone, last_error text, quarantine_reason text)
    LANGUAGE sql STABLE
    AS $$
    select d.*
    from recording_finalize_internal.outcome_decision(
        p_outcome, p_metadata_problem, p_error, p_attempts, p_max_attempts, p_window_start,
        p_upload_grace, p_upload_grace_max, p_now, null::boolean
    ) as d
$$;

--
-- Name: FUNCTION outcome_decision(p_outcome text, p_metadata_problem text, p_error text, p_attempts integer, p_max_attempts integer, p_window_start timestamp with time zone, p_upload_grace interval, p_upload_grace_max interval, p_now timestamp with time zone); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.outcome_decision(p_outcome text, p_metadata_problem text, p_error text, p_attempts integer, p_max_attempts integer, p_window_start timestamp with time zone, p_upload_grace interval, p_upload_grace_max interval, p_now timestamp with time zone) IS 'Internal. outcome_decision with the storage incidents as recorded (p_bucket_confirmed NULL): what apply_outcome carries out. See the ten-argument signature for the rule.';

--
-- Name: outcome_decision(text, text, text, integer, integer, timestamp with time zone, interval, interval, timestamp with time zone, boolean); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.outcome_decision(p_outcome text, p_metadata_problem text, p_error text, p_attempts integer, p_max_attempts integer, p_window_start timestamp with time zone, p_upload_grace interval, p_upload_grace_max interval, p_now timestamp with time zone, p_bucket_confirmed boolean) RETURNS TABLE(result text, finalize_status text, attempts integer, next_attempt_at timestamp with time zone, last_error text, quarantine_reason text)
    LANGUAGE sql STABLE
    AS $$
    select
        case
            when p_outcome = 'found' and p_metadata_problem is null then 'reconciled'
            when p_outcome in ('found', 'invalid_metadata') then 'quarantined'
            when p_outcome = 'missing' and d.until is not null then 'deferred_by_incident'
            when p_outcome = 'missing' then 'failed'
            when w.held then 'held_by_incident'
            when p_outcome = 'transient' and p_attempts >= p_max_attempts then 'quarantined'
            when p_outcome = 'transient' then 'backoff'
            else 'config_error_released'
        end,
        case
            when p_outcome = 'found' and p_metadata_problem is null then 'Done'
            when p_outcome in ('found', 'invalid_metadata') then 'Quarantined'
            when p_outcome = 'missing' and d.until is null then 'Done'
            when p_outcome = 'transient' and not w.held and p_attempts >= p_max_attempts
                then 'Quarantined'
            else 'Pending'
        end,
        -- The attempt counted at claim is given back when the check could not count: a 404
        -- while storage is not trusted, a transient answer while the worker's own incident is
        -- open, a configuration error (the deployment is wrong, not the recording).
        case
            when (p_outcome = 'missing' and d.until is not null)
                or w.held
                or p_outcome = 'config_error' then greatest(p_attempts - 1, 0)
            else p_attempts
        end,
        -- NULL keeps the row's next_attempt_at: the backoff the claim set.
        case
            when p_outcome = 'missing' and d.until is not null
                then least(d.until, p_now + p_upload_grace_max)
            when p_outcome = 'config_error' then p_now
        end,
        -- NULL keeps the row's last_error.
        case
            when p_outcome = 'found' and p_metadata_problem is null then null
            when p_outcome = 'found' then 'InvalidMetadata: ' || p_metadata_problem
            when p_outcome = 'invalid_metadata'
                then 'InvalidMetadata: ' || coalesce(nullif(p_error, ''), 'unspecified')
            when p_outcome = 'missing' and d.until is not null then d.reason
            when p_outcome = 'missing' then 'Timeout: no object in file storage after the SLA'
            when w.held then format(
                'Transient: %s (attempt given back: the worker''s storage incident %s is open)',
                coalesce(nullif(p_error, ''), 'unspecified'),
                coalesce(h.id::text, '(opened as HeadBucket did not answer)'))
            when p_outcome = 'transient'
                then 'Transient: ' || coalesce(nullif(p_error, ''), 'unspecified')
            else 'ConfigError: ' || coalesce(nullif(p_error, ''), 'unspecified')
        end,
        case
            when p_outcome in ('found', 'invalid_metadata')
                and (p_outcome = 'invalid_metadata' or p_metadata_problem is not null)
                then 'invalid_metadata'
            when p_outcome = 'transient' and not w.held and p_attempts >= p_max_attempts
                then 'max_attempts'
        end
    from (select 1) as one
    -- The storage-incident rule for a 404: it fails the recording only if no incident that
    -- overlaps its upload window (from p_window_start, when the recording stopped or its
    -- session ended, to now) is open or ended less than the grace ago. Of several, the one that
    -- defers longest decides (an open one: the grace from now, it cannot end sooner).
    left join lateral (
        select
            coalesce(e.ended_at, p_now) + p_upload_grace as until,
            case when e.ended_at is null then format(
                'StorageIncident: %s incident %s open since %s; a 404 is not trusted while '
                'storage is out, next check at %s', i.source, i.id,
                recording_finalize_internal.iso_utc(i.started_at),
                recording_finalize_internal.iso_utc(p_now + p_upload_grace))
            else format(
                'StorageIncident: %s incident %s ended %s, within the upload grace of %s; a 404 '
                'is not trusted before %s', i.source, i.id,
                recording_finalize_internal.iso_utc(e.ended_at), p_upload_grace,
                recording_finalize_internal.iso_utc(e.ended_at + p_upload_grace))
            end as reason
        from recording_finalize.storage_incidents as i
        -- When it ends, as far as this verdict is concerned (see p_bucket_confirmed).
        cross join lateral (
            select case when i.ended_at is null and i.source = 'worker' and p_bucket_confirmed
                then p_now else i.ended_at end as ended_at
        ) as e
        where p_outcome = 'missing'
            and i.started_at <= p_now
            -- The incidents as recorded (what the indexes on ended_at serve), then as this
            -- verdict sees them.
            and (i.ended_at is null
                or (i.ended_at >= coalesce(p_window_start, '-infinity')
                    and i.ended_at + p_upload_grace > p_now))
            and (e.ended_at is null
                or (e.ended_at >= coalesce(p_window_start, '-infinity')
                    and e.ended_at + p_upload_grace > p_now))
        order by coalesce(e.ended_at, 'infinity') desc, i.id desc
        limit 1
    ) as d on true
    -- A transient answer while the worker's own storage incident is open (it opened it because
    -- the storage could not be reached) says nothing about the recording: no attempt is burned,
    -- so an outage of any length quarantines nothing.
    left join lateral (
        select i.id
        from recording_finalize.storage_incidents as i
        where p_outcome = 'transient' and p_bucket_confirmed is not true
            and i.source = 'worker' and i.ended_at is null
            -- As for the 404 rule: an incident that starts after the moment judged is not open
            -- at that moment.
            and i.started_at <= p_now
        limit 1
    ) as h on true
    cross join lateral (
        select coalesce(p_outcome = 'transient'
            and (h.id is not null or p_bucket_confirmed is false), false) as held
    ) as w
$$;

--
-- Name: FUNCTION outcome_decision(p_outcome text, p_metadata_problem text, p_error text, p_attempts integer, p_max_attempts integer, p_window_start timestamp with time zone, p_upload_grace interval, p_upload_grace_max interval, p_now timestamp with time zone, p_bucket_confirmed boolean); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.outcome_decision(p_outcome text, p_metadata_problem text, p_error text, p_attempts integer, p_max_attempts integer, p_window_start timestamp with time zone, p_upload_grace interval, p_upload_grace_max interval, p_now timestamp with time zone, p_bucket_confirmed boolean) IS 'Internal. What a file-storage verdict does to a claimed row whose recording is not terminal, called by apply_outcome (which carries it out), preview_outcomes and explain (which report it). p_attempts counts the claim. found: reconciled (row Done; the caller moves the recording to Available), or quarantined invalid_metadata when p_metadata_problem says why the metadata is unusable; invalid_metadata: quarantined; missing: failed (row Done; the caller fails the recording, Timeout), unless a storage incident overlapping the upload window (from p_window_start) is open or ended less than p_upload_grace ago: deferred_by_incident, attempt given back, due at incident end + grace (at most now + p_upload_grace_max), last_error names the incident; transient: backoff (the claim''s backoff stands), quarantined max_attempts once p_attempts >= p_max_attempts, or held_by_incident (attempt given back) while an incident of source worker is open; config_error: config_error_released, attempt given back, due now. next_attempt_at and last_error NULL mean: keep the row''s. p_bucket_confirmed is for the previews, which decide before the cycle has acted on its HeadBucket: NULL takes the incidents as recorded (the nine-argument signature, apply_outcome''s), true an open incident of source worker as ended at p_now (the cycle closes it when HeadBucket answers), false as open (the cycle opens one). STABLE: reads storage_incidents.';

--
-- Name: policy(jsonb); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.policy(p_policy jsonb) RETURNS recording_finalize_internal.policy
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET "IntervalStyle" TO 'postgres'
    SET extra_float_digits TO '1'
    AS $_$
declare
    v_known_keys constant text[] := array['topic', 'max_attempts', 'sla_timeout_seconds',
        'backoff_base_seconds', 'backoff_factor', 'backoff_cap_seconds', 'backoff_jitter',
        'upload_grace_seconds'];
    -- The settings row, and its version (xmin: it changes with every UPDATE of the row).
    v_s record;
    v_p recording_finalize_internal.policy;
    v_key text;
    v_attempts numeric;
    v_sla numeric;
    v_base numeric;
    v_cap numeric;
    v_grace numeric;
    v_factor numeric;
    v_jitter numeric;
    v_problem text;
    v_bound text;
    v_seal text;
    v_kept text;
begin
    select s.*, s.xmin::text as row_version into v_s from recording_finalize.settings as s;
    if not found then
        raise exception using
            errcode = 'P0002',
            message = 'recording_finalize.settings has no row',
            hint = 'Restore its one row as the owner: insert into recording_finalize.settings '
                'default values (then set the topic and bounds).';
    end if;
    if p_policy is null or jsonb_typeof(p_policy) <> 'object' then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: the policy must be a JSON object, got %s',
                coalesce(p_policy::text, 'NULL'));
    end if;
    -- Every call of a worker passes the same policy: one this session checked already, against
    -- this very settings row, is not checked again. The session keeps it in the setting
    -- recording_finalize.checked_policy (a placeholder any login may set, so it is sealed): a
    -- SHA-256 of the settings' policy_seal_key, which no caller can read, the settings row's
    -- version and the policy. A forged or stale one does not match and is checked anew; a
    -- changed bound is a new row version, so the next call checks again.
    v_seal := encode(sha256(convert_to(
        v_s.policy_seal_key::text || ' ' || v_s.row_version || ' ' || p_policy::text, 'UTF8')),
        'hex');
    v_kept := current_setting('recording_finalize.checked_policy', true);
    if v_kept is not null and left(v_kept, 64) = v_seal then
        return substr(v_kept, 66)::recording_finalize_internal.policy;
    end if;

    -- Every key is known, every duration a number of seconds, every count a number: asked of
    -- the whole object in one expression (a call's usual case costs no query); only a policy
    -- that fails it is walked key by key, to name the key.
    if p_policy - v_known_keys <> '{}'::jsonb
        or jsonb_typeof(p_policy -> 'topic') <> 'string'
        or (p_policy - 'topic') @? 'strict $.* ? (@.type() != "number")' then
        for v_key in select k from jsonb_object_keys(p_policy) as k loop
            if v_key <> all (v_known_keys) then
                raise exception using
                    errcode = 'RF001',
                    column = v_key,
                    message = format('invalid_parameter: unknown policy key %s', v_key),
                    hint = 'Known keys: ' || array_to_string(v_known_keys, ', ') || '.';
            end if;
            if jsonb_typeof(p_policy -> v_key)
                <> (case when v_key = 'topic' then 'string' else 'number' end) then
                raise exception using
                    errcode = 'RF001',
                    column = v_key,
                    message = format('invalid_parameter: policy %s must be a %s, got %s', v_key,
                        case when v_key = 'topic' then 'string' else 'number' end,
                        p_policy -> v_key);
            end if;
        end loop;
    end if;

    -- The defaults are the design card's (SPEC section 4); the upload grace defaults to the SLA.
    -- Numbers are read as numeric, which holds any JSON number, and durations rounded to the
    -- microsecond an interval keeps: a value no integer, interval or double precision can hold
    -- (1e400, 1e-400) is refused below with RF001 rather than failing a cast (22003).
    v_p.topic := recording_finalize_internal.topic(p_policy ->> 'topic', v_s.topic);
    v_attempts := coalesce((p_policy -> 'max_attempts')::numeric, 8);
    v_sla := round(coalesce((p_policy -> 'sla_timeout_seconds')::numeric, 1800), 6);
    v_base := round(coalesce((p_policy -> 'backoff_base_seconds')::numeric, 60), 6);
    v_cap := round(coalesce((p_policy -> 'backoff_cap_seconds')::numeric, 900), 6);
    v_grace := round(coalesce((p_policy -> 'upload_grace_seconds')::numeric, v_sla), 6);
    v_factor := round(coalesce((p_policy -> 'backoff_factor')::numeric, 2.0), 15);
    v_jitter := round(coalesce((p_policy -> 'backoff_jitter')::numeric, 0.1), 15);

    -- The policy's own rules (RF001), then the server's bounds (RF010), in one pass each.
    v_problem := case
        when v_attempts <> trunc(v_attempts) or v_attempts not between 1 and 1000000000 then
            'max_attempts must be a whole number in 1..1000000000'
        when v_sla <= 0 or v_sla > 1e9 then 'sla_timeout_seconds must be in (0, 1e9]'
        when v_base <= 0 or v_base > 1e9 then 'backoff_base_seconds must be in (0, 1e9]'
        when v_cap not between v_base and 1e9 then
            'backoff_cap_seconds must be >= backoff_base_seconds (and <= 1e9)'
        when v_grace <= 0 or v_grace > 1e9 then 'upload_grace_seconds must be in (0, 1e9]'
        when v_factor not between 1 and 1e6 then 'backoff_factor must be in [1, 1e6]'
        when v_jitter < 0 or v_jitter >= 1 then 'backoff_jitter must be in [0, 1)'
    end;
    if v_problem is not null then
        -- The rule's first word is the policy key it concerns: the driver reads it from the
        -- error's COLUMN field to name the RFR_* variable (never from the message text).
        raise exception using
            errcode = 'RF001',
            column = split_part(v_problem, ' ', 1),
            message = format('invalid_parameter: %s, got %s', v_problem, p_policy);
    end if;
    v_p.max_attempts := v_attempts::integer;
    v_p.sla_timeout := make_interval(secs => v_sla::double precision);
    v_p.backoff_base := make_interval(secs => v_base::double precision);
    v_p.backoff_cap := make_interval(secs => v_cap::double precision);
    v_p.upload_grace := make_interval(secs => v_grace::double precision);
    v_p.backoff_factor := v_factor::double precision;
    v_p.backoff_jitter := v_jitter::double precision;
    v_p.upload_grace_max := v_s.upload_grace_max;

    v_bound := case
        when v_p.max_attempts not between v_s.max_attempts_min and v_s.max_attempts_max then
            format('max_attempts is %s; the server''s bound is %s..%s', v_p.max_attempts,
                v_s.max_attempts_min, v_s.max_attempts_max)
        when v_p.sla_timeout not between v_s.sla_timeout_min and v_s.sla_timeout_max then
            format('sla_timeout_seconds is %s; the server''s bound is %s..%s', v_p.sla_timeout,
                v_s.sla_timeout_min, v_s.sla_timeout_max)
        when v_p.backoff_base not between v_s.backoff_base_min and v_s.backoff_base_max then
            format('backoff_base_seconds is %s; the server''s bound is %s..%s',
                v_p.backoff_base, v_s.backoff_base_min, v_s.backoff_base_max)
        when v_p.backoff_factor > v_s.backoff_factor_max then
            format('backoff_factor is %s; the server''s bound is at most %s',
                v_p.backoff_factor, v_s.backoff_factor_max)
        when v_p.backoff_cap > v_s.backoff_cap_max then
            format('backoff_cap_seconds is %s; the server''s bound is at most %s',
                v_p.backoff_cap, v_s.backoff_cap_max)
        when v_p.backoff_jitter > v_s.backoff_jitter_max then
            format('backoff_jitter is %s; the server''s bound is at most %s',
                v_p.backoff_jitter, v_s.backoff_jitter_max)
        when v_p.upload_grace not between v_s.upload_grace_min and v_s.upload_grace_max then
            format('upload_grace_seconds is %s; the server''s bound is %s..%s',
                v_p.upload_grace, v_s.upload_grace_min, v_s.upload_grace_max)
    end;
    if v_bound is not null then
        raise exception using
            errcode = 'RF010',
            column = split_part(v_bound, ' ', 1),
            message = 'policy_out_of_bounds: ' || v_bound || ' (recording_finalize.settings)',
            hint = 'Bring the RFR_* setting within the bound, or have the owner change '
                'recording_finalize.settings.';
    end if;
    -- Kept for the session (is_local false); a transaction that fails takes it back with it.
    perform set_config('recording_finalize.checked_policy', v_seal || ' ' || v_p::text, false);
    return v_p;
end
$_$;

--
-- Name: FUNCTION policy(p_policy jsonb); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.policy(p_policy jsonb) IS 'Internal. The one place a policy is checked: reads recording_finalize.settings once and turns a caller''s JSON policy {topic, max_attempts, sla_timeout_seconds, backoff_base_seconds, backoff_factor, backoff_cap_seconds, backoff_jitter, upload_grace_seconds} (every key optional; defaults 8 attempts, 30 min SLA, backoff 60 s x 2 up to 900 s with 10 % jitter, grace = SLA) into recording_finalize_internal.policy. RF001 for an unknown key, a value of the wrong type or one the policy''s own rules refuse (max attempts a whole number >= 1, SLA, base and grace > 0, factor >= 1, cap >= base, jitter in [0, 1), nothing beyond 1e9 seconds; any JSON number, however large or small, is refused so and never by a cast error; durations are kept to the microsecond); RF009 for a topic other than the server''s; RF010 for a value outside the server''s bounds, naming it, its value and the bound. Each error names the policy key in its COLUMN field (topic for RF009). A new policy key is a new JSON key: no signature changes. A policy the session checked against the same settings row version is kept and not checked again (the session setting recording_finalize.checked_policy, sealed with SHA-256 of settings.policy_seal_key, which no caller can read; a forged or stale one is checked anew). Reads no table but settings; its one write is that session setting.';

--
-- Name: record_operator_action(uuid[], text, text, text, jsonb); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.record_operator_action(p_recording_ids uuid[], p_action text, p_operator text, p_reason text, p_detail jsonb DEFAULT '{}'::jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_count integer;
begin
    perform recording_finalize_internal.check_operator(p_action, p_operator, p_reason);
    insert into recording_finalize.operator_actions (
        recording_id, action_kind, operator_name, reason, detail
    )
    select x, p_action, btrim(p_operator), btrim(p_reason), coalesce(p_detail, '{}')
    from unnest(coalesce(p_recording_ids, array[null::uuid])) as x;
    get diagnostics v_count = row_count;
    return v_count;
end
$$;

--
-- Name: FUNCTION record_operator_action(p_recording_ids uuid[], p_action text, p_operator text, p_reason text, p_detail jsonb); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.record_operator_action(p_recording_ids uuid[], p_action text, p_operator text, p_reason text, p_detail jsonb) IS 'Internal. Appends one row per recording of p_recording_ids (one row with recording NULL when it is NULL: an action on the whole worker) to recording_finalize.operator_actions, in the caller''s transaction; returns how many. RF001 through check_operator.';

--
-- Name: recording_row(uuid); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.recording_row(p_recording_id uuid) RETURNS SETOF recording_finalize_internal.recording
    LANGUAGE sql STABLE
    AS $$
    select r.id, r.session_kind::text, r.session_id, r.media_type::text, r.trigger::text,
        r.status::text, r.file_id::text, r.size_bytes, r.duration_seconds, r.format::text,
        r.failure_reason::text, r.started_at, r.ended_at, r.available_at, r.failed_at, r.version,
        r.created_at, r.updated_at
    from messenger.call_recordings as r
    where r.id = p_recording_id
$$;

--
-- Name: FUNCTION recording_row(p_recording_id uuid); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.recording_row(p_recording_id uuid) IS 'Internal. The recording p_recording_id (no row when there is none) with exactly the columns of messenger.call_recordings the product reads, as recording_finalize_internal.recording: the functions never use the service''s own row type, so a column the service adds, or a table it recreates, changes nothing here. Inlined into the caller''s statement. It locks nothing: a caller that must hold the recording locks it first (FOR NO KEY UPDATE, SKIP LOCKED on the worker''s side), and then reads it here, in a statement of its own that sees the latest committed row.';

--
-- Name: schedule_finalize(uuid, text, uuid, timestamp with time zone); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.schedule_finalize(p_recording_id uuid, p_session_kind text, p_session_id uuid, p_due_at timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
begin
    insert into messenger.recording_finalize_attempts as f (
        recording_id, session_kind, session_id, next_attempt_at, opened_by
    )
    values (p_recording_id, p_session_kind, p_session_id, p_due_at, 'lifecycle')
    on conflict (recording_id) do update
    set next_attempt_at = excluded.next_attempt_at,
        updated_at = now()
    -- Only an untouched row is re-timed: the worker's schedule wins once it has tried.
    where f.status = 'Pending' and f.attempts = 0;
end
$$;

--
-- Name: FUNCTION schedule_finalize(p_recording_id uuid, p_session_kind text, p_session_id uuid, p_due_at timestamp with time zone); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.schedule_finalize(p_recording_id uuid, p_session_kind text, p_session_id uuid, p_due_at timestamp with time zone) IS 'Internal. Creates the recording''s finalize row (Pending, attempts 0, next_attempt_at = p_due_at, opened_by lifecycle), or moves next_attempt_at of a row the worker has not tried yet (from "recording stopped" to "session ended + SLA"). Idempotent by RecordingId (ux_rfa_recording).';

--
-- Name: session_of(text, uuid, boolean); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.session_of(p_session_kind text, p_session_id uuid, p_for_share boolean DEFAULT false) RETURNS recording_finalize_internal.session
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_session recording_finalize_internal.session;
begin
    if p_session_kind is null or p_session_kind not in ('Direct', 'Conference') then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: session kind must be Direct or Conference, got %s',
                coalesce(p_session_kind, 'NULL'));
    end if;
    -- The lock first, in a statement of its own, then the read (recording_finalize_internal.
    -- session_row, the one read of a session) sees the row as it is once locked.
    if p_for_share and p_session_kind = 'Direct' then
        perform from messenger.call_sessions as s where s.id = p_session_id for share;
    elsif p_for_share then
        perform from messenger.conference_sessions as s where s.id = p_session_id for share;
    end if;
    select x.* into v_session
    from recording_finalize_internal.session_row(p_session_kind, p_session_id) as x;
    return v_session;
end
$$;

--
-- Name: FUNCTION session_of(p_session_kind text, p_session_id uuid, p_for_share boolean); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.session_of(p_session_kind text, p_session_id uuid, p_for_share boolean) IS 'Internal. The session a recording belongs to: Direct -> messenger.call_sessions, Conference -> messenger.conference_sessions (every field NULL when there is no such session). p_for_share locks it FOR SHARE (recording_started: a concurrent session_ended, whose UPDATE conflicts with it, then waits for the start to commit and sees the recording). Lock order everywhere: session, recording, finalize row. RF001 for another kind. Volatile (it may lock).';

--
-- Name: session_row(text, uuid); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.session_row(p_session_kind text, p_session_id uuid) RETURNS SETOF recording_finalize_internal.session
    LANGUAGE sql STABLE
    AS $$
    select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at
    from messenger.call_sessions as s
    where p_session_kind = 'Direct' and s.id = p_session_id
    union all
    select s.id, s.chat_id, s.deal_id, s.tenant_id, s.started_at, s.ended_at
    from messenger.conference_sessions as s
    where p_session_kind = 'Conference' and s.id = p_session_id
$$;

--
-- Name: FUNCTION session_row(p_session_kind text, p_session_id uuid); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.session_row(p_session_kind text, p_session_id uuid) IS 'Internal. The session a recording belongs to, as recording_finalize_internal.session: Direct -> messenger.call_sessions, Conference -> messenger.conference_sessions; no row when there is no such session (or the kind is neither). Inlined into the caller''s statement. Read-only: session_of, which reads through it, takes the FOR SHARE lock recording_started needs first.';

--
-- Name: topic(text, text); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.topic(p_topic text, p_server_topic text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_topic text := p_server_topic;
begin
    if v_topic is null then
        select s.topic into v_topic from recording_finalize.settings as s;
        if not found then
            raise exception using
                errcode = 'P0002',
                message = 'recording_finalize.settings has no row',
                hint = 'Restore its one row as the owner: insert into recording_finalize.settings '
                    'default values (then set the topic and bounds).';
        end if;
    end if;
    if p_topic is not null and p_topic <> v_topic then
        raise exception using
            errcode = 'RF009',
            column = 'topic',
            message = format('topic_mismatch: the caller''s topic is %s but the server''s topic '
                '(recording_finalize.settings) is %s', p_topic, v_topic),
            hint = 'Pass NULL (the server''s topic), or set RFR_TOPIC to the server''s topic.';
    end if;
    return v_topic;
end
$$;

--
-- Name: FUNCTION topic(p_topic text, p_server_topic text); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.topic(p_topic text, p_server_topic text) IS 'Internal. The server''s topic (recording_finalize.settings.topic, or p_server_topic when the caller has read the settings already). p_topic NULL means that topic; any other value raises RF009 naming both (COLUMN field: topic). Every function that enqueues, leases, marks, counts or explains events resolves its topic here (policy() included), so no caller reaches another topic. Read-only.';

--
-- Name: transition_available(uuid, text, bigint, integer, text, recording_finalize_internal.session, text); Type: FUNCTION; Schema: recording_finalize_internal; Owner: -
--

CREATE FUNCTION recording_finalize_internal.transition_available(p_recording_id uuid, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_session recording_finalize_internal.session, p_topic text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
    v_rec recording_finalize_internal.recording;
begin
    -- Status guard: only a non-terminal recording moves (the caller holds its row lock). From
    -- Pending/Recording the card's path is -> Uploading -> Available: the version moves by two.
    -- The caller checked the metadata (recording_finalize_internal.metadata_problem).
    update messenger.call_recordings as r
    set status = 'Available',
        file_id = p_file_id,
        size_bytes = p_size_bytes,
        duration_seconds = p_duration_seconds,
        format = p_format,
        ended_at = coalesce(r.ended_at, now()),
        started_at = coalesce(
            r.started_at,
            coalesce(r.ended_at, now()) - make_interval(secs => p_duration_seconds)
        ),
        available_at = now(),
        version = r.version + case when r.status = 'Uploading' then 1 else 2 end,
        updated_at = now()
    where r.id = p_recording_id
        and r.status in ('Pending', 'Recording', 'Uploading');
    if not found then
        raise exception using
            errcode = 'RF007',
            message = format('recording_conflict: recording %s is missing or already terminal',
                p_recording_id);
    end if;
    select x.* into v_rec from recording_finalize_internal.recording_row(p_recording_id) as x;
    return recording_finalize_internal.enqueue_available(v_rec, p_session, p_topic);
end
$$;

--
-- Name: FUNCTION transition_available(p_recording_id uuid, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_session recording_finalize_internal.session, p_topic text); Type: COMMENT; Schema: recording_finalize_internal; Owner: -
--

COMMENT ON FUNCTION recording_finalize_internal.transition_available(p_recording_id uuid, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_session recording_finalize_internal.session, p_topic text) IS 'Internal. The one -> Available transition, shared by apply_outcome (found) and recording_ingest_completed: a non-terminal recording becomes Available with the adopted metadata (version +1 from Uploading, +2 from Pending/Recording; a missing started_at/ended_at filled from the duration), and its event and realtime row are enqueued (enqueue_available; returns whether the event was new). The caller holds the recording''s row lock and checked the metadata; RF007 when the recording is missing or terminal.';

--
-- Name: discovery_sweep; Type: TABLE; Schema: recording_finalize; Owner: -
--

CREATE TABLE recording_finalize.discovery_sweep (
    singleton boolean DEFAULT true NOT NULL,
    after_session_kind text,
    after_session_id uuid,
    sweeps bigint DEFAULT 0 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT discovery_sweep_position_ck CHECK (((after_session_kind IS NULL) = (after_session_id IS NULL))),
    CONSTRAINT discovery_sweep_singleton_ck CHECK (singleton)
);

--
-- Name: TABLE discovery_sweep; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON TABLE recording_finalize.discovery_sweep IS 'One row: how far discover_stuck has read the service''s active recordings (ix_recording_active order, session_kind then session_id). Each call reads the next slice and moves the position; at the end it starts over. Written only by discover_stuck.';

--
-- Name: COLUMN discovery_sweep.singleton; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.discovery_sweep.singleton IS 'Always true: the table has one row.';

--
-- Name: COLUMN discovery_sweep.after_session_kind; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.discovery_sweep.after_session_kind IS 'The session kind of the last active recording the previous call read (NULL: start over).';

--
-- Name: COLUMN discovery_sweep.after_session_id; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.discovery_sweep.after_session_id IS 'The session id of the last active recording the previous call read (NULL: start over).';

--
-- Name: COLUMN discovery_sweep.sweeps; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.discovery_sweep.sweeps IS 'How many times discovery has read every active recording, since the install.';

--
-- Name: COLUMN discovery_sweep.updated_at; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.discovery_sweep.updated_at IS 'When a call last moved it.';

--
-- Name: operator_actions; Type: TABLE; Schema: recording_finalize; Owner: -
--

CREATE TABLE recording_finalize.operator_actions (
    id bigint NOT NULL,
    recording_id uuid,
    action_kind character varying(16) NOT NULL,
    operator_name text NOT NULL,
    reason text NOT NULL,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL,
    login_role text DEFAULT SESSION_USER NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT operator_actions_action_kind_ck CHECK (((action_kind)::text = ANY ('{requeue,retry,repair,pause,resume}'::text[]))),
    CONSTRAINT operator_actions_operator_name_ck CHECK (((length(btrim(operator_name)) >= 1) AND (length(btrim(operator_name)) <= 128))),
    CONSTRAINT operator_actions_reason_ck CHECK (((length(btrim(reason)) >= 1) AND (length(btrim(reason)) <= 512)))
);

--
-- Name: TABLE operator_actions; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON TABLE recording_finalize.operator_actions IS 'Append-only audit trail of operator actions (requeue, retry, repair, pause, resume): who, why, when, on which recording (NULL: the whole worker). Shown by recording-finalize explain.';

--
-- Name: COLUMN operator_actions.id; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.operator_actions.id IS 'The action''s number.';

--
-- Name: COLUMN operator_actions.recording_id; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.operator_actions.recording_id IS 'The recording acted on; NULL for an action on the whole worker (pause, resume).';

--
-- Name: COLUMN operator_actions.action_kind; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.operator_actions.action_kind IS 'requeue, retry, repair, pause or resume.';

--
-- Name: COLUMN operator_actions.operator_name; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.operator_actions.operator_name IS 'The name the operator gave (--operator, else the OS user).';

--
-- Name: COLUMN operator_actions.reason; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.operator_actions.reason IS 'Why, in the operator''s words.';

--
-- Name: COLUMN operator_actions.detail; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.operator_actions.detail IS 'What the row looked like before (attempts, quarantine reason, last error), or the part paused.';

--
-- Name: COLUMN operator_actions.login_role; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.operator_actions.login_role IS 'The login (session_user) that ran the action, even inside SECURITY DEFINER.';

--
-- Name: COLUMN operator_actions.created_at; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.operator_actions.created_at IS 'When.';

--
-- Name: operator_actions_id_seq; Type: SEQUENCE; Schema: recording_finalize; Owner: -
--

ALTER TABLE recording_finalize.operator_actions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME recording_finalize.operator_actions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: pause; Type: TABLE; Schema: recording_finalize; Owner: -
--

CREATE TABLE recording_finalize.pause (
    part character varying(16) NOT NULL,
    paused_at timestamp with time zone DEFAULT now() NOT NULL,
    paused_by text NOT NULL,
    reason text NOT NULL,
    login_role text DEFAULT SESSION_USER NOT NULL,
    CONSTRAINT pause_part_ck CHECK (((part)::text = ANY ('{reconcile,relay}'::text[])))
);

--
-- Name: TABLE pause; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON TABLE recording_finalize.pause IS 'The pause switch: one row per paused part (reconcile, relay); no row = running. Read once per cycle by every runner (operator_state), written by set_pause.';

--
-- Name: COLUMN pause.part; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.pause.part IS 'The paused part: reconcile or relay.';

--
-- Name: COLUMN pause.paused_at; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.pause.paused_at IS 'When it was paused (last).';

--
-- Name: COLUMN pause.paused_by; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.pause.paused_by IS 'The name the operator gave.';

--
-- Name: COLUMN pause.reason; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.pause.reason IS 'Why it is paused.';

--
-- Name: COLUMN pause.login_role; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.pause.login_role IS 'The login (session_user) that paused it last.';

--
-- Name: relay_leases; Type: TABLE; Schema: recording_finalize; Owner: -
--

CREATE TABLE recording_finalize.relay_leases (
    outbox_id bigint NOT NULL,
    lease_token uuid NOT NULL,
    leased_until timestamp with time zone NOT NULL,
    holder_pid integer,
    leased_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE relay_leases; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON TABLE recording_finalize.relay_leases IS 'One row per integration-outbox event a relay has leased and not yet marked published (by id; no foreign key into the service''s table). relay_claim skips a live lease, takes over an expired one or one whose holder no longer holds the runner lock; relay_mark_published deletes the leases it marks; prune deletes leases of events that are gone or published.';

--
-- Name: COLUMN relay_leases.outbox_id; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.relay_leases.outbox_id IS 'The leased messenger.integration_outbox row (its id; no foreign key into the service''s table).';

--
-- Name: COLUMN relay_leases.lease_token; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.relay_leases.lease_token IS 'The token of the relay_claim batch; relay_mark_published must present it.';

--
-- Name: COLUMN relay_leases.leased_until; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.relay_leases.leased_until IS 'The lease expires then; an expired lease is taken over by the next claim.';

--
-- Name: COLUMN relay_leases.holder_pid; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.relay_leases.holder_pid IS 'The backend that held the single-runner lock when the lease was taken; a lease whose holder no longer holds it is void.';

--
-- Name: COLUMN relay_leases.leased_at; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.relay_leases.leased_at IS 'When the lease was taken.';

--
-- Name: settings; Type: TABLE; Schema: recording_finalize; Owner: -
--

CREATE TABLE recording_finalize.settings (
    singleton boolean DEFAULT true NOT NULL,
    topic text DEFAULT 'pin.messenger.call-recording-available.v1'::text NOT NULL,
    max_attempts_min integer DEFAULT 1 NOT NULL,
    max_attempts_max integer DEFAULT 20000 NOT NULL,
    sla_timeout_min interval DEFAULT '00:00:01'::interval NOT NULL,
    sla_timeout_max interval DEFAULT '24:00:00'::interval NOT NULL,
    backoff_base_min interval DEFAULT '00:00:00.1'::interval NOT NULL,
    backoff_base_max interval DEFAULT '01:00:00'::interval NOT NULL,
    backoff_factor_max double precision DEFAULT 10 NOT NULL,
    backoff_cap_max interval DEFAULT '24:00:00'::interval NOT NULL,
    backoff_jitter_max double precision DEFAULT 0.5 NOT NULL,
    upload_grace_min interval DEFAULT '00:00:01'::interval NOT NULL,
    upload_grace_max interval DEFAULT '24:00:00'::interval NOT NULL,
    relay_lease_max interval DEFAULT '00:15:00'::interval NOT NULL,
    relay_batch_max integer DEFAULT 10000 NOT NULL,
    retention_min interval DEFAULT '1 day'::interval NOT NULL,
    policy_seal_key uuid DEFAULT gen_random_uuid() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT settings_backoff_base_ck CHECK (((backoff_base_min > '00:00:00'::interval) AND (backoff_base_max >= backoff_base_min))),
    CONSTRAINT settings_backoff_cap_max_ck CHECK ((backoff_cap_max >= backoff_base_min)),
    CONSTRAINT settings_backoff_factor_max_ck CHECK (((backoff_factor_max >= (1)::double precision) AND (backoff_factor_max < 'Infinity'::double precision))),
    CONSTRAINT settings_backoff_jitter_max_ck CHECK (((backoff_jitter_max >= (0)::double precision) AND (backoff_jitter_max < (1)::double precision))),
    CONSTRAINT settings_max_attempts_ck CHECK (((max_attempts_min >= 1) AND (max_attempts_max >= max_attempts_min))),
    CONSTRAINT settings_relay_batch_max_ck CHECK (((relay_batch_max >= 1) AND (relay_batch_max <= 10000))),
    CONSTRAINT settings_relay_lease_max_ck CHECK ((relay_lease_max > '00:00:00'::interval)),
    CONSTRAINT settings_retention_min_ck CHECK ((retention_min >= '00:01:00'::interval)),
    CONSTRAINT settings_singleton_ck CHECK (singleton),
    CONSTRAINT settings_sla_timeout_ck CHECK (((sla_timeout_min > '00:00:00'::interval) AND (sla_timeout_max >= sla_timeout_min))),
    CONSTRAINT settings_topic_ck CHECK (((topic ~ '^[A-Za-z0-9._-]{1,249}$'::text) AND (topic <> ALL (ARRAY['.'::text, '..'::text])))),
    CONSTRAINT settings_upload_grace_ck CHECK (((upload_grace_min > '00:00:00'::interval) AND (upload_grace_max >= upload_grace_min)))
);

--
-- Name: TABLE settings; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON TABLE recording_finalize.settings IS 'The server side of the worker''s configuration, one row, owner only (no grant): the Kafka topic every API function works on and the bounds of every policy value a caller passes. Read it with recording_finalize.server_settings(); change it with UPDATE as the owner. The driver refuses to start (exit 2) when its policy is outside these bounds (recording_finalize.check_policy).';

--
-- Name: COLUMN settings.singleton; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.singleton IS 'Always true: the primary key that keeps this table at one row.';

--
-- Name: COLUMN settings.topic; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.topic IS 'The integration-outbox topic of call-recording-available: the only topic the product enqueues into, leases from or marks published. A policy whose topic differs raises RF009.';

--
-- Name: COLUMN settings.max_attempts_min; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.max_attempts_min IS 'Smallest max_attempts (RFR_MAX_ATTEMPTS) accepted (RF010). Raise it in production (e.g. 3).';

--
-- Name: COLUMN settings.max_attempts_max; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.max_attempts_max IS 'Largest max_attempts accepted (RF010): a bound on "never quarantine".';

--
-- Name: COLUMN settings.sla_timeout_min; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.sla_timeout_min IS 'Smallest sla_timeout_seconds (RFR_FINALIZE_SLA_TIMEOUT) accepted (RF010).';

--
-- Name: COLUMN settings.sla_timeout_max; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.sla_timeout_max IS 'Largest sla_timeout_seconds accepted (RF010).';

--
-- Name: COLUMN settings.backoff_base_min; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.backoff_base_min IS 'Smallest backoff_base_seconds (RFR_BACKOFF_BASE) accepted (RF010).';

--
-- Name: COLUMN settings.backoff_base_max; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.backoff_base_max IS 'Largest backoff_base_seconds accepted (RF010).';

--
-- Name: COLUMN settings.backoff_factor_max; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.backoff_factor_max IS 'Largest backoff_factor (RFR_BACKOFF_FACTOR) accepted (RF010).';

--
-- Name: COLUMN settings.backoff_cap_max; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.backoff_cap_max IS 'Largest backoff_cap_seconds (RFR_BACKOFF_CAP) accepted (RF010).';

--
-- Name: COLUMN settings.backoff_jitter_max; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.backoff_jitter_max IS 'Largest backoff_jitter (RFR_BACKOFF_JITTER) accepted (RF010; always < 1).';

--
-- Name: COLUMN settings.upload_grace_min; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.upload_grace_min IS 'Smallest upload_grace_seconds (RFR_UPLOAD_GRACE, by default the SLA) accepted (RF010).';

--
-- Name: COLUMN settings.upload_grace_max; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.upload_grace_max IS 'Largest upload_grace accepted (RF010), and the longest deferral of a 404 during a storage incident.';

--
-- Name: COLUMN settings.relay_lease_max; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.relay_lease_max IS 'Longest relay lease: relay_claim caps p_lease at this.';

--
-- Name: COLUMN settings.relay_batch_max; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.relay_batch_max IS 'Largest relay batch (relay_claim p_limit, RFR_RELAY_BATCH_SIZE) accepted (RF010).';

--
-- Name: COLUMN settings.retention_min; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.retention_min IS 'Smallest prune p_older_than (RFR_RETENTION, prune --older-than) accepted (RF010).';

--
-- Name: COLUMN settings.policy_seal_key; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.policy_seal_key IS 'A random key, read by the owner''s functions only (server_settings leaves it out): the policy a session checked is kept for that session sealed with it and this row (see recording_finalize_internal.policy). Replace it (gen_random_uuid()) to drop every kept policy.';

--
-- Name: COLUMN settings.updated_at; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.settings.updated_at IS 'When the row was last changed (set it in the UPDATE).';

--
-- Name: storage_incidents; Type: TABLE; Schema: recording_finalize; Owner: -
--

CREATE TABLE recording_finalize.storage_incidents (
    id bigint NOT NULL,
    source character varying(64) NOT NULL,
    started_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone,
    reason character varying(512),
    opened_by text DEFAULT SESSION_USER NOT NULL,
    closed_by text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT storage_incidents_ended_after_start_ck CHECK (((ended_at IS NULL) OR (ended_at >= started_at))),
    CONSTRAINT storage_incidents_source_ck CHECK (((source)::text ~ '^[a-z][a-z0-9_.-]{0,63}$'::text))
);

--
-- Name: TABLE storage_incidents; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON TABLE recording_finalize.storage_incidents IS 'Periods in which the file storage was out, as the worker saw it (source worker) or as the recorders or an operator report it: while one that overlaps a recording''s upload window is open, and for the upload grace after it ended, a 404 fails no recording.';

--
-- Name: COLUMN storage_incidents.id; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.storage_incidents.id IS 'The incident''s number.';

--
-- Name: COLUMN storage_incidents.source; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.storage_incidents.source IS 'Who saw it: worker (the worker itself), recorders (the service), or an operator''s name.';

--
-- Name: COLUMN storage_incidents.started_at; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.storage_incidents.started_at IS 'When the storage went out (may be back-dated, never in the future).';

--
-- Name: COLUMN storage_incidents.ended_at; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.storage_incidents.ended_at IS 'When it came back; NULL while the incident is open.';

--
-- Name: COLUMN storage_incidents.reason; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.storage_incidents.reason IS 'What happened: an error class and code, or an operator''s sentence; never a URL.';

--
-- Name: COLUMN storage_incidents.opened_by; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.storage_incidents.opened_by IS 'The login role (session_user) that opened the incident.';

--
-- Name: COLUMN storage_incidents.closed_by; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.storage_incidents.closed_by IS 'The login role (session_user) that closed it; NULL while open.';

--
-- Name: COLUMN storage_incidents.created_at; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.storage_incidents.created_at IS 'When the row was written.';

--
-- Name: COLUMN storage_incidents.updated_at; Type: COMMENT; Schema: recording_finalize; Owner: -
--

COMMENT ON COLUMN recording_finalize.storage_incidents.updated_at IS 'When the row last changed.';

--
-- Name: storage_incidents_id_seq; Type: SEQUENCE; Schema: recording_finalize; Owner: -
--

ALTER TABLE recording_finalize.storage_incidents ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME recording_finalize.storage_incidents_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: file_checksums; Type: TABLE; Schema: recording_finalize_migrations; Owner: -
--

CREATE TABLE recording_finalize_migrations.file_checksums (
    kind character varying(12) NOT NULL,
    file_name text NOT NULL,
    sha256 character varying(64) NOT NULL,
    definition_md5 character varying(32),
    package_version text NOT NULL,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT file_checksums_definition_ck CHECK ((((kind)::text = 'function'::text) = (definition_md5 IS NOT NULL))),
    CONSTRAINT file_checksums_kind_ck CHECK (((kind)::text = ANY ('{migration,function}'::text[]))),
    CONSTRAINT file_checksums_sha256_ck CHECK (((sha256)::text ~ '^[0-9a-f]{64}$'::text))
);

--
-- Name: TABLE file_checksums; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON TABLE recording_finalize_migrations.file_checksums IS 'What each applied migration and function file was when recording-finalize migrate applied it: the sha256 of the file, and for a function file the fingerprint of the definitions it created.';

--
-- Name: COLUMN file_checksums.kind; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON COLUMN recording_finalize_migrations.file_checksums.kind IS 'migration or function.';

--
-- Name: COLUMN file_checksums.file_name; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON COLUMN recording_finalize_migrations.file_checksums.file_name IS 'The migration id, or the function file''s name (<schema>.<name>.sql).';

--
-- Name: COLUMN file_checksums.sha256; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON COLUMN recording_finalize_migrations.file_checksums.sha256 IS 'sha256 of the file''s bytes when migrate applied it.';

--
-- Name: COLUMN file_checksums.definition_md5; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON COLUMN recording_finalize_migrations.file_checksums.definition_md5 IS 'Function files: the fingerprint of the definitions right after migrate applied them.';

--
-- Name: COLUMN file_checksums.package_version; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON COLUMN recording_finalize_migrations.file_checksums.package_version IS 'The package version whose migrate applied the file.';

--
-- Name: COLUMN file_checksums.recorded_at; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON COLUMN recording_finalize_migrations.file_checksums.recorded_at IS 'When.';

--
-- Name: migrate_state; Type: TABLE; Schema: recording_finalize_migrations; Owner: -
--

CREATE TABLE recording_finalize_migrations.migrate_state (
    singleton boolean DEFAULT true NOT NULL,
    schema_version text NOT NULL,
    package_version text NOT NULL,
    migrated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT migrate_state_singleton_ck CHECK (singleton)
);

--
-- Name: TABLE migrate_state; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON TABLE recording_finalize_migrations.migrate_state IS 'The last successful recording-finalize migrate: the schema version it left (its last migration id) and the package version that ran it.';

--
-- Name: COLUMN migrate_state.singleton; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON COLUMN recording_finalize_migrations.migrate_state.singleton IS 'Always true: the primary key that keeps this table at one row.';

--
-- Name: COLUMN migrate_state.schema_version; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON COLUMN recording_finalize_migrations.migrate_state.schema_version IS 'The last migration id the last migrate left.';

--
-- Name: COLUMN migrate_state.package_version; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON COLUMN recording_finalize_migrations.migrate_state.package_version IS 'The package version that ran the last migrate.';

--
-- Name: COLUMN migrate_state.migrated_at; Type: COMMENT; Schema: recording_finalize_migrations; Owner: -
--

COMMENT ON COLUMN recording_finalize_migrations.migrate_state.migrated_at IS 'When.';

--
-- Name: discovery_sweep discovery_sweep_pkey; Type: CONSTRAINT; Schema: recording_finalize; Owner: -
--

ALTER TABLE ONLY recording_finalize.discovery_sweep
    ADD CONSTRAINT discovery_sweep_pkey PRIMARY KEY (singleton);

--
-- Name: operator_actions operator_actions_pkey; Type: CONSTRAINT; Schema: recording_finalize; Owner: -
--

ALTER TABLE ONLY recording_finalize.operator_actions
    ADD CONSTRAINT operator_actions_pkey PRIMARY KEY (id);

--
-- Name: pause pause_pkey; Type: CONSTRAINT; Schema: recording_finalize; Owner: -
--

ALTER TABLE ONLY recording_finalize.pause
    ADD CONSTRAINT pause_pkey PRIMARY KEY (part);

--
-- Name: relay_leases relay_leases_pkey; Type: CONSTRAINT; Schema: recording_finalize; Owner: -
--

ALTER TABLE ONLY recording_finalize.relay_leases
    ADD CONSTRAINT relay_leases_pkey PRIMARY KEY (outbox_id);

--
-- Name: settings settings_pkey; Type: CONSTRAINT; Schema: recording_finalize; Owner: -
--

ALTER TABLE ONLY recording_finalize.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (singleton);

--
-- Name: storage_incidents storage_incidents_pkey; Type: CONSTRAINT; Schema: recording_finalize; Owner: -
--

ALTER TABLE ONLY recording_finalize.storage_incidents
    ADD CONSTRAINT storage_incidents_pkey PRIMARY KEY (id);

--
-- Name: file_checksums file_checksums_pk; Type: CONSTRAINT; Schema: recording_finalize_migrations; Owner: -
--

ALTER TABLE ONLY recording_finalize_migrations.file_checksums
    ADD CONSTRAINT file_checksums_pk PRIMARY KEY (kind, file_name);

--
-- Name: migrate_state migrate_state_pkey; Type: CONSTRAINT; Schema: recording_finalize_migrations; Owner: -
--

ALTER TABLE ONLY recording_finalize_migrations.migrate_state
    ADD CONSTRAINT migrate_state_pkey PRIMARY KEY (singleton);

--
-- Name: operator_actions_recording_idx; Type: INDEX; Schema: recording_finalize; Owner: -
--

CREATE INDEX operator_actions_recording_idx ON recording_finalize.operator_actions USING btree (recording_id, created_at) WHERE (recording_id IS NOT NULL);

--
-- Name: storage_incidents_ended_idx; Type: INDEX; Schema: recording_finalize; Owner: -
--

CREATE INDEX storage_incidents_ended_idx ON recording_finalize.storage_incidents USING btree (ended_at);

--
-- Name: storage_incidents_one_open_uq; Type: INDEX; Schema: recording_finalize; Owner: -
--

CREATE UNIQUE INDEX storage_incidents_one_open_uq ON recording_finalize.storage_incidents USING btree (source) WHERE (ended_at IS NULL);

--
-- Name: SCHEMA recording_finalize; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA recording_finalize TO recording_finalize_worker;
GRANT USAGE ON SCHEMA recording_finalize TO recording_finalize_operator;
GRANT USAGE ON SCHEMA recording_finalize TO recording_finalize_service;

--
-- Name: FUNCTION apply_outcome(p_recording_id uuid, p_claim_token uuid, p_outcome text, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_error text, p_policy jsonb); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.apply_outcome(p_recording_id uuid, p_claim_token uuid, p_outcome text, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_error text, p_policy jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.apply_outcome(p_recording_id uuid, p_claim_token uuid, p_outcome text, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_error text, p_policy jsonb) TO recording_finalize_worker;

--
-- Name: FUNCTION audit(p_policy jsonb, p_polling_interval interval, p_examples integer, p_lookback interval); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.audit(p_policy jsonb, p_polling_interval interval, p_examples integer, p_lookback interval) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.audit(p_policy jsonb, p_polling_interval interval, p_examples integer, p_lookback interval) TO recording_finalize_operator;

--
-- Name: FUNCTION audit_repair(p_operator text, p_policy jsonb, p_limit integer); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.audit_repair(p_operator text, p_policy jsonb, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.audit_repair(p_operator text, p_policy jsonb, p_limit integer) TO recording_finalize_operator;

--
-- Name: FUNCTION check_policy(p_policy jsonb, p_relay_batch_size integer, p_retention interval); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.check_policy(p_policy jsonb, p_relay_batch_size integer, p_retention interval) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.check_policy(p_policy jsonb, p_relay_batch_size integer, p_retention interval) TO recording_finalize_worker;
GRANT ALL ON FUNCTION recording_finalize.check_policy(p_policy jsonb, p_relay_batch_size integer, p_retention interval) TO recording_finalize_operator;

--
-- Name: FUNCTION claim_due(p_batch_size integer, p_policy jsonb); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.claim_due(p_batch_size integer, p_policy jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.claim_due(p_batch_size integer, p_policy jsonb) TO recording_finalize_worker;

--
-- Name: FUNCTION claim_preview(p_limit integer, p_policy jsonb); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.claim_preview(p_limit integer, p_policy jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.claim_preview(p_limit integer, p_policy jsonb) TO recording_finalize_operator;

--
-- Name: FUNCTION discover_stuck(p_limit integer, p_policy jsonb, p_scan integer); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.discover_stuck(p_limit integer, p_policy jsonb, p_scan integer) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.discover_stuck(p_limit integer, p_policy jsonb, p_scan integer) TO recording_finalize_worker;

--
-- Name: FUNCTION explain(p_recording_id uuid, p_policy jsonb); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.explain(p_recording_id uuid, p_policy jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.explain(p_recording_id uuid, p_policy jsonb) TO recording_finalize_operator;

--
-- Name: FUNCTION failed_recordings(p_limit integer); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.failed_recordings(p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.failed_recordings(p_limit integer) TO recording_finalize_operator;

--
-- Name: FUNCTION operator_state(); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.operator_state() FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.operator_state() TO recording_finalize_worker;
GRANT ALL ON FUNCTION recording_finalize.operator_state() TO recording_finalize_operator;

--
-- Name: FUNCTION preview_outcomes(p_verdicts jsonb, p_policy jsonb); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.preview_outcomes(p_verdicts jsonb, p_policy jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.preview_outcomes(p_verdicts jsonb, p_policy jsonb) TO recording_finalize_operator;

--
-- Name: FUNCTION prune(p_older_than interval, p_batch_size integer, p_dry_run boolean); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.prune(p_older_than interval, p_batch_size integer, p_dry_run boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.prune(p_older_than interval, p_batch_size integer, p_dry_run boolean) TO recording_finalize_worker;
GRANT ALL ON FUNCTION recording_finalize.prune(p_older_than interval, p_batch_size integer, p_dry_run boolean) TO recording_finalize_operator;

--
-- Name: FUNCTION quarantined_rows(p_limit integer, p_reason_code text, p_since timestamp with time zone); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.quarantined_rows(p_limit integer, p_reason_code text, p_since timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.quarantined_rows(p_limit integer, p_reason_code text, p_since timestamp with time zone) TO recording_finalize_operator;

--
-- Name: FUNCTION recording_ingest_completed(p_recording_id uuid, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_topic text); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.recording_ingest_completed(p_recording_id uuid, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_topic text) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.recording_ingest_completed(p_recording_id uuid, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_topic text) TO recording_finalize_service;

--
-- Name: FUNCTION recording_started(p_recording_id uuid, p_session_kind text, p_session_id uuid, p_media_type text, p_trigger text); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.recording_started(p_recording_id uuid, p_session_kind text, p_session_id uuid, p_media_type text, p_trigger text) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.recording_started(p_recording_id uuid, p_session_kind text, p_session_id uuid, p_media_type text, p_trigger text) TO recording_finalize_service;

--
-- Name: FUNCTION recording_stopped(p_recording_id uuid, p_sla_timeout interval); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.recording_stopped(p_recording_id uuid, p_sla_timeout interval) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.recording_stopped(p_recording_id uuid, p_sla_timeout interval) TO recording_finalize_service;

--
-- Name: FUNCTION relay_claim(p_limit integer, p_lease interval, p_lock_key bigint, p_topic text); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.relay_claim(p_limit integer, p_lease interval, p_lock_key bigint, p_topic text) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.relay_claim(p_limit integer, p_lease interval, p_lock_key bigint, p_topic text) TO recording_finalize_worker;

--
-- Name: FUNCTION relay_mark_published(p_ids bigint[], p_lease_token uuid); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.relay_mark_published(p_ids bigint[], p_lease_token uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.relay_mark_published(p_ids bigint[], p_lease_token uuid) TO recording_finalize_worker;

--
-- Name: FUNCTION release_claims(p_recording_ids uuid[], p_claim_tokens uuid[]); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.release_claims(p_recording_ids uuid[], p_claim_tokens uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.release_claims(p_recording_ids uuid[], p_claim_tokens uuid[]) TO recording_finalize_worker;

--
-- Name: FUNCTION requeue(p_recording_id uuid, p_reason text); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.requeue(p_recording_id uuid, p_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.requeue(p_recording_id uuid, p_reason text) TO recording_finalize_operator;

--
-- Name: FUNCTION reschedule(p_recording_ids uuid[], p_from_status text, p_operator text, p_reason text, p_strict boolean); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.reschedule(p_recording_ids uuid[], p_from_status text, p_operator text, p_reason text, p_strict boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.reschedule(p_recording_ids uuid[], p_from_status text, p_operator text, p_reason text, p_strict boolean) TO recording_finalize_operator;

--
-- Name: FUNCTION schema_state(); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.schema_state() FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.schema_state() TO recording_finalize_worker;
GRANT ALL ON FUNCTION recording_finalize.schema_state() TO recording_finalize_operator;

--
-- Name: FUNCTION server_settings(); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.server_settings() FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.server_settings() TO recording_finalize_worker;
GRANT ALL ON FUNCTION recording_finalize.server_settings() TO recording_finalize_operator;

--
-- Name: FUNCTION session_ended(p_session_kind text, p_session_id uuid, p_sla_timeout interval); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.session_ended(p_session_kind text, p_session_id uuid, p_sla_timeout interval) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.session_ended(p_session_kind text, p_session_id uuid, p_sla_timeout interval) TO recording_finalize_service;

--
-- Name: FUNCTION set_pause(p_part text, p_paused boolean, p_operator text, p_reason text); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.set_pause(p_part text, p_paused boolean, p_operator text, p_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.set_pause(p_part text, p_paused boolean, p_operator text, p_reason text) TO recording_finalize_operator;

--
-- Name: FUNCTION stats(p_topic text); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.stats(p_topic text) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.stats(p_topic text) TO recording_finalize_worker;
GRANT ALL ON FUNCTION recording_finalize.stats(p_topic text) TO recording_finalize_operator;

--
-- Name: FUNCTION storage_incident_close(p_source text, p_at timestamp with time zone, p_reason text); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.storage_incident_close(p_source text, p_at timestamp with time zone, p_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.storage_incident_close(p_source text, p_at timestamp with time zone, p_reason text) TO recording_finalize_worker;
GRANT ALL ON FUNCTION recording_finalize.storage_incident_close(p_source text, p_at timestamp with time zone, p_reason text) TO recording_finalize_operator;
GRANT ALL ON FUNCTION recording_finalize.storage_incident_close(p_source text, p_at timestamp with time zone, p_reason text) TO recording_finalize_service;

--
-- Name: FUNCTION storage_incident_list(p_recent interval, p_limit integer); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.storage_incident_list(p_recent interval, p_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.storage_incident_list(p_recent interval, p_limit integer) TO recording_finalize_worker;
GRANT ALL ON FUNCTION recording_finalize.storage_incident_list(p_recent interval, p_limit integer) TO recording_finalize_operator;

--
-- Name: FUNCTION storage_incident_open(p_source text, p_reason text, p_at timestamp with time zone); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.storage_incident_open(p_source text, p_reason text, p_at timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.storage_incident_open(p_source text, p_reason text, p_at timestamp with time zone) TO recording_finalize_worker;
GRANT ALL ON FUNCTION recording_finalize.storage_incident_open(p_source text, p_reason text, p_at timestamp with time zone) TO recording_finalize_operator;
GRANT ALL ON FUNCTION recording_finalize.storage_incident_open(p_source text, p_reason text, p_at timestamp with time zone) TO recording_finalize_service;

--
-- Name: FUNCTION try_lock_runner(p_lock_key bigint); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.try_lock_runner(p_lock_key bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.try_lock_runner(p_lock_key bigint) TO recording_finalize_worker;

--
-- Name: FUNCTION unlock_runner(p_lock_key bigint); Type: ACL; Schema: recording_finalize; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize.unlock_runner(p_lock_key bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION recording_finalize.unlock_runner(p_lock_key bigint) TO recording_finalize_worker;

--
-- Name: FUNCTION backoff_delay(p_attempts integer, p_base interval, p_factor double precision, p_cap interval, p_jitter double precision); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.backoff_delay(p_attempts integer, p_base interval, p_factor double precision, p_cap interval, p_jitter double precision) FROM PUBLIC;

--
-- Name: FUNCTION check_incident_caller(p_source text, p_at timestamp with time zone, p_what text); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.check_incident_caller(p_source text, p_at timestamp with time zone, p_what text) FROM PUBLIC;

--
-- Name: FUNCTION check_operator(p_action text, p_operator text, p_reason text); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.check_operator(p_action text, p_operator text, p_reason text) FROM PUBLIC;

--
-- Name: FUNCTION check_relay_batch(p_limit integer); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.check_relay_batch(p_limit integer) FROM PUBLIC;

--
-- Name: FUNCTION check_retention(p_older_than interval); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.check_retention(p_older_than interval) FROM PUBLIC;

--
-- Name: FUNCTION claim_decision(p_recording_status text, p_event_enqueued boolean, p_session_found boolean, p_session_ended_at timestamp with time zone, p_attempts integer, p_last_outcome text, p_max_attempts integer, p_sla_timeout interval, p_now timestamp with time zone); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.claim_decision(p_recording_status text, p_event_enqueued boolean, p_session_found boolean, p_session_ended_at timestamp with time zone, p_attempts integer, p_last_outcome text, p_max_attempts integer, p_sla_timeout interval, p_now timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION enqueue_available(p_recording recording_finalize_internal.recording, p_session recording_finalize_internal.session, p_topic text); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.enqueue_available(p_recording recording_finalize_internal.recording, p_session recording_finalize_internal.session, p_topic text) FROM PUBLIC;

--
-- Name: FUNCTION function_fingerprint(p_file_name text); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.function_fingerprint(p_file_name text) FROM PUBLIC;

--
-- Name: FUNCTION iso_utc(p_at timestamp with time zone); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.iso_utc(p_at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION mask_urls(p_text text, p_max integer); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.mask_urls(p_text text, p_max integer) FROM PUBLIC;

--
-- Name: FUNCTION metadata_problem(p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.metadata_problem(p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text) FROM PUBLIC;

--
-- Name: FUNCTION orphans(p_sla_timeout interval); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.orphans(p_sla_timeout interval) FROM PUBLIC;

--
-- Name: FUNCTION outcome_decision(p_outcome text, p_metadata_problem text, p_error text, p_attempts integer, p_max_attempts integer, p_window_start timestamp with time zone, p_upload_grace interval, p_upload_grace_max interval, p_now timestamp with time zone); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.outcome_decision(p_outcome text, p_metadata_problem text, p_error text, p_attempts integer, p_max_attempts integer, p_window_start timestamp with time zone, p_upload_grace interval, p_upload_grace_max interval, p_now timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION outcome_decision(p_outcome text, p_metadata_problem text, p_error text, p_attempts integer, p_max_attempts integer, p_window_start timestamp with time zone, p_upload_grace interval, p_upload_grace_max interval, p_now timestamp with time zone, p_bucket_confirmed boolean); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.outcome_decision(p_outcome text, p_metadata_problem text, p_error text, p_attempts integer, p_max_attempts integer, p_window_start timestamp with time zone, p_upload_grace interval, p_upload_grace_max interval, p_now timestamp with time zone, p_bucket_confirmed boolean) FROM PUBLIC;

--
-- Name: FUNCTION policy(p_policy jsonb); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.policy(p_policy jsonb) FROM PUBLIC;

--
-- Name: FUNCTION record_operator_action(p_recording_ids uuid[], p_action text, p_operator text, p_reason text, p_detail jsonb); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.record_operator_action(p_recording_ids uuid[], p_action text, p_operator text, p_reason text, p_detail jsonb) FROM PUBLIC;

--
-- Name: FUNCTION recording_row(p_recording_id uuid); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.recording_row(p_recording_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION schedule_finalize(p_recording_id uuid, p_session_kind text, p_session_id uuid, p_due_at timestamp with time zone); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.schedule_finalize(p_recording_id uuid, p_session_kind text, p_session_id uuid, p_due_at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION session_of(p_session_kind text, p_session_id uuid, p_for_share boolean); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.session_of(p_session_kind text, p_session_id uuid, p_for_share boolean) FROM PUBLIC;

--
-- Name: FUNCTION session_row(p_session_kind text, p_session_id uuid); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.session_row(p_session_kind text, p_session_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION topic(p_topic text, p_server_topic text); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.topic(p_topic text, p_server_topic text) FROM PUBLIC;

--
-- Name: FUNCTION transition_available(p_recording_id uuid, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_session recording_finalize_internal.session, p_topic text); Type: ACL; Schema: recording_finalize_internal; Owner: -
--

REVOKE ALL ON FUNCTION recording_finalize_internal.transition_available(p_recording_id uuid, p_file_id text, p_size_bytes bigint, p_duration_seconds integer, p_format text, p_session recording_finalize_internal.session, p_topic text) FROM PUBLIC;

--
-- PostgreSQL database dump complete
--

--
-- PostgreSQL database dump
--

--
-- Name: recording_finalize_attempts; Type: TABLE; Schema: messenger; Owner: -
--

CREATE TABLE messenger.recording_finalize_attempts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    recording_id uuid NOT NULL,
    session_kind character varying(12) NOT NULL,
    session_id uuid NOT NULL,
    status character varying(16) DEFAULT 'Pending'::character varying NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    last_error character varying(512),
    claim_token uuid,
    claimed_at timestamp with time zone,
    last_outcome character varying(24),
    quarantine_reason character varying(24),
    opened_by character varying(16) DEFAULT 'lifecycle'::character varying NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT recording_finalize_attempts_attempts_ck CHECK ((attempts >= 0)),
    CONSTRAINT recording_finalize_attempts_last_outcome_ck CHECK (((last_outcome)::text = ANY ('{found,missing,transient,invalid_metadata,config_error}'::text[]))),
    CONSTRAINT recording_finalize_attempts_opened_by_ck CHECK (((opened_by)::text = ANY ('{lifecycle,discovery,repair,ingest}'::text[]))),
    CONSTRAINT recording_finalize_attempts_quarantine_reason_ck CHECK (((quarantine_reason)::text = ANY ('{max_attempts,crash_loop,invalid_metadata,recording_not_found,session_not_found}'::text[]))),
    CONSTRAINT recording_finalize_attempts_quarantined_has_reason_ck CHECK ((((status)::text = 'Quarantined'::text) = (quarantine_reason IS NOT NULL))),
    CONSTRAINT recording_finalize_attempts_session_kind_ck CHECK (((session_kind)::text = ANY ('{Direct,Conference}'::text[]))),
    CONSTRAINT recording_finalize_attempts_status_ck CHECK (((status)::text = ANY ('{Pending,Done,Quarantined}'::text[])))
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='2000', autovacuum_analyze_scale_factor='0.02', autovacuum_analyze_threshold='2000');

--
-- Name: TABLE recording_finalize_attempts; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON TABLE messenger.recording_finalize_attempts IS 'The safety net''s reliability table (owned by recording-finalize-retry, not the service): one row per recording in asynchronous finalization (ux_rfa_recording). Pending rows are claimed by recording_finalize.claim_due() when next_attempt_at <= now(); Done = the recording is terminal and its event enqueued; Quarantined = a human must look (recording_finalize.reschedule()).';

--
-- Name: COLUMN recording_finalize_attempts.id; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.id IS 'The row''s own key.';

--
-- Name: COLUMN recording_finalize_attempts.recording_id; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.recording_id IS 'The recording (logical reference to messenger.call_recordings.id; no foreign key: the service''s table is not the product''s to constrain).';

--
-- Name: COLUMN recording_finalize_attempts.session_kind; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.session_kind IS 'Direct (session in messenger.call_sessions) or Conference (messenger.conference_sessions).';

--
-- Name: COLUMN recording_finalize_attempts.session_id; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.session_id IS 'The recording''s session: the Kafka key of its event.';

--
-- Name: COLUMN recording_finalize_attempts.status; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.status IS 'Pending (scheduled), Done (settled) or Quarantined (needs a human).';

--
-- Name: COLUMN recording_finalize_attempts.attempts; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.attempts IS 'File-storage checks counted so far, incremented at claim (pre-increment: a row that crashes the worker still reaches quarantine); given back when the check could not count (a configuration error, a storage incident, a lock, a stop).';

--
-- Name: COLUMN recording_finalize_attempts.next_attempt_at; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.next_attempt_at IS 'When the row is due: session end + SLA at first, then now() + backoff after each claim.';

--
-- Name: COLUMN recording_finalize_attempts.last_error; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.last_error IS 'The last error recorded for the row (class and code, no PII, no URL, <= 512 characters).';

--
-- Name: COLUMN recording_finalize_attempts.claim_token; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.claim_token IS 'Set by claim_due() for a row handed to the driver; apply_outcome() must present it.';

--
-- Name: COLUMN recording_finalize_attempts.claimed_at; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.claimed_at IS 'When claim_due last handed the row to the driver.';

--
-- Name: COLUMN recording_finalize_attempts.last_outcome; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.last_outcome IS 'The verdict apply_outcome last recorded since the row was opened or rescheduled; NULL means every claim went unanswered (a row quarantined so is a crash_loop).';

--
-- Name: COLUMN recording_finalize_attempts.quarantine_reason; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.quarantine_reason IS 'Why the row is Quarantined: max_attempts, crash_loop, invalid_metadata, recording_not_found or session_not_found; set by the function that quarantines it, NULL otherwise.';

--
-- Name: COLUMN recording_finalize_attempts.opened_by; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.opened_by IS 'lifecycle (recording_stopped/session_ended), discovery (the worker found the recording stuck without a row), repair (audit --repair) or ingest (the callback of a recording without one).';

--
-- Name: COLUMN recording_finalize_attempts.created_at; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.created_at IS 'When finalization began: the base of the SLO lag (stats().oldest_age_seconds).';

--
-- Name: COLUMN recording_finalize_attempts.updated_at; Type: COMMENT; Schema: messenger; Owner: -
--

COMMENT ON COLUMN messenger.recording_finalize_attempts.updated_at IS 'When a function last changed the row.';

--
-- Name: recording_finalize_attempts recording_finalize_attempts_pkey; Type: CONSTRAINT; Schema: messenger; Owner: -
--

ALTER TABLE ONLY messenger.recording_finalize_attempts
    ADD CONSTRAINT recording_finalize_attempts_pkey PRIMARY KEY (id);

--
-- Name: ix_rfa_due; Type: INDEX; Schema: messenger; Owner: -
--

CREATE INDEX ix_rfa_due ON messenger.recording_finalize_attempts USING btree (status, next_attempt_at) WHERE ((status)::text = 'Pending'::text);

--
-- Name: recording_finalize_attempts_done_idx; Type: INDEX; Schema: messenger; Owner: -
--

CREATE INDEX recording_finalize_attempts_done_idx ON messenger.recording_finalize_attempts USING btree (updated_at) WHERE ((status)::text = 'Done'::text);

--
-- Name: recording_finalize_attempts_pending_created_idx; Type: INDEX; Schema: messenger; Owner: -
--

CREATE INDEX recording_finalize_attempts_pending_created_idx ON messenger.recording_finalize_attempts USING btree (created_at) INCLUDE (next_attempt_at) WHERE ((status)::text = 'Pending'::text);

--
-- Name: recording_finalize_attempts_quarantined_idx; Type: INDEX; Schema: messenger; Owner: -
--

CREATE INDEX recording_finalize_attempts_quarantined_idx ON messenger.recording_finalize_attempts USING btree (updated_at, recording_id) WHERE ((status)::text = 'Quarantined'::text);

--
-- Name: ux_rfa_recording; Type: INDEX; Schema: messenger; Owner: -
--

CREATE UNIQUE INDEX ux_rfa_recording ON messenger.recording_finalize_attempts USING btree (recording_id);

--
-- PostgreSQL database dump complete
--
