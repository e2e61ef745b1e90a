-- The happy path and the safety net emit byte-compatible events: a consumer cannot tell them
-- apart. Two recordings of the same session, one per path, differ only in their ids.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_session('Direct', interval '2 hours') as session \gset
-- Via the safety net: claim, then found.
select tests.make_recording('Direct', :'session', 'Uploading') as by_worker \gset
select tests.make_due_row(:'by_worker') is not null as ok \gset
select claim_token as token from tests.claim() \gset
select result as worker_result from tests.apply(
    :'by_worker', 'found', 'recordings/same', 4096, 600, 'Webm'
) \gset
-- Via the ingest callback, same metadata.
select tests.make_recording('Direct', :'session', 'Uploading') as by_callback \gset
select recording_finalize.recording_ingest_completed(:'by_callback', 'recordings/same', 4096,
    600, 'Webm') as callback_result \gset

select is(
    (select payload - 'recordingId' from recording_finalize.outbox
        where recording_id = :'by_worker'),
    (select payload - 'recordingId' from recording_finalize.outbox
        where recording_id = :'by_callback'),
    'same payload apart from the recording id'
);
select is(
    (select length(payload::text) from recording_finalize.outbox
        where recording_id = :'by_worker'),
    (select length(payload::text) from recording_finalize.outbox
        where recording_id = :'by_callback'),
    'same rendered length'
);
select results_eq(
    $$select topic, message_key, headers ->> 'event-type', array(select jsonb_object_keys(headers))
    from recording_finalize.outbox order by id$$,
    $$select topic, message_key, headers ->> 'event-type', array(select jsonb_object_keys(headers))
    from recording_finalize.outbox order by id desc$$,
    'same topic, key, event type and header names'
);
select is(
    (select payload from messenger.realtime_outbox where reference_id = :'by_worker')
        - 'recordingId',
    (select payload from messenger.realtime_outbox where reference_id = :'by_callback')
        - 'recordingId',
    'same realtime payload apart from the recording id'
);

select * from finish();
rollback;
