-- claim_decision: which rule wins when several apply. A missing recording before anything; a
-- terminal recording is settled whatever its session or attempts; a missing session before the
-- SLA; the SLA before the attempts (a deferred row is never quarantined).
begin;

create temp table cases (
    description text,
    status text,
    enqueued boolean,
    session_found boolean,
    ended_ago interval,
    attempts integer,
    last_outcome text,
    action text,
    detail text,
    quarantine_reason text
);
insert into cases values
    ('no recording, exhausted: still recording_not_found',
        null, true, true, '2 hours', 99, null,
        'quarantined', 'RecordingNotFound', 'recording_not_found'),
    ('Failed, exhausted, session gone: closed',
        'Failed', false, false, null, 99, null, 'closed', 'Failed', null),
    ('Available without its event, exhausted, session gone: republished',
        'Available', false, false, null, 99, null, 'republished', 'Available', null),
    ('Available with its event, session still running: closed',
        'Available', true, true, null, 0, null, 'closed', 'Available', null),
    ('Available within the SLA: republished (the SLA is for active recordings)',
        'Available', false, true, '1 minute', 0, null, 'republished', 'Available', null),
    ('Failed, the event flag set (it is not read for Failed): closed',
        'Failed', true, true, '2 hours', 0, null, 'closed', 'Failed', null),
    ('an event flag on an active recording changes nothing: reconcile',
        'Uploading', true, true, '2 hours', 0, null, 'reconcile', 'Uploading', null),
    ('session gone, exhausted: session_not_found, not crash_loop',
        'Uploading', false, false, null, 99, null,
        'quarantined', 'SessionNotFound', 'session_not_found'),
    ('session running, exhausted: deferred, never quarantined',
        'Recording', false, true, null, 99, null, 'deferred_by_sla', 'SessionNotEnded', null),
    ('within the SLA, exhausted: deferred, never quarantined',
        'Uploading', false, true, '5 minutes', 99, 'transient',
        'deferred_by_sla', 'WithinSla', null);

select plan((select count(*)::integer from cases));

select is(
    (select row(d.action, d.detail, d.quarantine_reason)::text
        from recording_finalize_internal.claim_decision(
            c.status, c.enqueued, c.session_found,
            '2026-01-01 12:00:00+00'::timestamptz - c.ended_ago,
            c.attempts, c.last_outcome, 8, interval '30 minutes',
            '2026-01-01 12:00:00+00'::timestamptz
        ) as d),
    row(c.action, c.detail, c.quarantine_reason)::text,
    c.description
)
from cases as c
order by c.description;

select * from finish();
rollback;
