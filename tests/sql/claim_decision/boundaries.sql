-- claim_decision at its edges: ended exactly one SLA ago is due (reconcile), a microsecond less
-- is not; attempts = max - 1 is handed out, attempts = max quarantined; max attempts 1.
begin;

create temp table cases (
    description text,
    ended_ago interval,
    attempts integer,
    max_attempts integer,
    sla interval,
    action text,
    detail text
);
insert into cases values
    ('ended exactly one SLA ago: reconcile',
        '30 minutes', 0, 8, '30 minutes', 'reconcile', 'Uploading'),
    ('ended one SLA minus 1 microsecond ago: still WithinSla',
        '30 minutes' - interval '1 microsecond', 0, 8, '30 minutes',
        'deferred_by_sla', 'WithinSla'),
    ('ended one SLA plus 1 microsecond ago: reconcile',
        '30 minutes' + interval '1 microsecond', 0, 8, '30 minutes', 'reconcile', 'Uploading'),
    ('ended just now: WithinSla',
        '0', 0, 8, '30 minutes', 'deferred_by_sla', 'WithinSla'),
    ('ended in the future (clock skew): WithinSla',
        '-1 minute', 0, 8, '30 minutes', 'deferred_by_sla', 'WithinSla'),
    ('SLA 1 second, ended 1 second ago: reconcile',
        '1 second', 0, 8, '1 second', 'reconcile', 'Uploading'),
    ('attempts = max - 1: reconcile (its last attempt)',
        '2 hours', 7, 8, '30 minutes', 'reconcile', 'Uploading'),
    ('attempts = max: quarantined',
        '2 hours', 8, 8, '30 minutes', 'quarantined', 'MaxAttemptsExceeded'),
    ('attempts = max + 1 (max lowered since): quarantined',
        '2 hours', 9, 8, '30 minutes', 'quarantined', 'MaxAttemptsExceeded'),
    ('max 1, untried: reconcile',
        '2 hours', 0, 1, '30 minutes', 'reconcile', 'Uploading'),
    ('max 1, tried once: quarantined',
        '2 hours', 1, 1, '30 minutes', 'quarantined', 'MaxAttemptsExceeded'),
    ('max 20000 (the server''s bound), 19999 tried: reconcile',
        '2 hours', 19999, 20000, '30 minutes', 'reconcile', 'Uploading');

select plan((select count(*)::integer from cases) + 2);

select is(
    (select row(d.action, d.detail)::text
        from recording_finalize_internal.claim_decision(
            'Uploading', false, true, '2026-01-01 12:00:00+00'::timestamptz - c.ended_ago,
            c.attempts, 'transient', c.max_attempts, c.sla,
            '2026-01-01 12:00:00+00'::timestamptz
        ) as d),
    row(c.action, c.detail)::text,
    c.description
)
from cases as c
order by c.description;

-- The clock is the caller's p_now, not the transaction's.
select is(
    (select action from recording_finalize_internal.claim_decision(
        'Uploading', false, true, now() - interval '2 hours', 0, null, 8, '30 minutes',
        now() - interval '2 hours')),
    'deferred_by_sla',
    'decided at p_now: two hours back the same session had only just ended'
);
select is(
    (select action from recording_finalize_internal.claim_decision(
        'Uploading', false, true, now() + interval '1 hour', 0, null, 8, '30 minutes',
        now() + interval '2 hours')),
    'reconcile',
    'and two hours ahead a session ending in an hour is overdue'
);

select * from finish();
rollback;
