-- requeue: the runbook's re-enqueue of a quarantined row - Pending, attempts 0, due now.
begin;
select plan(6);

select tests.clean_slate();
select tests.make_stuck(p_attempts => 8) as rec \gset
select action as quarantine_action from tests.claim() \gset

select is(:'quarantine_action'::text, 'quarantined', 'the exhausted row was quarantined');

create temp table requeued as select * from recording_finalize.requeue(:'rec');

select results_eq(
    'select recording_id::text, status, attempts, next_attempt_at from requeued',
    format($$values (%L, 'Pending', 0, now())$$, :'rec'),
    'requeue returns the row as it now is: Pending, attempts 0, due now'
);
select results_eq(
    format(
        $$select status, attempts, next_attempt_at, claim_token
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Pending'::varchar, 0, now(), null::uuid)$$,
    'the stored row is Pending, attempts 0, due now'
);
select matches(
    (select last_error from requeued), '^MaxAttemptsExceeded: 8 attempts',
    'last_error is kept as the record of why a human stepped in'
);
select results_eq(
    format($$select action, attempts from tests.claim() where recording_id = %L$$, :'rec'),
    $$values ('reconcile', 1)$$,
    'the next claim hands it to the driver again, attempt 1'
);
select is(
    (select count(*) from recording_finalize.quarantined_rows()), 0::bigint,
    'it is gone from the quarantine listing'
);

select * from finish();
rollback;
