-- claim_decision: every branch of the claim's state machine, with its detail, quarantine reason
-- and whether the claim counts an attempt (SLA 30 min, max 8 attempts, a fixed clock).
begin;

create temp table cases (
    description text,
    status text,
    enqueued boolean,
    session_found boolean,
    ended_ago interval,
    attempts integer,
    last_outcome text,
    republish boolean,
    action text,
    detail text,
    quarantine_reason text,
    counts_attempt boolean
);
insert into cases values
    ('no recording: quarantined as recording_not_found',
        null, false, false, null, 0, null, true,
        'quarantined', 'RecordingNotFound', 'recording_not_found', false),
    ('Failed: closed, no event',
        'Failed', false, true, '2 hours', 0, null, true,
        'closed', 'Failed', null, true),
    ('Available with its event: closed',
        'Available', true, true, '2 hours', 0, null, true,
        'closed', 'Available', null, true),
    ('Available without its event: republished',
        'Available', false, true, '2 hours', 0, null, true,
        'republished', 'Available', null, true),
    ('Available without its event, republishing off or held: closed, RepublishOff',
        'Available', false, true, '2 hours', 0, null, false,
        'closed', 'RepublishOff', null, true),
    ('Available with its event, republishing off or held: closed',
        'Available', true, true, '2 hours', 0, null, false,
        'closed', 'Available', null, true),
    ('Uploading, overdue, republishing off: reconcile all the same',
        'Uploading', false, true, '2 hours', 0, null, false,
        'reconcile', 'Uploading', null, true),
    ('a recording whose session is gone: quarantined as session_not_found',
        'Uploading', false, false, null, 0, null, true,
        'quarantined', 'SessionNotFound', 'session_not_found', false),
    ('a session still running: deferred_by_sla, SessionNotEnded',
        'Recording', false, true, null, 0, null, true,
        'deferred_by_sla', 'SessionNotEnded', null, false),
    ('a session ended 10 minutes ago: deferred_by_sla, WithinSla',
        'Uploading', false, true, '10 minutes', 0, null, true,
        'deferred_by_sla', 'WithinSla', null, false),
    ('Uploading, overdue, untried: reconcile, detail Uploading',
        'Uploading', false, true, '2 hours', 0, null, true,
        'reconcile', 'Uploading', null, true),
    ('Recording after its session ended: reconcile, detail Recording',
        'Recording', false, true, '2 hours', 3, 'transient', true,
        'reconcile', 'Recording', null, true),
    ('Pending after its session ended: reconcile, detail Pending',
        'Pending', false, true, '2 hours', 0, null, true,
        'reconcile', 'Pending', null, true),
    ('exhausted, no verdict ever recorded: quarantined as crash_loop',
        'Uploading', false, true, '2 hours', 8, null, true,
        'quarantined', 'MaxAttemptsExceeded', 'crash_loop', false),
    ('exhausted after a transient verdict: quarantined as max_attempts',
        'Uploading', false, true, '2 hours', 8, 'transient', true,
        'quarantined', 'MaxAttemptsExceeded', 'max_attempts', false),
    ('exhausted after a missing verdict (deferred by an incident): max_attempts',
        'Uploading', false, true, '2 hours', 8, 'missing', true,
        'quarantined', 'MaxAttemptsExceeded', 'max_attempts', false),
    ('exhausted after a config_error verdict: max_attempts',
        'Uploading', false, true, '2 hours', 8, 'config_error', true,
        'quarantined', 'MaxAttemptsExceeded', 'max_attempts', false);

select plan((select count(*)::integer from cases) + 6);

select is(
    (select row(d.action, d.detail, d.quarantine_reason, d.counts_attempt)::text
        from recording_finalize_internal.claim_decision(
            c.status, c.enqueued, c.session_found,
            '2026-01-01 12:00:00+00'::timestamptz - c.ended_ago,
            c.attempts, c.last_outcome, 8, interval '30 minutes',
            '2026-01-01 12:00:00+00'::timestamptz, p_republish => c.republish
        ) as d),
    row(c.action, c.detail, c.quarantine_reason, c.counts_attempt)::text,
    c.description
)
from cases as c
order by c.description;

select is(
    (select count(*) from recording_finalize_internal.claim_decision(
        'Uploading', false, true, now() - interval '2 hours', 0, null, 8, '30 minutes', now())),
    1::bigint,
    'exactly one decision per row'
);

-- Its effects, which the claim carries out and the previews report (ended 10 minutes before a
-- fixed clock, SLA 30 minutes, 8 attempts).
create temp table effects as
select c.action as case_action, d.*
from (values
    ('reconcile', 'Uploading', true, 0, '2 hours'::interval, 'transient', null::text),
    ('deferred_by_sla', 'Uploading', true, 2, '10 minutes', null, null),
    ('deferred_not_ended', 'Recording', true, 2, null, null, null),
    ('closed', 'Failed', true, 1, '2 hours', null, null),
    ('max_attempts', 'Uploading', true, 8, '2 hours', 'transient', 'S3Timeout: GET <url>'),
    ('session_gone', 'Uploading', false, 0, null, null, null)
) as c (action, status, session_found, attempts, ended_ago, last_outcome, last_error)
cross join lateral recording_finalize_internal.claim_decision(
    c.status, false, c.session_found, '2026-01-01 12:00:00+00'::timestamptz - c.ended_ago,
    c.attempts, c.last_outcome, 8, interval '30 minutes', '2026-01-01 12:00:00+00'::timestamptz,
    c.last_error, 'Direct', '00000000-0000-0000-0000-00000000000a'
) as d;

select results_eq(
    $$select finalize_status, attempts, next_attempt_at, last_error from effects
    where case_action = 'reconcile'$$,
    $$values ('Pending'::text, 1, null::timestamptz, null::text)$$,
    'handed out: Pending, one attempt counted, due time left to the claim''s backoff'
);
select results_eq(
    $$select finalize_status, attempts, next_attempt_at from effects
    where case_action in ('deferred_by_sla', 'deferred_not_ended') order by case_action$$,
    $$values ('Pending'::text, 2, '2026-01-01 12:20:00+00'::timestamptz),
        ('Pending', 2, '2026-01-01 12:30:00+00')$$,
    'deferred: no attempt counted, due at the session''s end + SLA (or now + SLA, not ended)'
);
select results_eq(
    $$select finalize_status, attempts, next_attempt_at from effects
    where case_action = 'closed'$$,
    $$values ('Done'::text, 2, null::timestamptz)$$,
    'closed: Done, the attempt counted'
);
select results_eq(
    $$select finalize_status, attempts, last_error from effects
    where case_action in ('max_attempts', 'session_gone') order by case_action$$,
    $$values ('Quarantined'::text, 8,
            'MaxAttemptsExceeded: 8 attempts; last error: S3Timeout: GET <url>'::text),
        ('Quarantined', 0,
            'SessionNotFound: no Direct session 00000000-0000-0000-0000-00000000000a')$$,
    'quarantined: no attempt counted, last_error says why'
);
select is(
    (select last_error from recording_finalize_internal.claim_decision(
        null, false, false, null, 0, null, 8, '30 minutes', now())),
    'RecordingNotFound: recording_finalize_adapter.recordings shows no such recording',
    'no recording: the quarantine names the recordings port'
);

select * from finish();
rollback;
