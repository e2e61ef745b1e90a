-- claim_due quarantines finalize rows whose recording or session does not exist, with their
-- quarantine_reason, and counts no attempt.
begin;
select plan(9);

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
    'RecordingNotFound: recording_finalize_adapter.recordings shows no such recording',
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
select results_eq(
    $$select status, quarantine_reason, attempts, claim_token
    from messenger.recording_finalize_attempts order by quarantine_reason$$,
    $$values ('Quarantined'::varchar, 'recording_not_found'::varchar, 0, null::uuid),
        ('Quarantined'::varchar, 'session_not_found'::varchar, 0, null::uuid)$$,
    'both rows are Quarantined with their reason, no attempt counted, no token'
);
select results_eq(
    'select attempts, claim_token from claimed order by detail',
    $$values (0, null::uuid), (0, null::uuid)$$,
    'the claim returns them without a token and with their attempts unchanged'
);
select is((select count(*) from tests.claim()), 0::bigint, 'they are not claimed again');
select is(
    (select count(*) from messenger.integration_outbox)
        + (select count(*) from messenger.realtime_outbox),
    0::bigint,
    'no outbox row is written'
);
select is(
    (select status from messenger.call_recordings where id = :'no_session'), 'Uploading',
    'the recording is left as it was'
);

select * from finish();
rollback;
