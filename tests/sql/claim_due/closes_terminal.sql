-- claim_due closes rows of recordings that are already terminal and published, without an event.
begin;
select plan(8);

select tests.clean_slate();
select tests.make_stuck(p_status => 'Failed') as failed \gset
select tests.make_stuck(p_status => 'Available') as published \gset
select recording_finalize.enqueue_available(
    :'published', 'pin.messenger.call-recording-available.v1'
) as first_enqueue \gset
create temp table recordings_before as select * from messenger.call_recordings;

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
select is(
    (select count(*) from messenger.recording_finalize_attempts where status = 'Done'), 2::bigint,
    'both rows are Done'
);
select is(tests.event_count(:'failed'), 0::bigint, 'a failure has no integration event');
select is(
    tests.realtime_count(:'failed', 'RecordingFailed')
        + tests.realtime_count(:'failed', 'RecordingAvailable'),
    0::bigint,
    'closing a Failed row writes no realtime row'
);
select is(tests.event_count(:'published'), 1::bigint, 'the published recording keeps one event');
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recordings_before',
    'terminal recordings are not rewritten'
);
select is((select count(*) from tests.claim()), 0::bigint, 'closed rows are never claimed again');

select * from finish();
rollback;
