-- operator_state: the pause switch - one flag per part and each pause with who, when, which
-- login and why, in part order; no row = running.
begin;
select plan(4);

select tests.clean_slate();
select results_eq(
    'select reconcile_paused, relay_paused, pauses from recording_finalize.operator_state()',
    $$values (false, false, '[]'::jsonb)$$,
    'no pause row: both parts run, no pauses listed'
);
insert into recording_finalize.pause (part, paused_at, paused_by, reason)
values ('relay', '2026-01-01 10:00+00', 'alice', 'Kafka maintenance');
select results_eq(
    'select reconcile_paused, relay_paused from recording_finalize.operator_state()',
    $$values (false, true)$$,
    'a relay pause pauses the relay only'
);
insert into recording_finalize.pause (part, paused_at, paused_by, reason)
values ('reconcile', '2026-01-01 11:00+00', 'bob', 'S3 incident');
select results_eq(
    'select reconcile_paused, relay_paused from recording_finalize.operator_state()',
    $$values (true, true)$$,
    'both paused'
);
select is(
    (select pauses from recording_finalize.operator_state()),
    jsonb_build_array(
        jsonb_build_object('part', 'reconcile', 'pausedAt', '2026-01-01 11:00+00'::timestamptz,
            'pausedBy', 'bob', 'login', session_user, 'reason', 'S3 incident'),
        jsonb_build_object('part', 'relay', 'pausedAt', '2026-01-01 10:00+00'::timestamptz,
            'pausedBy', 'alice', 'login', session_user, 'reason', 'Kafka maintenance')
    ),
    'each pause with who, when, the login that paused it and why, in part order'
);

select * from finish();
rollback;
