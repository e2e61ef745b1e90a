-- transition_available: RF002 for unusable metadata, RF007 for a terminal recording, the
-- version step per source status, and a missing started_at derived from the duration.
begin;
select plan(8);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as available \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as failed \gset
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as uploading \gset
select tests.make_recording('Direct', tests.make_session(), 'Pending') as pending \gset

select throws_ok(
    format(
        $$select recording_finalize.transition_available(%L, 'k', 1, 1, 'Ogg', null)$$,
        :'available'
    ),
    'RF007', null, 'an Available recording is not transitioned again'
);
select throws_ok(
    format(
        $$select recording_finalize.transition_available(%L, 'k', 1, 1, 'Ogg', null)$$, :'failed'
    ),
    'RF007', null, 'a Failed recording is not transitioned'
);
select throws_ok(
    format(
        $$select recording_finalize.transition_available(%L, 'k', 1, 1, 'Ogg', null)$$,
        gen_random_uuid()
    ),
    'RF007', null, 'a missing recording is refused'
);
select throws_ok(
    format(
        $$select recording_finalize.transition_available(%L, 'ftp://h/k', 1, 1, 'Ogg', null)$$,
        :'uploading'
    ),
    'RF002', null, 'unusable metadata is refused before anything moves'
);

select recording_finalize.transition_available(:'uploading', 'k', 1, 1, 'Ogg', null)
    is null as moved \gset
select is(
    (select version from messenger.call_recordings where id = :'uploading'), 2,
    'from Uploading the version moves by one'
);

update messenger.call_recordings set started_at = null, ended_at = null where id = :'pending';
select recording_finalize.transition_available(:'pending', 'k2', 1, 90, 'Ogg', null)
    is null as moved_pending \gset
select results_eq(
    format(
        $$select status, version, ended_at, started_at from messenger.call_recordings
        where id = %L$$,
        :'pending'
    ),
    $$values ('Available'::varchar, 3, now(), now() - interval '90 seconds')$$,
    'from Pending: two steps, ended_at now and started_at = ended_at - duration'
);
select is(
    (select payload ->> 'startedAt' from messenger.integration_outbox
        where dedupe_key = :'pending'),
    recording_finalize.iso_utc(now() - interval '90 seconds'),
    'so the event never carries a null startedAt'
);
select is(tests.event_count(:'uploading'), 1::bigint, 'each transition enqueues its event');

select * from finish();
rollback;
