-- claim_preview: RF001 for a bad limit (the policy is the stored one, as claim_due's).
begin;
select plan(3);

select tests.clean_slate();
select throws_ok('select * from recording_finalize.claim_preview(0)', 'RF001', null,
    'a limit of 0 is refused');
select throws_ok('select * from recording_finalize.claim_preview(10001)', 'RF001', null,
    'a limit above 10000 is refused');
select throws_ok('select * from recording_finalize.claim_preview(null)', 'RF001', null,
    'a null limit is refused');

select * from finish();
rollback;
