-- apply_outcome(invalid_metadata): binary present but unusable - quarantine, domain untouched.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table recording_before as select * from messenger.call_recordings;
select claim_token as token from tests.claim() \gset

create temp table applied as
select * from recording_finalize.apply_outcome(
    :'rec', :'token', 'invalid_metadata',
    p_error => 'x-amz-meta-duration-seconds is not an integer >= 0: NaN'
);

select results_eq(
    'select result, finalize_status, attempts from applied',
    $$values ('quarantined', 'Quarantined', 1)$$,
    'invalid metadata quarantines at once, whatever the attempt count'
);
select results_eq(
    format(
        $$select status, claim_token from messenger.recording_finalize_attempts
        where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Quarantined'::varchar, null::uuid)$$,
    'the row is Quarantined'
);
select is(
    (select last_error from messenger.recording_finalize_attempts where recording_id = :'rec'),
    'InvalidMetadata: x-amz-meta-duration-seconds is not an integer >= 0: NaN',
    'last_error is readable: class and the driver''s reason'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recording_before',
    'the recording is untouched (status, metadata, version)'
);
select is(
    (select count(*) from messenger.integration_outbox)
        + (select count(*) from messenger.realtime_outbox),
    0::bigint,
    'no outbox row'
);
select tests.make_due(:'rec');
select is((select count(*) from tests.claim()), 0::bigint, 'excluded from the claim');
select is(
    (select last_error from recording_finalize.quarantined_rows()),
    'InvalidMetadata: x-amz-meta-duration-seconds is not an integer >= 0: NaN',
    'the runbook listing shows why'
);

select * from finish();
rollback;
