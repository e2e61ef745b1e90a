-- apply_outcome with a token that is no longer the row's changes nothing and says 'stale'.
begin;
select plan(10);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select claim_token as old_token from tests.claim() \gset
-- The first runner stalled past the backoff; another runner re-claimed the row.
select tests.make_due(:'rec');
select claim_token as new_token from tests.claim() \gset
create temp table before as select tests.snapshot() as fingerprint;

select results_eq(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found', 'k', 1, 1, 'Ogg')$$,
        :'rec', :'old_token'
    ),
    $$values ('stale', 'Pending', 2, null::text)$$,
    'a verdict with the superseded token is stale'
);
select is(
    (select result from recording_finalize.apply_outcome(:'rec', :'old_token', 'missing')),
    'stale',
    'whatever the outcome'
);
select is(
    (select result from recording_finalize.apply_outcome(:'rec', gen_random_uuid(), 'missing')),
    'stale',
    'a made-up token is stale'
);
select is(
    (select result from recording_finalize.apply_outcome(:'rec', null, 'found', 'k', 1, 1, 'Ogg')),
    'stale',
    'a null token is stale'
);
select results_eq(
    $$select * from recording_finalize.apply_outcome(gen_random_uuid(), gen_random_uuid(),
        'missing')$$,
    $$values ('stale', null::text, null::integer, null::text)$$,
    'a recording without a finalize row is stale'
);
select is(
    tests.snapshot(), (select fingerprint from before),
    'none of those verdicts changed anything'
);
select is(
    (select result from recording_finalize.apply_outcome(
        :'rec', :'new_token', 'found', 'k', 1, 1, 'Ogg'
    )),
    'reconciled',
    'the current token is accepted'
);
select results_eq(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'missing')$$,
        :'rec', :'new_token'
    ),
    $$values ('stale', 'Done', 2, null::text)$$,
    'a token is spent once: replaying the verdict is stale'
);
select is(
    (select status from messenger.call_recordings where id = :'rec'), 'Available',
    'the replayed missing verdict did not fail the recording'
);
select is(tests.event_count(:'rec'), 1::bigint, 'one event');

select * from finish();
rollback;
