-- claim_due quarantines finalize rows whose recording or session does not exist.
begin;
select plan(6);

select tests.clean_slate();
-- A finalize row pointing at nothing (the recording was deleted by hand).
insert into messenger.recording_finalize_attempts (
    recording_id, session_kind, session_id, next_attempt_at
)
values (gen_random_uuid(), 'Direct', gen_random_uuid(), now() - interval '1 minute')
returning recording_id as no_recording \gset
-- A recording whose session row is gone.
select tests.make_recording('Conference', gen_random_uuid(), 'Uploading') as no_session \gset
select tests.make_due_row(:'no_session') is not null as ok \gset

create temp table claimed as select * from tests.claim();

select results_eq(
    format($$select action, detail from claimed where recording_id = %L$$, :'no_recording'),
    $$values ('quarantined', 'RecordingNotFound')$$,
    'a row without its recording is quarantined'
);
select is(
    (select last_error from messenger.recording_finalize_attempts
        where recording_id = :'no_recording'),
    'RecordingNotFound: no call_recordings row with this id',
    'its last_error names the problem'
);
select results_eq(
    format($$select action, detail from claimed where recording_id = %L$$, :'no_session'),
    $$values ('quarantined', 'SessionNotFound')$$,
    'a recording without its session is quarantined'
);
select matches(
    (select last_error from messenger.recording_finalize_attempts
        where recording_id = :'no_session'),
    '^SessionNotFound: no Conference session ',
    'its last_error names the missing session'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts where status = 'Quarantined'),
    2::bigint,
    'both rows are Quarantined'
);
select is(
    (select status from messenger.call_recordings where id = :'no_session'), 'Uploading',
    'the recording is left as it was'
);

select * from finish();
rollback;
