-- claim_due takes at most p_batch_size rows, oldest next_attempt_at first.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_stuck(p_next_attempt_at => now() - interval '1 minute') as newest \gset
select tests.make_stuck(p_next_attempt_at => now() - interval '3 minutes') as oldest \gset
select tests.make_stuck(p_next_attempt_at => now() - interval '2 minutes') as middle \gset
select tests.make_stuck(p_next_attempt_at => now() + interval '1 minute') as future \gset
-- Created in another order than they are due (and not its reverse): the claim's order is
-- next_attempt_at's alone.
update messenger.recording_finalize_attempts
set created_at = now() - case recording_id
    when :'middle' then interval '3 hours' when :'oldest' then interval '2 hours'
    else interval '1 hour' end;

create temp table first_batch as select * from tests.claim(p_batch_size => 2);

select is((select count(*) from first_batch), 2::bigint, 'batch size 2 claims 2 rows');
select results_eq(
    'select recording_id from first_batch',
    format('values (%L::uuid), (%L::uuid)', :'oldest', :'middle'),
    'the two rows with the oldest next_attempt_at are claimed first, in that order'
);
select is(
    (select attempts from messenger.recording_finalize_attempts where recording_id = :'newest'),
    0,
    'the row left out of the batch keeps its attempts'
);
select results_eq(
    'select recording_id from tests.claim(p_batch_size => 2)',
    format('values (%L::uuid)', :'newest'),
    'the next claim takes the remaining due row only'
);
select is(
    (select attempts from messenger.recording_finalize_attempts where recording_id = :'future'),
    0,
    'a row not yet due is never claimed'
);
select is(
    (select count(*) from recording_finalize.claim_due(p_batch_size => 1)), 0::bigint,
    'nothing left to claim'
);

select throws_ok(
    'select * from recording_finalize.claim_due(p_batch_size => 0)', 'RF001', null,
    'a batch of 0 is refused'
);

select * from finish();
rollback;
