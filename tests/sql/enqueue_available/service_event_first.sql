-- An event the service enqueued itself under dedupe key = recording id (its own happy path) is
-- never doubled: enqueue_available writes no second event and no realtime row (the service's
-- event came with its own push), and leaves the service's row as it was.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as rec \gset
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload,
    headers)
select 'pin.messenger.call-recording-available.v1', session_id::text,
    'call-recording-available', id::text, '{"by": "service"}', '{"event-id": "svc-1"}'
from messenger.call_recordings where id = :'rec';
create temp table before as select * from messenger.integration_outbox;

select is(
    (select recording_finalize_internal.enqueue_available(r,
        recording_finalize_internal.session_of(r.session_kind, r.session_id),
        'pin.messenger.call-recording-available.v1')
    from recording_finalize_internal.recording_row(:'rec') as r),
    false,
    'the service''s event exists: nothing new'
);
select set_eq('select * from messenger.integration_outbox', 'select * from before',
    'no second event; the service''s row is untouched (payload, headers)');
select is(tests.realtime_count(:'rec', 'RecordingAvailable') + tests.event_count(:'rec'),
    0::bigint,
    'and no event in the product''s outbox, no realtime row (the service pushes its own)');

-- Through the paths that call it: the claim's republish...
select tests.make_due_row(:'rec') is not null as ok \gset
select results_eq(
    format('select action from tests.claim() where recording_id = %L', :'rec'),
    $$values ('closed')$$,
    'the claim sees the service''s event: closed, not republished'
);
select results_eq(
    format('select tests.service_event_count(%L), tests.event_count(%L)', :'rec', :'rec'),
    $$values (1::bigint, 0::bigint)$$,
    'still the one event, the service''s'
);

-- apply_outcome's terminal path: the service finished the recording after the claim, with its
-- own event.
select tests.make_stuck() as late \gset
select claim_token as late_token from tests.claim() where recording_id = :'late' \gset
update messenger.call_recordings
set status = 'Available', file_id = 'recordings/svc', size_bytes = 1, duration_seconds = 1,
    format = 'Ogg', available_at = now(), version = version + 1
where id = :'late';
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
select 'pin.messenger.call-recording-available.v1', session_id::text,
    'call-recording-available', id::text, '{"by": "service"}'
from messenger.call_recordings where id = :'late';
select is((select result from tests.apply(:'late', 'found', 'k', 1, 1, 'Ogg')), 'terminal',
    'apply_outcome: terminal');
select results_eq(
    format($$select tests.event_count(%L), tests.realtime_count(%L, 'RecordingAvailable'),
        (select payload ->> 'by' from messenger.integration_outbox where dedupe_key = %L)$$,
        :'late', :'late', :'late'),
    $$values (0::bigint, 0::bigint, 'service')$$,
    'one event, the service''s: none in the product''s outbox, no realtime row from the worker'
);

select * from finish();
rollback;
