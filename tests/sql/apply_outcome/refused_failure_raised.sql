-- apply_outcome(missing) when the service's own CHECK refuses the Failed transition the
-- make_failed port writes: that refusal is not this recording's metadata, it refuses every row
-- (a fault that hits every row is not poison: the cycle stops and gives the attempts back):
-- raised with its SQLSTATE, never quarantined invalid_metadata, and nothing of the attempt
-- stays.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select claim_token as token from tests.claim() \gset
-- The service's DBA allows no Timeout (inside this test's transaction only).
alter table messenger.call_recordings
add constraint call_recordings_pgtap_no_timeout_ck
check (failure_reason is distinct from 'Timeout') not valid;

select throws_ok(
    format($$select * from tests.apply(%L, 'missing')$$, :'rec'),
    '23514', null,
    'the refusal of make_failed is raised (the worker stops the cycle, gives attempts back)'
);
select results_eq(
    format($$select status, failure_reason, version from messenger.call_recordings
        where id = %L$$, :'rec'),
    $$values ('Uploading'::varchar, null::varchar, 1)$$,
    'the recording did not move'
);
select results_eq(
    format($$select status, quarantine_reason, claim_token is not null
        from messenger.recording_finalize_attempts where recording_id = %L$$, :'rec'),
    $$values ('Pending'::varchar, null::varchar, true)$$,
    'the row is not quarantined: Pending, still holding the claim the driver gives back'
);
select is(
    tests.realtime_count(:'rec', 'RecordingFailed') + tests.event_count(:'rec'), 0::bigint,
    'no realtime row, no event'
);

select * from finish();
rollback;
