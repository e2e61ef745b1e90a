-- release_claims: RF001 for NULL arrays, arrays of different lengths or more than 10000; it
-- releases nothing then.
begin;
select plan(6);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select claim_token as token from tests.claim() \gset
create temp table before as select tests.snapshot() as fingerprint;

select throws_ok(
    format($$select recording_finalize.release_claims(null, array[%L::uuid])$$, :'token'),
    'RF001', null, 'NULL ids');
select throws_ok(
    format($$select recording_finalize.release_claims(array[%L::uuid], null)$$, :'rec'),
    'RF001', null, 'NULL tokens');
select throws_ok(
    format($$select recording_finalize.release_claims(array[%L::uuid], array[%L::uuid,
        gen_random_uuid()])$$, :'rec', :'token'),
    'RF001', null, 'arrays of different lengths');
select throws_ok(
    $$select recording_finalize.release_claims(
        array(select gen_random_uuid() from generate_series(1, 10001)),
        array(select gen_random_uuid() from generate_series(1, 10001)))$$,
    'RF001', null, 'more than 10000');
select lives_ok(
    $$select recording_finalize.release_claims(
        array(select gen_random_uuid() from generate_series(1, 10000)),
        array(select gen_random_uuid() from generate_series(1, 10000)))$$,
    '10000 is accepted');
select is(tests.snapshot(), (select fingerprint from before), 'nothing was released');

select * from finish();
rollback;
