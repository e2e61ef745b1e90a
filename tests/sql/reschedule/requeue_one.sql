-- reschedule from Quarantined (requeue) of one row: Pending, attempts 0, due now, claim token,
-- quarantine reason and last verdict cleared (so that a crash loop after it is recognised
-- again), last error kept for the record; returned with why and since when it was quarantined.
begin;
select plan(8);

select tests.clean_slate();
select tests.make_stuck(p_attempts => 8) as rec \gset
select action as quarantine_action from tests.claim() \gset
-- As if a verdict had been recorded before it was exhausted (max_attempts, not crash_loop).
update messenger.recording_finalize_attempts
set last_outcome = 'transient', quarantine_reason = 'max_attempts',
    updated_at = now() - interval '2 hours'
where recording_id = :'rec';

select is(:'quarantine_action'::text, 'quarantined', 'the exhausted row was quarantined');

create temp table requeued as
select * from recording_finalize.reschedule(array[:'rec']::uuid[], 'Quarantined', 'ann',
    'fixed the bucket policy');

select results_eq(
    $$select recording_id, status, attempts, next_attempt_at, quarantine_reason, quarantined_at
    from requeued$$,
    format($$values (%L::uuid, 'Pending', 0, now(), 'max_attempts', now() - interval '2 hours')$$,
        :'rec'),
    'it returns the row as it now is, with the reason and time it was quarantined'
);
select results_eq(
    format(
        $$select status, attempts, next_attempt_at, claim_token, quarantine_reason, last_outcome,
            updated_at
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Pending'::varchar, 0, now(), null::uuid, null::varchar, null::varchar, now())$$,
    'the stored row: Pending, attempts 0, due now, no claim, no reason, no verdict'
);
select matches(
    (select last_error from requeued), '^MaxAttemptsExceeded: 8 attempts',
    'last_error is kept as the record of why a human stepped in'
);
select is(
    (select last_error::text from messenger.recording_finalize_attempts
        where recording_id = :'rec'),
    (select last_error from requeued),
    'and is the stored one'
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
select results_eq(
    format($$select count(*) from recording_finalize.operator_actions
        where recording_id = %L and action_kind = 'requeue'$$, :'rec'),
    'values (1::bigint)',
    'one audit row'
);

select * from finish();
rollback;
