-- reschedule from Pending (retry): a row backing off becomes due now; attempts, last verdict
-- and last error are kept (a retry is one more attempt, not a fresh start); its claim token is
-- voided; audited as retry. Not strict, a Quarantined or Done id is skipped.
begin;
select plan(6);

select tests.clean_slate();
select tests.make_stuck(p_attempts => 3, p_next_attempt_at => now() + interval '10 minutes')
    as rec \gset
update messenger.recording_finalize_attempts
set last_outcome = 'transient', last_error = 'Transient: ReadTimeoutError',
    claim_token = gen_random_uuid()
where recording_id = :'rec';
select tests.make_stuck(p_attempts => 8) as quarantined \gset
update messenger.recording_finalize_attempts
set status = 'Quarantined', quarantine_reason = 'max_attempts'
where recording_id = :'quarantined';

select results_eq(
    format($$select recording_id, status, attempts, next_attempt_at, last_error,
        quarantine_reason, quarantined_at
    from recording_finalize.reschedule(array[%L]::uuid[], 'Pending', 'ann', 'S3 is back')$$,
        :'rec'),
    format($$values (%L::uuid, 'Pending', 3, now(), 'Transient: ReadTimeoutError', null::text,
        null::timestamptz)$$, :'rec'),
    'due now, attempts and last error kept; no quarantine reason or time for a retry'
);
select results_eq(
    format($$select attempts, last_outcome, claim_token, next_attempt_at
        from messenger.recording_finalize_attempts where recording_id = %L$$, :'rec'),
    $$values (3, 'transient'::varchar, null::uuid, now())$$,
    'the stored row keeps its last verdict; the old claim is void'
);
select results_eq(
    format($$select action_kind::text, operator_name, reason, (detail ->> 'attempts')::integer,
        (detail ->> 'bulk')::boolean
    from recording_finalize.operator_actions where recording_id = %L$$, :'rec'),
    $$values ('retry', 'ann', 'S3 is back', 3, false)$$,
    'audited as a retry, with the attempts it had'
);
select results_eq(
    format($$select action, attempts from tests.claim() where recording_id = %L$$, :'rec'),
    $$values ('reconcile', 4)$$,
    'the next claim takes it: attempt 4'
);
select is_empty(
    format($$select * from recording_finalize.reschedule(array[%L]::uuid[], 'Pending', 'ann',
        'retry it', false)$$, :'quarantined'),
    'not strict: a Quarantined id is skipped'
);
select results_eq(
    format($$select status, attempts from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'quarantined'),
    $$values ('Quarantined'::varchar, 8)$$,
    'and left Quarantined'
);

select * from finish();
rollback;
