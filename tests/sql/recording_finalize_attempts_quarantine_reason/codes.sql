-- quarantine_reason: each quarantining path leaves its code, derived from last_error.
begin;
select plan(8);

select tests.clean_slate();
-- Claimed 8 times, never answered: crash_loop.
select tests.make_stuck(p_attempts => 8) as crashed \gset
-- Exhausted after transient outcomes: max_attempts.
select tests.make_stuck(p_attempts => 8) as exhausted \gset
update messenger.recording_finalize_attempts set last_error = 'Transient: ReadTimeoutError'
where recording_id = :'exhausted';
-- Requeued after a quarantine and crash-looping since: crash_loop again.
select tests.make_stuck(p_attempts => 8) as requeued \gset
update messenger.recording_finalize_attempts set last_error = 'InvalidMetadata: format'
where recording_id = :'requeued';
-- The session row is gone: session_not_found.
select tests.make_recording('Direct', gen_random_uuid()) as lost_session \gset
select tests.make_due_row(:'lost_session') is not null as ok \gset
-- The recording row is gone: recording_not_found.
select tests.make_stuck() as lost_recording \gset
delete from messenger.call_recordings where id = :'lost_recording';

select is(count(*), 5::bigint, 'five rows quarantined at claim')
from tests.claim() where action = 'quarantined';

create temp table reasons as
select recording_id, quarantine_reason::text as reason from messenger.recording_finalize_attempts;

select is((select reason from reasons where recording_id = :'crashed'), 'crash_loop',
    'exhausted with no outcome ever recorded: crash_loop');
select is((select reason from reasons where recording_id = :'exhausted'), 'max_attempts',
    'exhausted after transient outcomes: max_attempts');
select is((select reason from reasons where recording_id = :'requeued'), 'crash_loop',
    'exhausted with no outcome since the requeue (last_error still the old quarantine): crash_loop');
select is((select reason from reasons where recording_id = :'lost_session'), 'session_not_found',
    'no session: session_not_found');
select is((select reason from reasons where recording_id = :'lost_recording'),
    'recording_not_found', 'no recording: recording_not_found');

-- apply_outcome's two quarantines.
select tests.make_stuck() as bad_meta \gset
select tests.make_stuck(p_attempts => 7) as last_try \gset
create temp table claimed as select * from tests.claim();
select * from recording_finalize.apply_outcome(:'bad_meta', tests.token(:'bad_meta'),
    'invalid_metadata', p_error => 'duration-seconds NaN');
select * from recording_finalize.apply_outcome(:'last_try', tests.token(:'last_try'),
    'transient', p_error => 'ConnectTimeoutError');
select is(
    (select quarantine_reason::text from messenger.recording_finalize_attempts
        where recording_id = :'bad_meta'),
    'invalid_metadata', 'invalid metadata: invalid_metadata'
);
select is(
    (select quarantine_reason::text from messenger.recording_finalize_attempts
        where recording_id = :'last_try'),
    'max_attempts', 'the last attempt ended transient: max_attempts'
);

select * from finish();
rollback;
