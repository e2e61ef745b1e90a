-- enqueue_available renders the payload's three instants as iso_utc does: ISO-8601 UTC with
-- microseconds and a Z, whatever the session's TimeZone.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as rec \gset
update messenger.call_recordings
set started_at = '2026-11-30 09:58:30.123456+00', ended_at = '2026-11-30 09:59:59.5+00',
    available_at = '2026-11-30 10:00:00.000001+00'
where id = :'rec';
set local timezone = 'Asia/Kathmandu';
select recording_finalize_internal.enqueue_available(r,
    recording_finalize_internal.session_of(r.session_kind, r.session_id),
    'pin.messenger.call-recording-available.v1')
from recording_finalize_internal.recording_row(:'rec') as r;

select is(
    (select payload ->> 'startedAt' from recording_finalize.outbox),
    '2026-11-30T09:58:30.123456Z',
    'startedAt in UTC with microseconds'
);
select is(
    (select payload ->> 'endedAt' from recording_finalize.outbox),
    '2026-11-30T09:59:59.500000Z',
    'endedAt: a fixed width of six fraction digits'
);
select is(
    (select payload ->> 'availableAt' from recording_finalize.outbox),
    '2026-11-30T10:00:00.000001Z',
    'availableAt in UTC, not in the session''s Asia/Kathmandu time'
);
select is(
    (select payload ->> 'availableAt' from recording_finalize.outbox),
    recording_finalize_internal.iso_utc('2026-11-30 10:00:00.000001+00'),
    'exactly iso_utc''s text'
);

select * from finish();
rollback;
