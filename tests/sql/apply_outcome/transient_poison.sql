-- apply_outcome(transient) at attempts >= max attempts: Quarantined (quarantine_reason
-- max_attempts), out of the claim.
begin;
select plan(9);

select tests.clean_slate();
select tests.make_stuck(p_attempts => 2) as poison \gset
select tests.make_stuck(p_attempts => 1) as below \gset
create temp table recordings_before as select * from messenger.call_recordings;
create temp table claimed as select * from tests.claim(p_max_attempts => 3);

create temp table applied as
select * from tests.apply(:'poison', 'transient', p_error => 'S3Error: 503 SlowDown',
    p_max_attempts => 3);

select results_eq(
    'select result, finalize_status, attempts, detail from applied',
    $$values ('quarantined', 'Quarantined', 3, 'Transient: S3Error: 503 SlowDown')$$,
    'the third transient failure with max attempts 3 quarantines the row'
);
select results_eq(
    format(
        $$select status, attempts, claim_token, last_error, quarantine_reason, last_outcome
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'poison'
    ),
    $$values ('Quarantined'::varchar, 3, null::uuid, 'Transient: S3Error: 503 SlowDown'::varchar,
        'max_attempts'::varchar, 'transient'::varchar)$$,
    'the row is Quarantined with its last error, quarantine_reason max_attempts'
);
select is(
    (select result from tests.apply(:'below', 'transient', p_max_attempts => 3)),
    'backoff',
    'attempt 2 of 3 still backs off'
);
select is(
    (select last_error from messenger.recording_finalize_attempts where recording_id = :'below'),
    'Transient: unspecified',
    'a transient failure without an error text is still recorded'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recordings_before',
    'quarantine leaves the recordings untouched'
);
select is(
    (select count(*) from recording_finalize.outbox)
        + (select count(*) from messenger.integration_outbox), 0::bigint,
    'no event'
);
select tests.make_due(:'poison');
select tests.make_due(:'below');
select results_eq(
    'select recording_id::text from tests.claim(p_max_attempts => 3)',
    format('values (%L)', :'below'),
    'a quarantined row is excluded from the claim; the other one is claimed again'
);
select results_eq(
    'select recording_id::text, attempts from recording_finalize.quarantined_rows()',
    format('values (%L, 3)', :'poison'),
    'the quarantined row is listed for the runbook'
);
-- Attempts beyond the maximum (max attempts lowered after the claim) quarantine too.
select is(
    (select result from tests.apply(:'below', 'transient', p_max_attempts => 2)),
    'quarantined',
    'attempt 3 with max attempts lowered to 2: quarantined'
);

select * from finish();
rollback;
