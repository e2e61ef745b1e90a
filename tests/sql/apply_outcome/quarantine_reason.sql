-- Every quarantine apply_outcome makes carries its quarantine_reason (written by the function, no
-- trigger): invalid_metadata (the driver's verdict, unusable found metadata, the service's own
-- constraint), max_attempts (the last attempt ended transient), recording_not_found (the
-- recording row vanished after the claim).
begin;
select plan(6);

select tests.clean_slate();
select tests.make_stuck() as bad_meta \gset
select tests.make_stuck() as bad_found \gset
select tests.make_stuck(p_attempts => 7) as last_try \gset
select tests.make_stuck() as vanished \gset
select count(*) as claimed from tests.claim() \gset
delete from messenger.call_recordings where id = :'vanished';

select is(
    (select result from tests.apply(:'bad_meta', 'invalid_metadata',
        p_error => 'duration-seconds NaN')),
    'quarantined', 'invalid_metadata quarantines'
);
select is(
    (select result from tests.apply(:'bad_found', 'found', 'k', 1, 1, 'Mp3')),
    'quarantined', 'found with an unknown format quarantines'
);
select is(
    (select result from tests.apply(:'last_try', 'transient', p_error => 'ConnectTimeoutError')),
    'quarantined', 'the last transient attempt quarantines'
);
select results_eq(
    format($$select result, finalize_status, attempts, detail from tests.apply(%L, 'found', 'k',
        1, 1, 'Ogg')$$, :'vanished'),
    $$values ('quarantined', 'Quarantined', 1,
        'RecordingNotFound: recording_finalize_adapter.recordings shows no recording with this id')$$,
    'a recording gone since the claim: quarantined, whatever the verdict'
);
select results_eq(
    format(
        $$select recording_id::text, quarantine_reason::text
        from messenger.recording_finalize_attempts where recording_id in (%L, %L, %L, %L)
        order by 2, 1$$,
        :'bad_meta', :'bad_found', :'last_try', :'vanished'
    ),
    format(
        $$select * from (values (%L, 'invalid_metadata'), (%L, 'invalid_metadata'),
            (%L, 'max_attempts'), (%L, 'recording_not_found')) as v (id, reason)
        order by 2, 1$$,
        :'bad_meta', :'bad_found', :'last_try', :'vanished'
    ),
    'invalid_metadata twice, max_attempts, recording_not_found'
);
select is(
    (select count(*) from recording_finalize.outbox)
        + (select count(*) from messenger.integration_outbox)
        + (select count(*) from messenger.realtime_outbox),
    0::bigint, 'no quarantine wrote an outbox row'
);

select * from finish();
rollback;
