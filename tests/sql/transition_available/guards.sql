-- transition_available (internal): RF007 for a terminal or missing recording, the version step
-- per source status, missing times derived from the duration, its event enqueued once; it does
-- not check the metadata itself (its callers do: metadata_problem), so the service's own
-- CHECKs are what refuses bad values here.
begin;
select plan(11);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as available \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as failed \gset
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as uploading \gset
select tests.make_recording('Direct', tests.make_session(), 'Pending') as pending \gset
select tests.make_recording('Conference', tests.make_session('Conference'), 'Recording')
    as recording \gset
select 'pin.messenger.call-recording-available.v1' as topic \gset

-- The call every caller makes: the recording with the status read under its lock, the adopted
-- metadata, its session, the topic.
create function pg_temp.move(p_id uuid, p_file_id text, p_duration integer default 1)
returns boolean language sql as $$
    select recording_finalize_internal.transition_available(
        p_id, (select r.status from messenger.call_recordings as r where r.id = p_id),
        p_file_id, 1, p_duration, 'Ogg',
        (select recording_finalize_internal.session_of(r.session_kind, r.session_id)
            from messenger.call_recordings as r where r.id = p_id),
        'pin.messenger.call-recording-available.v1')
$$;
create temp table before as select * from messenger.call_recordings;

select throws_ok(
    format($$select pg_temp.move(%L, 'k')$$, :'available'),
    'RF007', null, 'an Available recording is not transitioned again'
);
select throws_ok(
    format($$select pg_temp.move(%L, 'k')$$, :'failed'),
    'RF007', null, 'a Failed recording is not transitioned'
);
select throws_ok(
    format($$select pg_temp.move(%L, 'k')$$, gen_random_uuid()),
    'RF007', null, 'a missing recording is refused'
);
select set_eq('select * from messenger.call_recordings', 'select * from before',
    'the refused calls moved nothing');
select is(
    tests.violated_constraint(format($$select pg_temp.move(%L, 'ftp://h/k')$$, :'uploading')),
    'call_recordings_file_id_not_url_ck',
    'unchecked metadata meets the service''s CHECK (the callers check it first)'
);

select is(pg_temp.move(:'uploading', 'k'), true, 'from Uploading: moved, the event is new');
select results_eq(
    format($$select status, version, file_id, available_at from messenger.call_recordings
        where id = %L$$, :'uploading'),
    $$values ('Available'::varchar, 2, 'k'::text, now())$$,
    'Available with the metadata; from Uploading the version moves by one'
);
select is(pg_temp.move(:'recording', 'k3'), true, 'from Recording');
select is(
    (select version from messenger.call_recordings where id = :'recording'), 3,
    'from Recording the version moves by two (-> Uploading -> Available)'
);

update messenger.call_recordings set started_at = null, ended_at = null where id = :'pending';
select pg_temp.move(:'pending', 'k2', 90) as moved_pending \gset
select results_eq(
    format(
        $$select status, version, ended_at, started_at from messenger.call_recordings
        where id = %L$$,
        :'pending'
    ),
    $$values ('Available'::varchar, 3, now(), now() - interval '90 seconds')$$,
    'from Pending: two steps, ended_at now and started_at = ended_at - duration'
);
select results_eq(
    format($$select tests.event_count(%L), tests.event_count(%L), tests.event_count(%L),
        tests.realtime_count(%L, 'RecordingAvailable')$$,
        :'uploading', :'recording', :'pending', :'pending'),
    $$values (1::bigint, 1::bigint, 1::bigint, 1::bigint)$$,
    'each transition enqueued its event and realtime row'
);

select * from finish();
rollback;
