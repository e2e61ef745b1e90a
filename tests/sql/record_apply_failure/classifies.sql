-- record_apply_failure with the batch's failures: the database decides whether a fault is the
-- service schema's (one SQLSTATE for every failed row, class 42 always, class 23 or 22 on every
-- row of a batch of more than one): then the failed and the unapplied rows get the SQLSTATE and
-- message and their attempt back; otherwise the failed rows keep their attempt and the error,
-- the unapplied rows are untouched.
begin;
select plan(17);

select tests.clean_slate();
create temp table rows_ as
select n, tests.make_stuck(p_attempts => 3) as rec from generate_series(1, 4) as n;
create temp table claimed as select * from tests.claim();
-- The record_apply_failure call of a batch: rows p_failed failed with p_states, rows p_rest were
-- claimed and not applied.
create function pg_temp.record(p_failed integer[], p_states text[], p_batch integer,
    p_rest integer[] default '{}')
returns table (service_fault boolean, last_error text, recorded integer)
language sql as $$
    select r.* from recording_finalize.record_apply_failure(
        p_recording_ids => array(select rec from rows_ where n = any(p_failed) order by n),
        p_claim_tokens => array(select tests.token(rec) from rows_ where n = any(p_failed)
            order by n),
        p_sqlstates => p_states,
        p_error => 'InsufficientPrivilege 42501',
        p_message => 'permission denied for table call_recordings (table call_recordings)',
        p_batch_size => p_batch,
        p_unapplied_ids => array(select rec from rows_ where n = any(p_rest) order by n),
        p_unapplied_tokens => array(select tests.token(rec) from rows_ where n = any(p_rest)
            order by n)) as r
$$;
create function pg_temp.row_state(p_n integer)
returns table (attempts integer, claimed boolean, last_error text)
language sql as $$
    select f.attempts, f.claim_token is not null, f.last_error::text
    from messenger.recording_finalize_attempts as f join rows_ as r on r.rec = f.recording_id
    where r.n = p_n
$$;
-- Claims all four rows again (attempt counted), as a new cycle would.
create function pg_temp.reclaim() returns void language sql as $$
    update messenger.recording_finalize_attempts set next_attempt_at = now() - interval '1 s',
        attempts = 3, claim_token = null;
    select null from tests.claim();
$$;

-- A constraint on two rows of a batch of three: one row's data, not the schema's.
select results_eq(
    $$select service_fault, last_error, recorded from pg_temp.record('{1,2}',
        '{23502,23502}', 3, '{3,4}')$$,
    $$values (false, 'InsufficientPrivilege 42501', 2)$$,
    'a constraint on two rows of three: the rows'' own failure');
select results_eq('select * from pg_temp.row_state(1)',
    $$values (4, false, 'InsufficientPrivilege 42501')$$,
    'a failed row keeps its attempt and the error, its claim spent');
select results_eq('select attempts, claimed from pg_temp.row_state(3)', $$values (4, true)$$,
    'an unapplied row is left as it is');

select pg_temp.reclaim();
select results_eq(
    $$select service_fault, recorded from pg_temp.record('{1,2,3}', '{23502,23502,23502}', 3,
        '{4}')$$,
    $$values (true, 4)$$, 'a constraint on every row of a batch of three: a service fault');
select results_eq('select * from pg_temp.row_state(1)',
    $$values (3, false, 'ServiceFault: 23502 permission denied for table call_recordings '
        '(table call_recordings)')$$,
    'each failed row: attempt given back, SQLSTATE and message kept');
select results_eq('select attempts, claimed, last_error like ''ServiceFault: 23502 %'' '
    'from pg_temp.row_state(4)', $$values (3, false, true)$$,
    'the unapplied rows too');
select ok((select next_attempt_at > now() + interval '59 seconds'
    from messenger.recording_finalize_attempts as f join rows_ as r on r.rec = f.recording_id
    where r.n = 4), 'due after the backoff base');

select pg_temp.reclaim();
select is((select service_fault from pg_temp.record('{1}', '{42501}', 4, '{2,3,4}')), true,
    'a privilege is never one row''s: one failure of four is a service fault');
select results_eq(
    $$select count(*)::integer from messenger.recording_finalize_attempts
    where attempts = 3 and claim_token is null and last_error like 'ServiceFault: 42501 %'$$,
    $$values (4)$$, 'all four given back');

select pg_temp.reclaim();
select is((select service_fault from pg_temp.record('{1}', '{22001}', 1)), false,
    'a value refused in a batch of one: the row''s own');
select is((select service_fault from pg_temp.record('{2,3}', '{23505,42501}', 2)), false,
    'two reasons: not one fault');
select is((select service_fault from pg_temp.record('{4}', '{XX000}', 1)), false,
    'another class: the row''s own');
select is((select count(*)::integer from messenger.recording_finalize_attempts
    where claim_token is null and attempts = 4), 4, 'those four keep their attempt');

-- Bad arguments.
select throws_ok($$select * from recording_finalize.record_apply_failure(
    array[gen_random_uuid()], array[gen_random_uuid()], '{}', 'e', 'm', 1)$$,
    'RF001', null, 'fewer SQLSTATEs than rows');
select throws_ok($$select * from recording_finalize.record_apply_failure(
    array[gen_random_uuid()], array[gen_random_uuid()], '{null}', 'e', 'm', 1)$$,
    'RF001', null, 'a NULL SQLSTATE');
select throws_ok($$select * from recording_finalize.record_apply_failure(
    array[gen_random_uuid(), gen_random_uuid()], array[gen_random_uuid(), gen_random_uuid()],
    '{42501,42501}', 'e', 'm', 1)$$,
    'RF001', null, 'more failures than the batch held');
select results_eq($$select service_fault, recorded from recording_finalize.record_apply_failure(
    '{}', '{}', '{}', 'e', 'm', 0)$$, $$values (false, 0)$$, 'nothing to record');

select * from finish();
rollback;
