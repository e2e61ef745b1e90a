-- audit: while republish discovery is off (a transactional outbox) or held (service_events
-- shows pending events only), an Available recording without any event that the product never
-- had a finalize row for is the service's to publish, and not a finding; one the product
-- worked on still is. With republish discovery on, both are - unless the service's outbox
-- deletes delivered events after a retention period and the recording is older than what
-- service_events still shows.
begin;
select plan(5);

select tests.clean_slate();
update recording_finalize.discovery_sweep
set republish_window = null, republish_held_since = null;
-- Delivered by the service, its outbox row deleted: no event, no finalize row.
select tests.make_recording('Direct', tests.make_session(), 'Available') as delivered \gset
-- Worked on by the product (its row Done) and without an event: a finding always.
select tests.make_recording('Direct', tests.make_session(), 'Available') as worked \gset
insert into messenger.recording_finalize_attempts (recording_id, session_kind, session_id,
    status, next_attempt_at)
select r.id, r.session_kind, r.session_id, 'Done', now()
from messenger.call_recordings as r where r.id = :'worked';

select is(
    (select examples from recording_finalize.audit() where check_name = 'available_without_event'),
    (select array_agg(x order by x) from unnest(array[:'delivered', :'worked']::text[]) as x),
    'republish discovery on: both are findings'
);
update recording_finalize.discovery_sweep set republish_window = '0';
select is(
    (select examples from recording_finalize.audit() where check_name = 'available_without_event'),
    array[:'worked']::text[],
    'off: only the recording the product worked on'
);
update recording_finalize.discovery_sweep
set republish_window = '1 day', republish_held_since = now();
select is(
    (select found from recording_finalize.audit() where check_name = 'available_without_event'),
    1::bigint,
    'held: the same'
);
update recording_finalize.discovery_sweep set republish_held_since = null;
select is(
    (select found from recording_finalize.audit() where check_name = 'available_without_event'),
    2::bigint,
    'on again: both'
);
-- The service's outbox keeps an hour: its oldest event is 50 minutes old, the recording the
-- service delivered (Available an hour ago) is older than that.
select tests.make_recording('Direct', tests.make_session(), 'Available') as recent \gset
update messenger.call_recordings set available_at = now() - interval '50 minutes'
where id = :'recent';
select tests.make_service_event(:'recent', now() - interval '49 minutes') is not null as ok \gset
select is(
    (select examples from recording_finalize.audit() where check_name = 'available_without_event'),
    array[:'worked']::text[],
    'on, beside an outbox that forgets after a while: only the recording the product worked on'
);

select * from finish();
rollback;
