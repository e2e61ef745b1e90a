-- schedule_finalize opens one finalize row per recording (opened_by lifecycle) and re-times
-- only untried Pending rows, whoever opened them.
begin;
select plan(8);

select tests.clean_slate();
select tests.make_session('Conference', null) as session \gset
select tests.make_recording('Conference', :'session', 'Uploading') as rec \gset

select lives_ok(
    format(
        $$select recording_finalize_internal.schedule_finalize(%L, 'Conference', %L,
            now() + interval '30 minutes')$$,
        :'rec', :'session'
    ),
    'opens the row'
);
select results_eq(
    $$select status, attempts, next_attempt_at, session_kind, last_error, claim_token, opened_by
    from messenger.recording_finalize_attempts$$,
    $$values ('Pending'::varchar, 0, now() + interval '30 minutes', 'Conference'::varchar,
        null::varchar, null::uuid, 'lifecycle'::varchar)$$,
    'Pending, untried, due at p_due_at, opened_by lifecycle'
);
select recording_finalize_internal.schedule_finalize(
    :'rec', 'Conference', :'session', now() + interval '5 minutes'
) is null as retimed \gset
select results_eq(
    'select count(*), min(next_attempt_at) from messenger.recording_finalize_attempts',
    $$values (1::bigint, now() + interval '5 minutes')$$,
    'a second call re-times the untried row instead of adding one (ux_rfa_recording)'
);

update messenger.recording_finalize_attempts set attempts = 1;
select recording_finalize_internal.schedule_finalize(
    :'rec', 'Conference', :'session', now() + interval '1 hour'
) is null as not_retimed \gset
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts),
    now() + interval '5 minutes',
    'a row the worker has tried keeps its schedule'
);

update messenger.recording_finalize_attempts set attempts = 0, status = 'Done';
select recording_finalize_internal.schedule_finalize(
    :'rec', 'Conference', :'session', now() + interval '1 hour'
) is null as done_kept \gset
select results_eq(
    'select status, next_attempt_at from messenger.recording_finalize_attempts',
    $$values ('Done'::varchar, now() + interval '5 minutes')$$,
    'a Done row is neither reopened nor re-timed'
);

update messenger.recording_finalize_attempts
set status = 'Quarantined', quarantine_reason = 'max_attempts';
select recording_finalize_internal.schedule_finalize(
    :'rec', 'Conference', :'session', now() + interval '1 hour'
) is null as quarantined_kept \gset
select results_eq(
    'select status, next_attempt_at from messenger.recording_finalize_attempts',
    $$values ('Quarantined'::varchar, now() + interval '5 minutes')$$,
    'a Quarantined row is neither released nor re-timed'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts), 1::bigint,
    'still one row for the recording'
);

-- A row the worker's discovery opened, untried: re-timed, and it stays discovery's.
update messenger.recording_finalize_attempts
set status = 'Pending', quarantine_reason = null, opened_by = 'discovery';
select recording_finalize_internal.schedule_finalize(
    :'rec', 'Conference', :'session', now() + interval '2 hours'
) is null as discovered_retimed \gset
select results_eq(
    'select next_attempt_at, opened_by from messenger.recording_finalize_attempts',
    $$values (now() + interval '2 hours', 'discovery'::varchar)$$,
    'an untried row discovery opened is re-timed and keeps its opened_by'
);

select * from finish();
rollback;
