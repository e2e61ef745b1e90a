-- enqueue_available writes the payload's three instants inline (issue 14: three calls of
-- iso_utc cost ~0.1 ms per event); they must stay exactly iso_utc's format.
begin;
select plan(3);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as rec \gset
update messenger.call_recordings
set started_at = '2026-11-30 09:58:30.123456+00', ended_at = '2026-11-30 09:59:59.5+00',
    available_at = '2026-11-30 10:00:00.000001+00'
where id = :'rec';
set local timezone = 'Asia/Kathmandu';
select recording_finalize.enqueue_available(:'rec', null);

select is(
    (select payload ->> 'startedAt' from messenger.integration_outbox),
    recording_finalize.iso_utc('2026-11-30 09:58:30.123456+00'),
    'startedAt is iso_utc(started_at)'
);
select is(
    (select payload ->> 'endedAt' from messenger.integration_outbox),
    recording_finalize.iso_utc('2026-11-30 09:59:59.5+00'),
    'endedAt is iso_utc(ended_at)'
);
select is(
    (select payload ->> 'availableAt' from messenger.integration_outbox),
    recording_finalize.iso_utc('2026-11-30 10:00:00.000001+00'),
    'availableAt is iso_utc(available_at), whatever the session time zone'
);

select * from finish();
rollback;
