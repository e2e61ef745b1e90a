-- session_ended: ends the session, its recording -> Uploading, finalize row due at end + SLA.
begin;
select plan(13);

select tests.clean_slate();
select tests.make_session('Conference', null) as session \gset
select tests.make_recording('Conference', :'session', 'Recording') as rec \gset

select is(
    recording_finalize.session_ended('Conference', :'session', interval '30 minutes'), :'rec'::uuid,
    'returns the id of the recording it sent to finalization'
);
select is(
    (select ended_at from messenger.conference_sessions where id = :'session'), now(),
    'the session has ended now'
);
select results_eq(
    format(
        'select status, ended_at, version from messenger.call_recordings where id = %L', :'rec'
    ),
    $$values ('Uploading'::varchar, now(), 2)$$,
    'the recording is Uploading, ended with the session, version bumped'
);
select results_eq(
    format(
        $$select status, attempts, next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Pending'::varchar, 0, now() + interval '30 minutes')$$,
    'the finalize row is due at ended_at + SLA'
);
select is(
    recording_finalize.session_ended('Conference', :'session', interval '30 minutes'), :'rec'::uuid,
    'ending it again is accepted'
);
select results_eq(
    format(
        $$select count(*), max(r.version) from messenger.call_recordings as r
        join messenger.recording_finalize_attempts as f on f.recording_id = r.id
        where r.id = %L$$,
        :'rec'
    ),
    $$values (1::bigint, 2)$$,
    'and is a no-op: one finalize row, no version bump'
);

-- A session that ended earlier keeps its ended_at; the row follows it.
select tests.make_session('Direct', interval '10 minutes') as earlier \gset
select tests.make_recording('Direct', :'earlier', 'Recording') as earlier_rec \gset
select recording_finalize.session_ended('Direct', :'earlier', interval '30 minutes')
    as earlier_result \gset
select is(
    (select ended_at from messenger.call_sessions where id = :'earlier'),
    now() - interval '10 minutes',
    'an ended_at already set is kept'
);
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = :'earlier_rec'),
    now() + interval '20 minutes',
    'the row is due at that ended_at + SLA'
);

-- recording_stopped opened the row one SLA ahead; the end of the session re-times it.
select tests.make_session('Direct', null) as stopped_first \gset
select tests.make_recording('Direct', :'stopped_first', 'Recording') as stopped_rec \gset
select recording_finalize.recording_stopped(:'stopped_rec', interval '1 hour') as stop_result \gset
select recording_finalize.session_ended('Direct', :'stopped_first', interval '15 minutes')
    as end_result \gset
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = :'stopped_rec'),
    now() + interval '15 minutes',
    'an untried row is re-timed to ended_at + SLA'
);

-- A row the worker has already tried keeps the worker's schedule.
select tests.make_session('Direct', null) as tried_session \gset
select tests.make_recording('Direct', :'tried_session', 'Uploading') as tried_rec \gset
select tests.make_due_row(:'tried_rec', 2, now() + interval '4 minutes') is not null as ok \gset
select recording_finalize.session_ended('Direct', :'tried_session', interval '30 minutes')
    as tried_result \gset
select results_eq(
    format(
        $$select attempts, next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = %L$$,
        :'tried_rec'
    ),
    $$values (2, now() + interval '4 minutes')$$,
    'a row with attempts is not re-timed'
);

-- A session without an active recording.
select tests.make_session('Direct', null) as quiet \gset
select tests.make_recording('Direct', :'quiet', 'Available') as old_rec \gset
select is(
    recording_finalize.session_ended('Direct', :'quiet', interval '30 minutes'), null::uuid,
    'a session without an active recording returns NULL'
);
select is(
    (select ended_at from messenger.call_sessions where id = :'quiet'), now(),
    'and still ends'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts where recording_id = :'old_rec'),
    0::bigint,
    'its terminal recording gets no finalize row'
);

select * from finish();
rollback;
