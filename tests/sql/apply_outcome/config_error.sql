-- apply_outcome(config_error): the deployment is wrong, not the recording - attempt given back.
begin;
select plan(8);

select tests.clean_slate();
select tests.make_stuck(p_attempts => 4) as rec \gset
create temp table recording_before as select * from messenger.call_recordings;
select claim_token as token, attempts as claimed_attempts from tests.claim() \gset

select is(:'claimed_attempts'::integer, 5, 'the claim counted attempt 5');

create temp table applied as
select * from tests.apply(:'rec', 'config_error', p_error => 'NoSuchBucket: call-recordings');

select results_eq(
    'select result, finalize_status, attempts, detail from applied',
    $$values ('config_error_released', 'Pending', 4,
        'ConfigError: NoSuchBucket: call-recordings')$$,
    'config_error: config_error_released, Pending, attempts back to 4, detail says why'
);
select results_eq(
    format(
        $$select status, attempts, claim_token from messenger.recording_finalize_attempts
        where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Pending'::varchar, 4, null::uuid)$$,
    'the stored row has its attempt back and its token spent'
);
select cmp_ok(
    (select next_attempt_at from messenger.recording_finalize_attempts where recording_id = :'rec'),
    '<=', now(),
    'the row is due again at once'
);
select results_eq(
    format(
        $$select last_error, last_outcome, quarantine_reason
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    $$values ('ConfigError: NoSuchBucket: call-recordings'::varchar, 'config_error'::varchar,
        null::varchar)$$,
    'last_error says it was a configuration failure; last_outcome config_error'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recording_before',
    'the recording is untouched'
);
create temp table next_claim as select * from tests.claim();
select results_eq(
    'select recording_id::text, action, attempts from next_claim',
    format($$values (%L, 'reconcile', 5)$$, :'rec'),
    'the next claim gets it again as attempt 5: no attempt was burnt'
);
select tests.apply(:'rec', 'config_error') is not null as ok \gset
-- Ten more cycles in which S3 is misconfigured, with max attempts 5.
do $$
declare
    v_claim record;
begin
    for i in 1..10 loop
        perform tests.make_due(f.recording_id) from messenger.recording_finalize_attempts as f;
        select * into v_claim from tests.claim(p_max_attempts => 5);
        perform tests.apply(v_claim.recording_id, 'config_error', p_max_attempts => 5);
    end loop;
end
$$;
select results_eq(
    'select status, attempts from messenger.recording_finalize_attempts',
    $$values ('Pending'::varchar, 4)$$,
    'repeated configuration failures burn no attempt and never quarantine the row'
);

select * from finish();
rollback;
