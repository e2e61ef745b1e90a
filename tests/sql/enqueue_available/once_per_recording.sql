-- enqueue_available writes the event and the realtime row once per recording; RF007 otherwise.
begin;
select plan(9);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as rec \gset
select tests.make_recording('Direct', tests.make_session('Direct', null), 'Uploading')
    as uploading \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as failed \gset

select is(
    recording_finalize.enqueue_available(:'rec', 'pin.messenger.call-recording-available.v1'),
    true,
    'the first call enqueues and returns true'
);
select is(
    recording_finalize.enqueue_available(:'rec', 'pin.messenger.call-recording-available.v1'),
    false,
    'the second call finds the event and returns false'
);
select is(tests.event_count(:'rec'), 1::bigint, 'one integration row');
select is(tests.realtime_count(:'rec', 'RecordingAvailable'), 1::bigint, 'one realtime row');
select throws_ok(
    format($$select recording_finalize.enqueue_available(%L, 'another.topic')$$, :'rec'),
    'RF009', null, 'another topic than the server''s is refused (no event lands elsewhere)'
);
select is(
    recording_finalize.enqueue_available(:'rec', null), false,
    'NULL is the server''s topic: the event is already there'
);
select throws_ok(
    format($$select recording_finalize.enqueue_available(%L, null)$$, :'uploading'),
    'RF007', null, 'a recording that is not Available has no event'
);
select throws_ok(
    format($$select recording_finalize.enqueue_available(%L, null)$$, :'failed'),
    'RF007', null, 'a Failed recording has no event'
);
select throws_ok(
    format($$select recording_finalize.enqueue_available(%L, null)$$, gen_random_uuid()),
    'RF007', null, 'a missing recording has no event'
);

select * from finish();
rollback;
