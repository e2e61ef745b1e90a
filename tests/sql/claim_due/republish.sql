-- claim_due settles an Available-but-unpublished recording itself: event enqueued once, row Done.
begin;
select plan(15);

select tests.clean_slate();
select tests.make_session('Conference') as session \gset
select tests.make_recording('Conference', :'session', 'Available') as rec \gset
select tests.make_due_row(:'rec', 2) is not null as ok \gset
-- Another service's event under the same dedupe key is not this recording's event.
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
values ('pin.billing.invoice-paid.v1', 'k', 'invoice-paid', :'rec', '{}');
create temp table recording_before as select * from messenger.call_recordings;

create temp table claimed as select * from tests.claim();

select results_eq(
    'select recording_id, action, claim_token, detail from claimed',
    format($$values (%L::uuid, 'republished', null::uuid, 'Available')$$, :'rec'),
    'an Available recording without its event comes back as republished, with no claim token'
);
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'rec'),
    'Done',
    'the republished row is closed Done in the same call'
);
select is(
    tests.event_count(:'rec'),
    1::bigint,
    'exactly one event is enqueued in the product''s outbox (another topic''s service row does '
        || 'not count as the recording''s event)'
);
select results_eq(
    $$select topic, message_key, headers ->> 'event-type' from recording_finalize.outbox$$,
    format(
        $$values ('pin.messenger.call-recording-available.v1', %L, 'call-recording-available')$$,
        :'session'
    ),
    'the event goes to the server''s topic, keyed by the session id'
);
select is(
    (select payload ->> 'recordingId' from recording_finalize.outbox),
    :'rec',
    'the event carries the recording id'
);
select is(
    (select payload ->> 'fileId' from recording_finalize.outbox),
    'recordings/' || :'rec',
    'the event carries the stored file id'
);
select is(
    tests.realtime_count(:'rec', 'RecordingAvailable'), 1::bigint,
    'a realtime RecordingAvailable row is written'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recording_before',
    'republish never rewrites the recording (version and metadata unchanged)'
);
select results_eq(
    format($$select status, attempts, claim_token, last_error
        from messenger.recording_finalize_attempts where recording_id = %L$$, :'rec'),
    $$values ('Done'::varchar, 3, null::uuid, null::varchar)$$,
    'the settling claim counts its attempt (2 -> 3)'
);
select results_eq(
    format($$select attempts from claimed where recording_id = %L$$, :'rec'),
    $$values (3)$$,
    'and returns the attempts it left'
);

-- A second republish attempt (the row made due again, e.g. by an operator) is a no-op: the
-- event exists, so the row is closed.
update messenger.recording_finalize_attempts
set status = 'Pending', next_attempt_at = now() - interval '1 second'
where recording_id = :'rec';

select results_eq(
    'select action from tests.claim()',
    $$values ('closed')$$,
    'a second claim finds the event already enqueued and only closes the row'
);
select is(
    tests.event_count(:'rec'),
    1::bigint,
    'still exactly one event'
);
select is(
    tests.realtime_count(:'rec', 'RecordingAvailable'), 1::bigint,
    'still exactly one realtime row'
);
select results_eq(
    $$select (select count(*) from recording_finalize.outbox),
        (select count(*) from messenger.integration_outbox)$$,
    $$values (1::bigint, 1::bigint)$$,
    'no other outbox row appeared (the service''s other row untouched, none added beside it)'
);
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'rec'),
    'Done',
    'the row is Done again'
);

select * from finish();
rollback;
