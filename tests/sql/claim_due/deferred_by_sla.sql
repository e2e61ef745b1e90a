-- claim_due: deferred_by_sla while the session runs or ended less than the SLA ago; exactly
-- the SLA ago is the safety net's.
begin;
select plan(12);

select tests.clean_slate();
-- A finalize row opened by recording_stopped while the session still runs, already tried twice.
select tests.make_stuck(p_ended_ago => null, p_attempts => 2) as running \gset
-- The session ended 10 minutes ago: 20 minutes of the 30-minute SLA are left.
select tests.make_stuck(p_ended_ago => interval '10 minutes') as within_sla \gset
-- Ended 31 minutes ago: the SLA has run out, the safety net takes over.
select tests.make_stuck(p_ended_ago => interval '31 minutes') as overdue \gset
-- Ended exactly one SLA ago (now() is the claim's clock too): the SLA has run out.
select tests.make_stuck(p_ended_ago => interval '30 minutes') as on_the_dot \gset
create temp table recordings_before as select * from messenger.call_recordings;

create temp table claimed as select * from tests.claim(p_sla_timeout => interval '30 minutes');

select results_eq(
    format(
        $$select action, detail, attempts, claim_token from claimed where recording_id = %L$$,
        :'running'
    ),
    $$values ('deferred_by_sla', 'SessionNotEnded', 2, null::uuid)$$,
    'a session still running: deferred, no claim token'
);
select is(
    (select attempts from messenger.recording_finalize_attempts where recording_id = :'running'),
    2,
    'deferring does not count an attempt'
);
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = :'running'),
    now() + interval '30 minutes',
    'a running session is looked at again one SLA from now'
);
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'running'),
    'Pending',
    'a deferred row stays Pending'
);
select results_eq(
    format(
        $$select action, detail, attempts from claimed where recording_id = %L$$, :'within_sla'
    ),
    $$values ('deferred_by_sla', 'WithinSla', 0)$$,
    'a session ended less than the SLA ago: deferred'
);
select is(
    (select attempts from messenger.recording_finalize_attempts
        where recording_id = :'within_sla'),
    0,
    'within the SLA no attempt is counted'
);
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = :'within_sla'),
    now() + interval '20 minutes',
    'the row is re-timed to session end + SLA'
);
select results_eq(
    format($$select action, attempts from claimed where recording_id = %L$$, :'overdue'),
    $$values ('reconcile', 1)$$,
    'a session ended longer than the SLA ago is reconciled'
);
select results_eq(
    format($$select action, attempts from claimed where recording_id = %L$$, :'on_the_dot'),
    $$values ('reconcile', 1)$$,
    'a session that ended exactly one SLA ago is reconciled, not deferred'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recordings_before',
    'deferring touches no recording'
);
select is(
    (select count(*) from tests.claim()), 0::bigint,
    'deferred rows are not due again right away'
);
select is(
    (select action from tests.claim(p_sla_timeout => interval '5 minutes')
        where recording_id = :'within_sla'),
    null,
    're-timed rows stay out of the claim even when the SLA setting shrinks'
);

select * from finish();
rollback;
