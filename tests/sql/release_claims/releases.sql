-- release_claims: a stopping worker gives back the rows it claimed and will not check - attempt
-- back, due now, token cleared - but only rows still Pending and claimed with the token given.
begin;
select plan(9);

select tests.clean_slate();
create temp table fx as
select n, tests.make_stuck(p_attempts => 2) as rec from generate_series(1, 6) as n;
create temp table claimed as select * from tests.claim();
create temp table tokens as select fx.n, c.recording_id, c.claim_token from fx
join claimed as c on c.recording_id = fx.rec;
-- Row 3 was settled meanwhile (Done), row 4 re-claimed by another runner (a new token), row 5
-- quarantined by an operator; row 6 is not in the call.
update messenger.recording_finalize_attempts set status = 'Done', claim_token = null
where recording_id = (select rec from fx where n = 3);
update messenger.recording_finalize_attempts set claim_token = gen_random_uuid()
where recording_id = (select rec from fx where n = 4);
update messenger.recording_finalize_attempts set status = 'Quarantined',
    quarantine_reason = 'max_attempts'
where recording_id = (select rec from fx where n = 5);
create temp table untouched as
select * from messenger.recording_finalize_attempts
where recording_id in (select rec from fx where n between 3 and 6);

select is(
    recording_finalize.release_claims(
        array(select recording_id from tokens where n <= 5 order by n),
        array(select claim_token from tokens where n <= 5 order by n)),
    2, 'releases the two rows still claimed with their token'
);
select is_empty(
    $$select fx.n from fx join messenger.recording_finalize_attempts as f on f.recording_id = fx.rec
    where fx.n <= 2 and (f.status, f.attempts, f.next_attempt_at, f.claim_token)
        is distinct from ('Pending', 2, now(), null)$$,
    'each: Pending, attempts as before the claim, due now, token cleared'
);
select set_eq(
    $$select * from messenger.recording_finalize_attempts
    where recording_id in (select rec from fx where n between 3 and 6)$$,
    'select * from untouched',
    'the settled, re-claimed, quarantined and unnamed rows are left alone'
);
select is(
    recording_finalize.release_claims(
        array(select recording_id from tokens where n <= 2 order by n),
        array(select claim_token from tokens where n <= 2 order by n)),
    0, 'releasing again: the tokens are spent, nothing released'
);
select is(
    recording_finalize.release_claims(
        array[(select recording_id from tokens where n = 6)],
        array[(select claim_token from tokens where n = 1)]),
    0, 'a token of another row releases nothing'
);
select is(recording_finalize.release_claims('{}', '{}'), 0, 'empty arrays: nothing');

-- The next claim takes the released rows again as the same attempt.
select results_eq(
    $$select c.attempts from tests.claim() as c join fx on fx.rec = c.recording_id
    where fx.n <= 2$$,
    $$values (3), (3)$$,
    'the next claim counts them as attempt 3 again: the stop cost nothing'
);
-- An attempt is never given back below 0.
select tests.make_stuck() as fresh \gset
update messenger.recording_finalize_attempts set claim_token = gen_random_uuid()
where recording_id = :'fresh' returning claim_token as fresh_token \gset
select is(recording_finalize.release_claims(array[:'fresh'::uuid], array[:'fresh_token'::uuid]),
    1, 'a claimed row at 0 attempts');
select is(
    (select attempts from messenger.recording_finalize_attempts where recording_id = :'fresh'), 0,
    'stays at 0'
);

select * from finish();
rollback;
