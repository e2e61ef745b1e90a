-- Whether republish discovery is held because service_events does not show what the service
-- delivered, and the ways out, for the worker's gauges, status and explain.

create or replace function recording_finalize.republish_hold()
returns table (
    held boolean,
    held_since timestamptz,
    republish_window interval,
    judged_at timestamptz,
    sampled integer,
    unshown integer,
    problem text,
    fix text
)
language sql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
    select
        d.republish_held_since is not null,
        d.republish_held_since,
        d.republish_window,
        d.republish_judged_at,
        d.republish_sampled,
        d.republish_unshown,
        case when d.republish_held_since is not null
            and recording_finalize_internal.service_events_pending_only()
        then format(
            'republish discovery is held: recording_finalize_adapter.service_events gives '
            'published_at as the constant NULL, so it shows pending events only (an outbox that '
            'deletes what it delivered) and a recording whose event the service delivered looks '
            'never enqueued (%s of the %s most recently Available recordings whose event is the '
            'service''s have none there). Nothing is republished for them',
            d.republish_unshown, d.republish_sampled)
        when d.republish_held_since is not null
            and d.republish_unshown = d.republish_sampled
            and not recording_finalize_internal.service_events_show_delivered()
        then format(
            'republish discovery is held: none of the %s most recently Available recordings '
            'whose event is the service''s has it in recording_finalize_adapter.service_events, '
            'which shows no delivered event at all: an outbox that keeps what it delivered for '
            'a retention period the last quiet spell outlasted (or one that deletes it) has '
            'forgotten them. Nothing is republished for them',
            d.republish_sampled)
        when d.republish_held_since is not null then format(
            'republish discovery is held: %s of the %s most recently Available recordings '
            'have no event, neither in recording_finalize_adapter.service_events nor the '
            'product''s, more than a crash between committing Available and enqueueing the '
            'event explains (more than 10 and more than 20 %% of the recordings whose event is '
            'the service''s); an outbox that deletes what it delivered looks like this. Nothing '
            'is republished for them',
            d.republish_unshown, d.republish_sampled)
        end,
        -- A port that keeps the delivered events for a retention period only (a cleanup job)
        -- is right, and held when the window reaches past what it keeps: the third way out.
        case when d.republish_held_since is not null then
            'either map service_events onto something that keeps the service''s delivered '
            'events too (docs/install.md, "service_events"), or, when the service enqueues its '
            'event in the transaction that makes a recording Available (a transactional '
            'outbox), set RFR_REPUBLISH_WINDOW=0 to turn republish discovery off; when '
            'service_events keeps the delivered events for a retention period shorter than '
            'the SLA plus RFR_REPUBLISH_WINDOW (a cleanup job), set RFR_REPUBLISH_WINDOW below '
            'the retention minus the SLA'
        end
    from recording_finalize.discovery_sweep as d
$$;

comment on function recording_finalize.republish_hold() is
'Whether discover_unpublished holds (held, since when), the window it was last given (0: '
'republish discovery off; NULL: never called), its last judgement (when, how many recently '
'Available recordings without the product''s event it read, how many of them service_events '
'did not show) and, while held, the '
'problem and the ways out as text. One row. Read-only. Worker and operator API (SECURITY '
'DEFINER).';

revoke all on function recording_finalize.republish_hold() from public;
grant execute on function recording_finalize.republish_hold()
to recording_finalize_worker, recording_finalize_operator;
