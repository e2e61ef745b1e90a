-- service_events_unpublished counts the service's own events that stay unpublished past the
-- lag: not one published, not one younger than the lag, not the product's own events.
begin;
select plan(7);

select tests.clean_slate();

create function pg_temp.event(p_enqueued_ago interval, p_published boolean) returns uuid
language plpgsql as $f$
declare
    v_id uuid := tests.make_recording('Direct', tests.make_session(), 'Available');
begin
    update messenger.call_recordings set available_at = now() - p_enqueued_ago where id = v_id;
    perform tests.make_service_event(v_id, case when p_published then now() end);
    update messenger.integration_outbox set created_at = now() - p_enqueued_ago
    where dedupe_key = v_id::text;
    return v_id;
end
$f$;

select pg_temp.event('20 minutes', false) as stale_1 \gset
select pg_temp.event('9 minutes', false) as stale_2 \gset
select pg_temp.event('20 minutes', true) as published \gset
select pg_temp.event('2 minutes', false) as young \gset
-- The product's own unpublished event is the product's relay's business, not counted here.
select tests.make_recording('Direct', tests.make_session(), 'Available') as ours \gset
insert into recording_finalize.outbox (recording_id, topic, message_key, headers, payload,
    created_at)
select :'ours'::uuid, s.topic, 'k', '{}', '{}', now() - interval '1 hour'
from recording_finalize.settings as s;

select results_eq(
    $$select unpublished, round(oldest_age_seconds) from
        recording_finalize.service_events_unpublished('5 minutes')$$,
    $$values (2::bigint, 1200::double precision)$$,
    'two events unpublished for longer than 5 minutes; the oldest is 20 minutes old'
);
select is(
    (select unpublished from recording_finalize.service_events_unpublished('10 minutes')),
    1::bigint, 'a longer lag counts only the one older than it'
);
select is(
    (select unpublished from recording_finalize.service_events_unpublished('1 second')),
    3::bigint, 'a lag of a second counts the young one too (never the published one)'
);

-- Once the service's relay publishes them, nothing is counted.
update messenger.integration_outbox set published_at = now();
select results_eq(
    $$select unpublished, oldest_age_seconds from
        recording_finalize.service_events_unpublished('5 minutes')$$,
    $$values (0::bigint, 0::double precision)$$,
    'nothing unpublished: 0 and age 0'
);

-- A service whose outbox deletes what it delivered shows only pending rows: the same count.
delete from messenger.integration_outbox;
select pg_temp.event('30 minutes', false) as pending_only \gset
select is(
    (select unpublished from recording_finalize.service_events_unpublished('5 minutes')),
    1::bigint, 'an outbox that keeps only its pending rows: its stale one is counted'
);

-- The scan is bounded: only the newest p_scan recordings Available for longer than the lag.
-- The newest two (9 and 20 minutes ago) have no event left; the stale ones are behind them.
select pg_temp.event('40 minutes', false) as older \gset
select is(
    (select unpublished from recording_finalize.service_events_unpublished('5 minutes', 2)),
    0::bigint, 'p_scan 2 reads the two newest recordings only: none of the stale events'
);
select is(
    (select unpublished from recording_finalize.service_events_unpublished('5 minutes')),
    2::bigint, 'the default scan reaches both'
);

select * from finish();
rollback;
