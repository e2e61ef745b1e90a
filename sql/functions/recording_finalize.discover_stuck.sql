-- Opens finalize rows for stuck recordings the service never opened one for: it needs no change.

create or replace function recording_finalize.discover_stuck(
    p_limit integer default 1000,
    p_scan integer default 1000
)
returns integer
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
set lock_timeout = '100ms'
-- The slice is read through ix_recording_active and each of its recordings looked up by key
-- (its session, its finalize row): at 50,000 active recordings and stale statistics the planner
-- may prefer hashing the whole of call_recordings for the orphan test. These take that away.
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
-- Switched-off plans are costed as huge, which would have each call compiled by JIT.
set jit = off
as $$
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    v_after_kind text;
    v_after_id uuid;
    v_scanned integer;
    v_opened integer;
    v_last_kind text;
    v_last_id uuid;
    v_previous_kind text;
    v_previous_id uuid;
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

    -- The next p_scan active recordings of the adapter's recordings view in (session_kind,
    -- session_id) order (ix_recording_active beneath the reference adapter; the check names
    -- a missing index): the call reads a slice, never every active recording. Of those, the orphans
    -- (recording_finalize_internal.orphans) get a row, due at session end + SLA, which has
    -- passed: the next claim takes them. A lifecycle call that opens the row meanwhile wins: it
    -- holds the recording (FOR NO KEY UPDATE) before it inserts, so FOR SHARE SKIP LOCKED passes
    -- over a recording whose row is being opened (without it, the INSERT would wait for that
    -- uncommitted row and the lock timeout would fail the whole batch); one that committed since
    -- the snapshot is ON CONFLICT's.
    with slice as (
        select r.id, r.session_kind, r.session_id
        from recording_finalize_internal.active_recordings_after(v_after_kind, v_after_id, p_scan)
            as r
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
        join recording_finalize_adapter.recordings as r on r.id = o.recording_id
        limit p_limit
        for share of r skip locked
        on conflict (recording_id) do nothing
        returning 1
    )
    select (select count(*) from slice), (select count(*) from opened), l.session_kind,
        l.session_id, p.session_kind, p.session_id
    into v_scanned, v_opened, v_last_kind, v_last_id, v_previous_kind, v_previous_id
    from (select) as one
    left join lateral (
        select s.session_kind, s.session_id from slice as s
        order by s.session_kind desc, s.session_id desc
        limit 1
    ) as l on true
    -- The session before the slice's last one.
    left join lateral (
        select s.session_kind, s.session_id from slice as s
        where (s.session_kind, s.session_id) < (l.session_kind, l.session_id)
        order by s.session_kind desc, s.session_id desc
        limit 1
    ) as p on true;

    -- The end of the active recordings: the next call starts over. Otherwise the next call goes
    -- on with this slice's last session, unless p_limit cut it short: then it reads the same
    -- slice again (the recordings opened now are no orphans any more).
    if v_scanned < p_scan then
        update recording_finalize.discovery_sweep as d
        set after_session_kind = null, after_session_id = null, sweeps = d.sweeps + 1,
            updated_at = now();
    elsif v_opened < p_limit then
        -- A full slice may end inside a session (a call recorded as audio and video has two
        -- active recordings): the next call reads that session again from its start, so none of
        -- its recordings is passed over. A slice of one session only goes on after it.
        if v_previous_kind is not null then
            v_last_kind := v_previous_kind;
            v_last_id := v_previous_id;
        end if;
        update recording_finalize.discovery_sweep as d
        set after_session_kind = v_last_kind, after_session_id = v_last_id, updated_at = now();
    end if;
    return v_opened;
end
$$;

comment on function recording_finalize.discover_stuck(integer, integer) is
'Once per cycle: opens a finalize row (Pending, due at session end + SLA, opened_by discovery) '
'for up to p_limit (1..10000) recordings in Pending/Recording/Uploading whose session ended '
'more than the policy''s SLA ago and that have none (recording_finalize_internal.orphans), so '
'the worker rescues an unmodified service. Returns how many it opened. Reads the next p_scan '
'(1..100000) active recordings in ix_recording_active order after where the previous call '
'stopped (recording_finalize.discovery_sweep; a full slice''s last session is read again, as '
'it may hold more active recordings than the slice took), starting over at the end: a call''s '
'cost is '
'bounded by p_scan whatever the number of active recordings, and every one is looked at once '
'per sweep. Never reads the history; writes only the product''s tables. Never waits for a '
'lifecycle call that is opening a row: the recording it holds is passed over (FOR SHARE SKIP '
'LOCKED); the lifecycle''s row wins. The policy: the stored one. Worker API (SECURITY '
'DEFINER).';

revoke all on function recording_finalize.discover_stuck(integer, integer) from public;
grant execute on function recording_finalize.discover_stuck(integer, integer)
to recording_finalize_worker;
