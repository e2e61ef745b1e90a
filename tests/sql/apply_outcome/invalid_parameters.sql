-- apply_outcome refuses an unknown outcome with RF001 and changes nothing.
begin;
select plan(6);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select claim_token as token from tests.claim() \gset
create temp table before as select tests.snapshot() as fingerprint;

select throws_ok(
    format($$select * from recording_finalize.apply_outcome(%L, %L, 'Found')$$, :'rec', :'token'),
    'RF001', null, 'outcomes are lowercase: Found is unknown'
);
select throws_ok(
    format($$select * from recording_finalize.apply_outcome(%L, %L, 'timeout')$$, :'rec', :'token'),
    'RF001', null, 'an unknown outcome is refused'
);
select throws_ok(
    format($$select * from recording_finalize.apply_outcome(%L, %L, null)$$, :'rec', :'token'),
    'RF001', null, 'a null outcome is refused'
);
select matches(
    tests.error_of(
        format($$select * from recording_finalize.apply_outcome(%L, %L, 'nope')$$, :'rec', :'token')
    ),
    '^RF001: invalid_parameter: apply_outcome: p_outcome must be found, missing, transient, '
        || 'invalid_metadata or config_error, got nope$',
    'the message lists the valid outcomes'
);
select is(tests.snapshot(), (select fingerprint from before), 'nothing changed');
select is(tests.token(:'rec'), :'token'::uuid, 'the claim still stands');

select * from finish();
rollback;
