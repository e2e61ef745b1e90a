-- An Available row written without started_at/ended_at still yields an event with both times.
begin;
select plan(3);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as rec \gset
update messenger.call_recordings
set started_at = null, ended_at = null, available_at = '2026-11-30 10:00:00+00',
    duration_seconds = 90
where id = :'rec';

select is(
    (select recording_finalize_internal.enqueue_available(r,
        recording_finalize_internal.session_of(r.session_kind, r.session_id),
        'pin.messenger.call-recording-available.v1')
    from recording_finalize_internal.recording_row(:'rec') as r),
    true,
    'the event is enqueued'
);
select is(
    (select payload ->> 'endedAt' from recording_finalize.outbox),
    '2026-11-30T10:00:00.000000Z',
    'a missing ended_at is taken as available_at'
);
select is(
    (select payload ->> 'startedAt' from recording_finalize.outbox),
    '2026-11-30T09:58:30.000000Z',
    'a missing started_at is ended_at minus the duration'
);

select * from finish();
rollback;
