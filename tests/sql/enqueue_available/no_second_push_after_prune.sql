-- The realtime RecordingAvailable push goes out once (DBA review finding 8): prune deletes a
-- dispatched push on its own while the event is still unpublished (relay backlog or pause); a
-- duplicate ingest callback, apply_outcome's terminal path or claim_due's republish then finds
-- the event still there and must not write the push again.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as rec \gset
select messenger.recording_ingest_completed(:'rec', 'rec/r.webm', 100, 10, 'Webm');
update messenger.realtime_outbox set dispatched_at = now() - interval '40 days'
where reference_id = :'rec';
select results_eq(
    $$select outbox, realtime from recording_finalize.prune('30 days')$$,
    'values (0::bigint, 1::bigint)', 'prune deletes the dispatched push, the event is unpublished'
);
select is(
    messenger.recording_ingest_completed(:'rec', 'rec/r.webm', 100, 10, 'Webm')::text,
    'already_available', 'a duplicate callback'
);
select is(
    (select count(*) from messenger.realtime_outbox where reference_id = :'rec'), 0::bigint,
    'writes no second push'
);
select is(recording_finalize.enqueue_available(:'rec', null), false,
    'enqueue_available itself: the event exists, nothing new');

select * from finish();
rollback;
