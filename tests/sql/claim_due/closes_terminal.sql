-- claim_due closes rows of recordings that are already terminal: Failed, or Available with its
-- event (here one the service wrote itself) - no second event, no realtime row.
begin;
select plan(10);

select tests.clean_slate();
select tests.make_stuck(p_status => 'Failed') as failed \gset
select tests.make_stuck(p_status => 'Available') as published \gset
-- The service published it itself, the happy path: its own row, under dedupe key = recording
-- id, with a payload and headers of its own (not the bytes enqueue_available would build).
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
values ('pin.messenger.call-recording-available.v1', 'service-key', 'call-recording-available',
    :'published', '{"writtenBy": "service"}');
create temp table recordings_before as select * from messenger.call_recordings;
create temp table outbox_before as select * from messenger.integration_outbox;

create temp table claimed as select * from tests.claim();

select results_eq(
    format($$select action, detail, claim_token from claimed where recording_id = %L$$, :'failed'),
    $$values ('closed', 'Failed', null::uuid)$$,
    'a Failed recording: the row is closed, nothing handed to the driver'
);
select results_eq(
    format(
        $$select action, detail, claim_token from claimed where recording_id = %L$$, :'published'
    ),
    $$values ('closed', 'Available', null::uuid)$$,
    'an Available recording whose event exists: closed, not republished'
);
select results_eq(
    'select status, attempts, claim_token from messenger.recording_finalize_attempts',
    $$values ('Done'::varchar, 1, null::uuid), ('Done'::varchar, 1, null::uuid)$$,
    'both rows are Done, the settling claim counted as their attempt'
);
select is(tests.event_count(:'failed'), 0::bigint, 'a failure has no integration event');
select is(
    tests.realtime_count(:'failed', 'RecordingFailed')
        + tests.realtime_count(:'failed', 'RecordingAvailable'),
    0::bigint,
    'closing a Failed row writes no realtime row'
);
select results_eq(
    format('select tests.service_event_count(%L), tests.event_count(%L)', :'published',
        :'published'),
    $$values (1::bigint, 0::bigint)$$,
    'the published recording keeps its one event, the service''s: the product enqueued none'
);
select set_eq(
    'select * from messenger.integration_outbox',
    'select * from outbox_before',
    'the service''s own event is left as it was: nothing enqueued beside it'
);
select is(
    tests.realtime_count(:'published', 'RecordingAvailable'), 0::bigint,
    'closing writes no realtime row for the published recording either'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recordings_before',
    'terminal recordings are not rewritten'
);
select is((select count(*) from tests.claim()), 0::bigint, 'closed rows are never claimed again');

select * from finish();
rollback;
