-- claim_due writes the quarantine_reason of every row it quarantines (no trigger any more; moved
-- here from recording_finalize_attempts_quarantine_reason/codes.sql): crash_loop when no verdict
-- was recorded since the row was opened or rescheduled (last_outcome NULL), max_attempts when one
-- was, session_not_found, recording_not_found.
begin;
select plan(7);

select tests.clean_slate();
-- Claimed 8 times, never answered: crash_loop.
select tests.make_stuck(p_attempts => 8) as crashed \gset
-- Exhausted after transient outcomes: max_attempts.
select tests.make_stuck(p_attempts => 8) as exhausted \gset
update messenger.recording_finalize_attempts
set last_error = 'Transient: ReadTimeoutError', last_outcome = 'transient'
where recording_id = :'exhausted';
-- Rescheduled after a quarantine (last_outcome cleared) and crash-looping since: crash_loop,
-- whatever the old last_error says.
select tests.make_stuck(p_attempts => 8) as rescheduled \gset
update messenger.recording_finalize_attempts set last_error = 'InvalidMetadata: format'
where recording_id = :'rescheduled';
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
    'exhausted with no verdict ever recorded: crash_loop');
select is((select reason from reasons where recording_id = :'exhausted'), 'max_attempts',
    'exhausted after transient verdicts: max_attempts');
select is((select reason from reasons where recording_id = :'rescheduled'), 'crash_loop',
    'exhausted with no verdict since the reschedule (the old last_error notwithstanding)');
select is((select reason from reasons where recording_id = :'lost_session'), 'session_not_found',
    'no session: session_not_found');
select is((select reason from reasons where recording_id = :'lost_recording'),
    'recording_not_found', 'no recording: recording_not_found');

-- The same through the real path: a transient verdict, then the claim that exhausts the row.
select tests.make_stuck(p_attempts => 2) as real_path \gset
select count(*) as c from tests.claim(p_max_attempts => 3) \gset
select result as r from tests.apply(:'real_path', 'transient', p_max_attempts => 4) \gset
select tests.make_due(:'real_path');
select count(*) as c2 from tests.claim(p_max_attempts => 3) \gset
select is(
    (select quarantine_reason::text from messenger.recording_finalize_attempts
        where recording_id = :'real_path'),
    'max_attempts', 'apply_outcome recorded the verdict, so the claim''s quarantine is max_attempts'
);

select * from finish();
rollback;
