-- record_apply_failure: keeps the error on the claimed row; gives the attempt back (due after the
-- backoff base) only for a fault that hit every row; leaves rows claimed with another token and
-- masks URLs; RF001 for bad arguments.
begin;
select plan(9);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select claim_token as token, attempts as claimed_attempts from tests.claim() \gset

-- One row's own failure: the attempt stands, the error is kept, the token spent.
select is(recording_finalize.record_apply_failure(array[:'rec'::uuid], array[:'token'::uuid],
    'InternalError_ XX000 boom at https://s3.example/bucket/key', false), 1,
    'one row recorded');
select results_eq(
    format($$select attempts, claim_token is null, last_error not like '%%https://%%',
        last_error like 'InternalError_ XX000 boom at %%'
    from messenger.recording_finalize_attempts where recording_id = %L$$, :'rec'),
    format($$values (%s, true, true, true)$$, :'claimed_attempts'),
    'its attempt stands, its token is spent, its error kept with the URL masked'
);
select is(recording_finalize.record_apply_failure(array[:'rec'::uuid], array[:'token'::uuid],
    'again', true), 0, 'a spent token records nothing');

-- A fault every row met: the attempt is given back and the row waits the backoff base.
update messenger.recording_finalize_attempts set next_attempt_at = now() - interval '1 hour';
select claim_token as token2, attempts as attempts2 from tests.claim() \gset
select is(recording_finalize.record_apply_failure(array[:'rec'::uuid], array[:'token2'::uuid],
    'ServiceFault: 42501 permission denied for table call_recordings', true), 1,
    'the fault recorded');
select results_eq(
    format($$select status, attempts, last_error,
        next_attempt_at > now() + interval '59 seconds'
    from messenger.recording_finalize_attempts where recording_id = %L$$, :'rec'),
    format($$values ('Pending'::varchar, %s - 1,
        'ServiceFault: 42501 permission denied for table call_recordings'::varchar, true)$$,
        :'attempts2'),
    'Pending, the attempt given back, the cause kept, due after the backoff base'
);

select throws_ok($$select recording_finalize.record_apply_failure(null, array[]::uuid[], 'e',
    true)$$, 'RF001', null, 'NULL ids');
select throws_ok($$select recording_finalize.record_apply_failure(array[gen_random_uuid()],
    array[]::uuid[], 'e', true)$$, 'RF001', null, 'arrays of different lengths');
select throws_ok($$select recording_finalize.record_apply_failure(array[]::uuid[],
    array[]::uuid[], 'e', null)$$, 'RF001', null, 'p_give_back NULL');
select is(recording_finalize.record_apply_failure(array[]::uuid[], array[]::uuid[], 'e', true),
    0, 'nothing to record');

select * from finish();
rollback;
