-- apply_outcome(found): the lost callback with the binary in S3 - adopt, Available, event, Done.
begin;
select plan(25);

-- Payload timestamps must be UTC whatever the connection's TimeZone.
set local timezone = 'Asia/Kathmandu';

select tests.clean_slate();
select gen_random_uuid() as chat, gen_random_uuid() as deal, gen_random_uuid() as tenant \gset
select tests.make_session('Direct', interval '2 hours', gen_random_uuid(), :'chat', :'deal',
    :'tenant') as session \gset
select tests.make_recording('Direct', :'session', 'Uploading', p_media_type => 'Video',
    p_trigger => 'Auto') as rec \gset
select tests.make_due_row(:'rec') is not null as ok \gset
select claim_token as token from tests.claim() \gset

create temp table applied as
select * from recording_finalize.apply_outcome(
    :'rec', :'token', 'found', 'recordings/' || :'rec', 123456, 95, 'Mp4'
);

select results_eq(
    'select result, finalize_status, attempts, detail from applied',
    $$values ('reconciled', 'Done', 1, null::text)$$,
    'found: reconciled, row Done, attempt 1, no detail (nothing went wrong)'
);

-- The recording.
select results_eq(
    format(
        $$select status, file_id, size_bytes, duration_seconds, format
        from messenger.call_recordings where id = %L$$,
        :'rec'
    ),
    format($$values ('Available'::varchar, %L, 123456::bigint, 95, 'Mp4'::varchar)$$,
        'recordings/' || :'rec'),
    'the recording is Available with the adopted FileId, SizeBytes, DurationSeconds, Format'
);
select is(
    (select available_at from messenger.call_recordings where id = :'rec'), now(),
    'available_at is set by the transition'
);
select is(
    (select version from messenger.call_recordings where id = :'rec'), 2,
    'the version is bumped (Uploading -> Available)'
);

-- The finalize row.
select results_eq(
    format(
        $$select status, claim_token, last_error, last_outcome, quarantine_reason
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Done'::varchar, null::uuid, null::varchar, 'found'::varchar, null::varchar)$$,
    'the finalize row is Done, its token spent, the verdict recorded as last_outcome'
);

-- The integration event: the product's own (recording_finalize.outbox).
select is(tests.event_count(:'rec'), 1::bigint, 'exactly one event in the product''s outbox');
select is(
    (select count(*) from messenger.integration_outbox), 0::bigint,
    'and nothing written into the service''s outbox'
);
select results_eq(
    $$select topic, message_key, recording_id, published_at
    from recording_finalize.outbox$$,
    format(
        $$values ('pin.messenger.call-recording-available.v1', %L, %L::uuid,
            null::timestamptz)$$,
        :'session', :'rec'
    ),
    'the server''s topic, key = SessionId, recording_id = RecordingId, not yet published'
);
select is(
    (select array_agg(k order by k) from recording_finalize.outbox,
        jsonb_object_keys(headers) as k),
    array['event-id', 'event-type'],
    'headers are exactly event-type and event-id'
);
select is(
    (select headers ->> 'event-type' from recording_finalize.outbox),
    'call-recording-available',
    'header event-type = call-recording-available'
);
select matches(
    (select headers ->> 'event-id' from recording_finalize.outbox),
    '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
    'header event-id is a UUID'
);
select is(
    (select array_agg(k order by k) from recording_finalize.outbox,
        jsonb_object_keys(payload) as k),
    array[
        'availableAt', 'chatId', 'dealId', 'durationSeconds', 'endedAt', 'fileId', 'format',
        'mediaType', 'recordingId', 'sessionId', 'sessionKind', 'sizeBytes', 'startedAt',
        'tenantId', 'trigger'
    ],
    'payload keys are exactly the contract''s fifteen'
);
select results_eq(
    $$select payload ->> 'recordingId', payload ->> 'sessionKind', payload ->> 'sessionId',
        payload ->> 'chatId', payload ->> 'dealId', payload ->> 'tenantId'
    from recording_finalize.outbox$$,
    format($$values (%L, 'Direct', %L, %L, %L, %L)$$,
        :'rec', :'session', :'chat', :'deal', :'tenant'),
    'payload ids: recording, session kind and id, chat, deal, tenant'
);
select results_eq(
    $$select payload ->> 'mediaType', payload ->> 'fileId', payload ->> 'format',
        payload ->> 'trigger'
    from recording_finalize.outbox$$,
    format($$values ('Video', %L, 'Mp4', 'Auto')$$, 'recordings/' || :'rec'),
    'payload media type, file id, format and trigger'
);
select results_eq(
    $$select payload -> 'durationSeconds', payload -> 'sizeBytes',
        jsonb_typeof(payload -> 'durationSeconds'), jsonb_typeof(payload -> 'sizeBytes')
    from recording_finalize.outbox$$,
    $$values ('95'::jsonb, '123456'::jsonb, 'number', 'number')$$,
    'durationSeconds and sizeBytes are JSON numbers'
);
select ok(
    (select bool_and(
        payload ->> k ~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$'
    ) from recording_finalize.outbox, unnest(array['startedAt', 'endedAt', 'availableAt']) as k),
    'startedAt, endedAt, availableAt are ISO-8601 UTC with a Z suffix'
);
select results_eq(
    format(
        $$select (o.payload ->> 'startedAt')::timestamptz, (o.payload ->> 'endedAt')::timestamptz,
            (o.payload ->> 'availableAt')::timestamptz
        from recording_finalize.outbox as o, messenger.call_recordings as r
        where r.id = %L$$,
        :'rec'
    ),
    format(
        $$select started_at, ended_at, available_at from messenger.call_recordings
        where id = %L$$,
        :'rec'
    ),
    'the payload timestamps are the recording''s own instants'
);
select is(
    (select payload ->> 'availableAt' from recording_finalize.outbox),
    to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'availableAt is rendered in UTC, not in the session''s Asia/Kathmandu time'
);
select doesnt_match(
    (select payload::text from recording_finalize.outbox), '://',
    'the payload carries no URL'
);

-- The realtime row.
select is(
    tests.realtime_count(:'rec', 'RecordingAvailable'), 1::bigint,
    'a realtime RecordingAvailable row is written'
);
select results_eq(
    'select session_kind, session_id, dispatched_at from messenger.realtime_outbox',
    format($$values ('Direct'::varchar, %L::uuid, null::timestamptz)$$, :'session'),
    'the realtime row is routed to the session and waits for dispatch'
);
select is(
    tests.realtime_count(:'rec', 'RecordingFailed'), 0::bigint,
    'no RecordingFailed row'
);

-- From Recording (the callback never came and the stop was not recorded either): two steps.
select tests.make_stuck('Conference', p_status => 'Recording') as conf \gset
select claim_token as conf_token from tests.claim() \gset
select result as conf_result from recording_finalize.apply_outcome(
    :'conf', :'conf_token', 'found', 'recordings/c', 1, 2, 'Ogg'
) \gset

select is(:'conf_result'::text, 'reconciled', 'a Recording recording is reconciled too');
select results_eq(
    format(
        $$select status, version, ended_at is not null from messenger.call_recordings
        where id = %L$$,
        :'conf'
    ),
    $$values ('Available'::varchar, 3, true)$$,
    'Recording -> Uploading -> Available bumps the version twice and sets ended_at'
);
select is(
    (select message_key from recording_finalize.outbox where recording_id = :'conf'),
    (select session_id::text from messenger.call_recordings where id = :'conf'),
    'a conference event is keyed by the conference session id'
);

select * from finish();
rollback;
