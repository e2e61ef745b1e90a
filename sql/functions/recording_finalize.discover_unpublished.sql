-- Republish discovery: finds Available recordings that never got their event, a slice per call.

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
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    v_upper timestamptz;
    v_lower timestamptz;
    v_after_at timestamptz;
    v_after_id uuid;
    v_scanned integer;
    v_opened integer;
    v_last_at timestamptz;
    v_last_id uuid;
begin
    if p_window is null or p_window <= interval '0' or p_window > interval '30 days' then
        raise exception using
            errcode = 'RF001',
            column = 'republish_window',
            message = format('invalid_parameter: discover_unpublished: p_window must be in '
                '(0, 30 days], got %s', coalesce(p_window::text, 'NULL'));
    end if;
    if p_limit is null or p_limit not between 1 and 10000
        or p_scan is null or p_scan not between 1 and 100000
    then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: discover_unpublished: p_limit must be 1..10000 '
                'and p_scan 1..100000, got %s and %s', p_limit, p_scan);
    end if;
    select d.republish_after_at, d.republish_after_id into v_after_at, v_after_id
    from recording_finalize.discovery_sweep as d
    for update skip locked;
    if not found then
        return 0;
    end if;

    -- The window ends an SLA ago (the happy path has had the SLA to enqueue its event) and
    -- reaches p_window further back. Its Available recordings are read in (available_at, id)
    -- order after where the previous call stopped, p_scan at a time: a call's cost is bounded by
    -- p_scan, and the recordings outside the window are never read (an index on available_at
    -- beneath the adapter's recordings view; the check names a missing one).
    v_upper := now() - v_policy.sla_timeout;
    v_lower := v_upper - p_window;
    with slice as (
        select r.id, r.session_kind, r.session_id, r.available_at
        from recording_finalize_adapter.recordings as r
        where r.status = 'Available'
            and r.available_at > v_lower and r.available_at <= v_upper
            and (r.available_at, r.id) > (
                greatest(coalesce(v_after_at, v_lower), v_lower),
                coalesce(v_after_id, '00000000-0000-0000-0000-000000000000'))
        order by r.available_at, r.id
        limit p_scan
    ),
    opened as (
        -- Due now: the next claim enqueues the event and closes the row (no S3 check).
        insert into messenger.recording_finalize_attempts as f (
            recording_id, session_kind, session_id, next_attempt_at, opened_by
        )
        select s.id, s.session_kind, s.session_id, now(), 'discovery'
        from slice as s
        where not recording_finalize_internal.has_event(s.id)
            and not exists (
                select from messenger.recording_finalize_attempts as x
                where x.recording_id = s.id
            )
        limit p_limit
        on conflict (recording_id) do nothing
        returning 1
    )
    select (select count(*) from slice), (select count(*) from opened), l.available_at, l.id
    into v_scanned, v_opened, v_last_at, v_last_id
    from (select) as one
    left join lateral (
        select s.available_at, s.id from slice as s
        order by s.available_at desc, s.id desc
        limit 1
    ) as l on true;

    if v_scanned < p_scan then
        update recording_finalize.discovery_sweep
        set republish_after_at = null, republish_after_id = null, updated_at = now();
    elsif v_opened < p_limit then
        update recording_finalize.discovery_sweep
        set republish_after_at = v_last_at, republish_after_id = v_last_id, updated_at = now();
    end if;
    return v_opened;
end
$$;

comment on function recording_finalize.discover_unpublished(interval, integer, integer) is
'Once per cycle, the republish phase for a service that never opens a finalize row: opens a '
'finalize row, due now, for up to p_limit (1..10000) recordings that became Available between '
'SLA + p_window (0..30 days, RF001) and SLA ago, with no event of the service (the adapter''s '
'service_events) nor of the product, and no finalize row; the next claim enqueues the event '
'and closes the row. Returns how many it opened. Reads the next p_scan (1..100000) Available '
'recordings of the window in (available_at, id) order after where the previous call stopped '
'(recording_finalize.discovery_sweep), starting over at the end of the window. Writes only the '
'product''s tables. The policy: the stored one. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.discover_unpublished(interval, integer, integer)
from public;
grant execute on function recording_finalize.discover_unpublished(interval, integer, integer)
to recording_finalize_worker;
