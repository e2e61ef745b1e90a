-- enqueue_available: the event's exact bytes for a fixed recording (the contract's fifteen keys,
-- ids as UUID strings, numbers as JSON numbers, instants as ISO UTC), its key, type and headers:
-- what the relay hands to Kafka, pinned, so a change of the payload is a visible change here.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_session('Conference', '2 hours', '00000000-0000-4000-8000-00000000c001',
    '00000000-0000-4000-8000-00000000c4a7', '00000000-0000-4000-8000-00000000d3a1',
    '00000000-0000-4000-8000-0000000007e1') as ses \gset
select tests.make_recording('Conference', :'ses', 'Available',
    '00000000-0000-4000-8000-0000000000a1', 'Video', 'Auto') as rec \gset
update messenger.call_recordings
set file_id = 'recordings/2026/11/30/a1.mp4', size_bytes = 123456789012, duration_seconds = 3599,
    format = 'Mp4', started_at = '2026-11-30 08:00:00+00', ended_at = '2026-11-30 08:59:59.25+00',
    available_at = '2026-11-30 09:00:03.000007+00'
where id = :'rec';
set local timezone = 'America/St_Johns';
select recording_finalize_internal.enqueue_available(r,
    recording_finalize_internal.session_of(r.session_kind, r.session_id),
    'pin.messenger.call-recording-available.v1') as enqueued
from recording_finalize_internal.recording_row(:'rec') as r \gset

select is(
    (select payload::text from recording_finalize.outbox),
    '{"chatId": "00000000-0000-4000-8000-00000000c4a7", '
    || '"dealId": "00000000-0000-4000-8000-00000000d3a1", '
    || '"fileId": "recordings/2026/11/30/a1.mp4", "format": "Mp4", '
    || '"endedAt": "2026-11-30T08:59:59.250000Z", "trigger": "Auto", '
    || '"tenantId": "00000000-0000-4000-8000-0000000007e1", "mediaType": "Video", '
    || '"sessionId": "00000000-0000-4000-8000-00000000c001", "sizeBytes": 123456789012, '
    || '"startedAt": "2026-11-30T08:00:00.000000Z", '
    || '"availableAt": "2026-11-30T09:00:03.000007Z", '
    || '"recordingId": "00000000-0000-4000-8000-0000000000a1", "sessionKind": "Conference", '
    || '"durationSeconds": 3599}',
    'the payload, byte for byte'
);
select results_eq(
    $$select topic, message_key, headers ->> 'event-type', recording_id
    from recording_finalize.outbox$$,
    $$values ('pin.messenger.call-recording-available.v1', '00000000-0000-4000-8000-00000000c001',
        'call-recording-available', '00000000-0000-4000-8000-0000000000a1'::uuid)$$,
    'topic, key = SessionId, event type, recording_id = RecordingId'
);
select is(
    (select headers - 'event-id' from recording_finalize.outbox),
    '{"event-type": "call-recording-available"}'::jsonb,
    'headers: event-type, and a fresh event-id'
);
select is(
    (select payload::text from messenger.realtime_outbox),
    '{"status": "Available", "recordingId": "00000000-0000-4000-8000-0000000000a1"}',
    'the realtime payload, byte for byte'
);

select * from finish();
rollback;
