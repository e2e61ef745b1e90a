-- recording_ingest_completed (happy path): Available, event, realtime row, finalize row closed.
begin;
select plan(9);

select tests.clean_slate();
select tests.make_stuck(p_ended_ago => interval '5 minutes') as rec \gset
select tests.make_session('Conference', null) as live_session \gset
select tests.make_recording('Conference', :'live_session', 'Recording') as no_row \gset

select is(
    recording_finalize.recording_ingest_completed(
        :'rec', 'recordings/' || :'rec', 2048, 61, 'Webm'),
    'available',
    'the callback returns available'
);
select results_eq(
    format(
        $$select status, file_id, size_bytes, duration_seconds, format, available_at, version
        from messenger.call_recordings where id = %L$$,
        :'rec'
    ),
    format(
        $$values ('Available'::varchar, %L, 2048::bigint, 61, 'Webm'::varchar, now(), 2)$$,
        'recordings/' || :'rec'
    ),
    'the recording is Available with its metadata, version bumped'
);
select is(tests.event_count(:'rec'), 1::bigint, 'one event in the product''s outbox');
select is(
    (select message_key from recording_finalize.outbox where recording_id = :'rec'),
    (select session_id::text from messenger.call_recordings where id = :'rec'),
    'keyed by the session id'
);
select is(
    tests.realtime_count(:'rec', 'RecordingAvailable'), 1::bigint,
    'one realtime RecordingAvailable row'
);
select results_eq(
    format(
        $$select status, attempts, claim_token from messenger.recording_finalize_attempts
        where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Done'::varchar, 0, null::uuid)$$,
    'the finalize row is closed Done without costing an attempt'
);
select is((select count(*) from tests.claim()), 0::bigint, 'nothing left for the safety net');

-- A callback for a recording that never got a finalize row (still Recording: no stop seen).
select is(
    recording_finalize.recording_ingest_completed(:'no_row', 'recordings/n', 1, 1, 'Mp4'),
    'available',
    'a recording without a finalize row becomes Available too'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts where recording_id = :'no_row'),
    0::bigint,
    'and the callback does not open a finalize row for it'
);

select * from finish();
rollback;
