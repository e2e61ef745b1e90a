-- recording_stopped: Recording -> Uploading and the finalize row, due one SLA after session end.
begin;
select plan(11);

select tests.clean_slate();
select tests.make_session('Direct', null) as live \gset
select tests.make_recording('Direct', :'live', 'Recording') as rec \gset

select is(
    recording_finalize.recording_stopped(:'rec', interval '30 minutes'), 'Uploading',
    'stopping returns the new status'
);
select results_eq(
    format(
        'select status, ended_at, version from messenger.call_recordings where id = %L', :'rec'
    ),
    $$values ('Uploading'::varchar, now(), 2)$$,
    'the recording is Uploading, ended now, version bumped'
);
select results_eq(
    format(
        $$select status, attempts, next_attempt_at, session_kind, session_id
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    format(
        $$values ('Pending'::varchar, 0, now() + interval '30 minutes', 'Direct'::varchar,
            %L::uuid)$$,
        :'live'
    ),
    'the finalize row is opened: Pending, untried, due one SLA from now (session still runs)'
);
select is(
    recording_finalize.recording_stopped(:'rec', interval '30 minutes'), 'Uploading',
    'a repeated stop is accepted'
);
select results_eq(
    format(
        $$select count(*), min(r.version) from messenger.call_recordings as r
        join messenger.recording_finalize_attempts as f on f.recording_id = r.id
        where r.id = %L$$,
        :'rec'
    ),
    $$values (1::bigint, 2)$$,
    'and is a no-op: one finalize row, no version bump'
);

-- The session ended an hour ago and the stop arrives late: due at ended_at + SLA.
select tests.make_session('Conference', interval '1 hour') as ended \gset
select tests.make_recording('Conference', :'ended', 'Recording') as late \gset
select recording_finalize.recording_stopped(:'late', interval '30 minutes') as late_status \gset
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = :'late'),
    (select ended_at + interval '30 minutes' from messenger.conference_sessions
        where id = :'ended'),
    'after the session ended the row is due at ended_at + SLA'
);
select cmp_ok(
    (select next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = :'late'),
    '<=', now(),
    'which is already due: the SLA has run out'
);

-- A terminal recording is left alone.
select tests.make_recording('Direct', tests.make_session(), 'Available') as done \gset
create temp table done_before as select * from messenger.call_recordings where id = :'done';
select is(
    recording_finalize.recording_stopped(:'done'), 'Available',
    'stopping an Available recording returns its status'
);
select set_eq(
    format('select * from messenger.call_recordings where id = %L', :'done'),
    'select * from done_before',
    'and does not touch it'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts where recording_id = :'done'),
    0::bigint,
    'nor opens a finalize row for it'
);
select is(
    recording_finalize.recording_stopped(
        tests.make_recording('Direct', tests.make_session(), 'Failed')),
    'Failed',
    'a Failed recording answers Failed'
);

select * from finish();
rollback;
