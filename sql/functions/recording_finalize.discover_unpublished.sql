-- Republish discovery: finds Available recordings that never got their event, a slice per call,
-- and looks before it republishes (an outbox that deletes what it delivered hides delivered
-- events from service_events).

create or replace function recording_finalize.discover_unpublished(
    p_window interval default '1 day',
    p_limit integer default 1000,
    p_scan integer default 1000
)
returns integer
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
set lock_timeout = '100ms'
set enable_seqscan = off
set jit = off
as $$
declare
    -- The judgement: of the SAMPLE most recently Available recordings whose event is the
    -- service's own (none in the product's outbox), how many service_events does not show. A
    -- crash between committing Available and enqueueing the event leaves a few such recordings;
    -- an outbox that deletes what it delivered leaves nearly all of them. More than UNSHOWN_MIN
    -- and more than UNSHOWN_SHARE of the sample is more than a crash explains: discovery then
    -- holds. A recording with the product's event (a rescue, the ingest callback) is left out:
    -- it says nothing of the port, and counting it would let many rescues end the hold of a
    -- port that still forgets.
    c_sample constant integer := 200;
    c_unshown_min constant integer := 10;
    c_unshown_share constant numeric := 0.2;
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    v_sweep recording_finalize.discovery_sweep;
    v_upper timestamptz;
    v_lower timestamptz;
    v_scanned integer;
    v_last_at timestamptz;
    v_last_id uuid;
    v_ids uuid[];
    v_kinds text[];
    v_sessions uuid[];
    v_available_ats timestamptz[];
    v_remembered_from timestamptz;
    v_sampled integer;
    v_unshown integer;
    v_opened integer;
begin
    if p_window is null or p_window < interval '0' or p_window > interval '30 days' then
        raise exception using
            errcode = 'RF001',
            column = 'republish_window',
            message = format('invalid_parameter: discover_unpublished: p_window must be in '
                '[0, 30 days], got %s', coalesce(p_window::text, 'NULL'));
    end if;
    if p_limit is null or p_limit not between 1 and 10000
        or p_scan is null or p_scan not between 1 and 100000
    then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: discover_unpublished: p_limit must be 1..10000 '
                'and p_scan 1..100000, got %s and %s', p_limit, p_scan);
    end if;
    select d.* into v_sweep
    from recording_finalize.discovery_sweep as d
    for update skip locked;
    if not found then
        return 0;
    end if;

    -- A window of 0: republish discovery is off (a service whose happy path enqueues its event
    -- in the transaction that makes the recording Available cannot crash between the two).
    if p_window = interval '0' then
        update recording_finalize.discovery_sweep
        set republish_window = p_window, republish_held_since = null,
            republish_after_at = null, republish_after_id = null, updated_at = now();
        return 0;
    end if;

    -- The window ends an SLA ago (the happy path has had the SLA to enqueue its event) and
    -- reaches p_window further back, never before the end of the last hold. Its Available
    -- recordings are read in (available_at, id) order after where the previous call stopped,
    -- p_scan at a time: a call's cost is bounded by p_scan, and the recordings outside the
    -- window are never read (an index on available_at beneath the adapter's recordings view;
    -- the check names a missing one).
    v_upper := now() - v_policy.sla_timeout;
    v_lower := greatest(v_upper - p_window, v_sweep.republish_not_before);
    with slice as (
        select r.id, r.session_kind, r.session_id, r.available_at
        from recording_finalize_internal.available_recordings_after(v_lower, v_upper,
            greatest(coalesce(v_sweep.republish_after_at, v_lower), v_lower),
            v_sweep.republish_after_id, p_scan) as r
    ),
    last as (
        select s.available_at, s.id from slice as s
        order by s.available_at desc, s.id desc
        limit 1
    )
    select
        (select count(*) from slice),
        (select l.available_at from last as l),
        (select l.id from last as l),
        array_agg(s.id order by s.available_at, s.id),
        array_agg(s.session_kind order by s.available_at, s.id),
        array_agg(s.session_id order by s.available_at, s.id),
        array_agg(s.available_at order by s.available_at, s.id)
    into v_scanned, v_last_at, v_last_id, v_ids, v_kinds, v_sessions, v_available_ats
    from slice as s
    -- has_event's rule, set-based: anti-joins the planner may hash, not a lookup per recording
    -- (a service_events over an unindexed outbox would be scanned once per recording).
    where not exists (select from recording_finalize.outbox as o where o.recording_id = s.id)
        and not exists (
            select from recording_finalize_adapter.service_events as e
            where e.recording_id = s.id
        )
        and not exists (
            select from messenger.recording_finalize_attempts as x
            where x.recording_id = s.id
        );

    -- Judged when there is something to open, and at every call while held: once its cause is
    -- gone (service_events keeps the delivered events, or the window leaves the forgotten out)
    -- nothing may be left to open, and a hold judged only beside candidates would never end.
    if v_ids is not null or v_sweep.republish_held_since is not null then
        -- Look before republishing. Recordings newer than the window's end count too: the
        -- service has delivered those as well, and they show a forgetting outbox at once.
        with sample as materialized (
            select r.id
            from recording_finalize_adapter.recordings as r
            where r.status = 'Available'
                and r.available_at > v_lower and r.available_at <= now()
                and not exists (
                    select from recording_finalize.outbox as o where o.recording_id = r.id)
            order by r.available_at desc
            limit c_sample
        )
        select
            (select count(*) from sample)::integer,
            (select count(*) from sample as s
                where not exists (
                    select from recording_finalize_adapter.service_events as e
                    where e.recording_id = s.id))::integer
        into v_sampled, v_unshown;
        update recording_finalize.discovery_sweep
        set republish_window = p_window, republish_judged_at = now(),
            republish_sampled = v_sampled, republish_unshown = v_unshown, updated_at = now();
        -- A service_events of pending events only cannot show a delivered event at all: held
        -- whatever the counts (a quiet service's first few would pass them). So is one that
        -- shows no delivered event now while none of the recent recordings has its event: an
        -- outbox that keeps what it delivered for a retention period a quiet spell outlasted
        -- (CAP keeps a day; a weekend is longer) has forgotten them all, however few they are.
        if recording_finalize_internal.service_events_pending_only()
            or (v_unshown > c_unshown_min and v_unshown > c_unshown_share * v_sampled)
            or (v_unshown > 0 and v_unshown = v_sampled
                and not recording_finalize_internal.service_events_show_delivered())
        then
            -- Held: nothing is opened and the position stays, so the next call judges again.
            update recording_finalize.discovery_sweep
            set republish_held_since = coalesce(republish_held_since, now());
            return 0;
        end if;
        if v_sweep.republish_held_since is not null then
            -- The hold ends: what it kept back may have been delivered, so it stays as it is.
            update recording_finalize.discovery_sweep
            set republish_held_since = null, republish_not_before = now(),
                republish_after_at = null, republish_after_id = null;
            return 0;
        end if;
    end if;

    if v_ids is not null then
        -- The port judged, each candidate: one older than what service_events remembers (an
        -- outbox that deletes delivered events after a retention period) may have had its event
        -- sent. Never opened; the sweep moves past it like past a recording with its event.
        v_remembered_from := recording_finalize_internal.service_events_remembered_from();
        if v_remembered_from > v_available_ats[1] then
            select array_agg(c.id order by c.at, c.id),
                array_agg(c.session_kind order by c.at, c.id),
                array_agg(c.session_id order by c.at, c.id)
            into v_ids, v_kinds, v_sessions
            from unnest(v_ids, v_kinds, v_sessions, v_available_ats)
                as c (id, session_kind, session_id, at)
            where c.at >= v_remembered_from;
        end if;
    end if;

    -- Due now: the next claim enqueues the event and closes the row (no S3 check).
    insert into messenger.recording_finalize_attempts as f (
        recording_id, session_kind, session_id, next_attempt_at, opened_by
    )
    select c.id, c.session_kind, c.session_id, now(), 'discovery'
    from unnest(v_ids, v_kinds, v_sessions) as c (id, session_kind, session_id)
    limit p_limit
    on conflict (recording_id) do nothing;
    get diagnostics v_opened = row_count;

    if v_scanned < p_scan then
        update recording_finalize.discovery_sweep
        set republish_window = p_window, republish_after_at = null, republish_after_id = null,
            updated_at = now();
    elsif v_opened < p_limit then
        update recording_finalize.discovery_sweep
        set republish_window = p_window, republish_after_at = v_last_at,
            republish_after_id = v_last_id, updated_at = now();
    end if;
    return v_opened;
end
$$;

comment on function recording_finalize.discover_unpublished(interval, integer, integer) is
'Once per cycle, the republish phase for a service that never opens a finalize row: opens a '
'finalize row, due now, for up to p_limit (1..10000) recordings that became Available between '
'SLA + p_window and SLA ago, with no event of the service (the adapter''s service_events) nor of '
'the product, and no finalize row; the next claim enqueues the event and closes the row. Returns '
'how many it opened. p_window 0 turns it off (0..30 days, RF001). Reads the next p_scan '
'(1..100000) Available recordings of the window in (available_at, id) order after where the '
'previous call stopped (recording_finalize.discovery_sweep), starting over at the end of the '
'window. Looks before it republishes: when it has candidates, and at every call while held, it '
'reads the 200 most recently Available recordings without an event of the product (their event '
'is the service''s), and when more than 10 of them and more than 20 % are not in service_events '
'(an outbox that deletes what it delivered), or whatever the counts when service_events gives '
'published_at as the constant NULL (pending events only: service_events_pending_only), or when '
'none of them is there and service_events shows no delivered event at all (a retention a quiet '
'spell outlasted: service_events_show_delivered), it opens nothing and records the hold '
'(recording_finalize.republish_hold reports it); when a hold ends, the recordings it kept back '
'are never republished by discovery. A candidate that became Available before '
'service_events_remembered_from() (an outbox that deletes delivered events after a retention '
'period shows none older) is never opened either. Writes only the product''s tables. The policy: '
'the stored one. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.discover_unpublished(interval, integer, integer)
from public;
grant execute on function recording_finalize.discover_unpublished(interval, integer, integer)
to recording_finalize_worker;
