-- enqueue_available (internal) writes the event and the realtime row once per recording,
-- idempotent by recording (recording_finalize.outbox's unique recording_id); RF007 for a recording that is not Available.
begin;
select plan(10);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as rec \gset
select tests.make_recording('Direct', tests.make_session('Direct', null), 'Uploading')
    as uploading \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as failed \gset

create function pg_temp.enqueue(
    p_id uuid, p_topic text default 'pin.messenger.call-recording-available.v1'
)
returns boolean language sql as $$
    select recording_finalize_internal.enqueue_available(r,
        recording_finalize_internal.session_of(coalesce(r.session_kind, 'Direct'), r.session_id),
        p_topic)
    from (select (recording_finalize_internal.recording_row(p_id)).*
        union all select (null::recording_finalize_internal.recording).*
        limit 1) as r
$$;

select is(pg_temp.enqueue(:'rec'), true, 'the first call enqueues and returns true');
select is(pg_temp.enqueue(:'rec'), false, 'the second call finds the event and returns false');
select is(tests.event_count(:'rec'), 1::bigint, 'one integration row');
select is(tests.realtime_count(:'rec', 'RecordingAvailable'), 1::bigint, 'one realtime row');
select results_eq(
    format($$select r.session_kind, r.session_id, o.payload
        from messenger.realtime_outbox as o join messenger.call_recordings as r
            on r.id = o.reference_id
        where o.reference_id = %L$$, :'rec'),
    format($$select session_kind, session_id,
        jsonb_build_object('recordingId', %L::uuid, 'status', 'Available')
        from messenger.call_recordings where id = %L$$, :'rec', :'rec'),
    'the realtime row: routed to the session, payload recordingId and status only (no URL)'
);
select results_eq(
    format($$select topic, message_key, headers ->> 'event-type', recording_id
        from recording_finalize.outbox where recording_id = %L$$, :'rec'),
    format($$select 'pin.messenger.call-recording-available.v1', session_id::text,
        'call-recording-available', id from messenger.call_recordings where id = %L$$,
        :'rec'),
    'topic as given, key = SessionId, event type, recording_id = RecordingId'
);
select throws_ok(
    format($$select pg_temp.enqueue(%L)$$, :'uploading'),
    'RF007', null, 'a recording that is not Available has no event'
);
select throws_ok(
    format($$select pg_temp.enqueue(%L)$$, :'failed'),
    'RF007', null, 'a Failed recording has no event'
);
select throws_ok(
    format($$select pg_temp.enqueue(%L)$$, gen_random_uuid()),
    'RF007', null, 'a missing recording has no event'
);
select is(
    (select count(*) from recording_finalize.outbox)
        + (select count(*) from messenger.integration_outbox)
        + (select count(*) from messenger.realtime_outbox),
    2::bigint,
    'the refused calls wrote nothing'
);

select * from finish();
rollback;
