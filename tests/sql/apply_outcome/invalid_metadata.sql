-- apply_outcome(invalid_metadata): binary present but unusable - quarantine, domain untouched.
begin;
select plan(8);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table recording_before as select * from messenger.call_recordings;
select claim_token as token from tests.claim() \gset

create temp table applied as
select * from tests.apply(
    :'rec', 'invalid_metadata',
    p_error => 'x-amz-meta-duration-seconds is not an integer >= 0: NaN'
);

select results_eq(
    'select result, finalize_status, attempts, detail from applied',
    $$values ('quarantined', 'Quarantined', 1,
        'InvalidMetadata: x-amz-meta-duration-seconds is not an integer >= 0: NaN')$$,
    'invalid metadata quarantines at once, whatever the attempt count; detail says why'
);
select results_eq(
    format(
        $$select status, claim_token, quarantine_reason, last_outcome
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Quarantined'::varchar, null::uuid, 'invalid_metadata'::varchar,
        'invalid_metadata'::varchar)$$,
    'the row is Quarantined, quarantine_reason invalid_metadata'
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
    (select count(*) from recording_finalize.outbox)
        + (select count(*) from messenger.integration_outbox)
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

select tests.make_stuck() as bare \gset
select claim_token as bare_token from tests.claim() where recording_id = :'bare' \gset
select is(
    (select detail from tests.apply(:'bare', 'invalid_metadata', p_error => '  ')),
    'InvalidMetadata: unspecified',
    'a blank reason is stored as unspecified'
);

select * from finish();
rollback;
