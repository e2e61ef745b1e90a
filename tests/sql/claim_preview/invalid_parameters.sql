-- claim_preview: RF001 for a bad limit or policy, RF010 for a policy outside the server's
-- bounds - the same policy rule as claim_due.
begin;
select plan(6);

select tests.clean_slate();
select throws_ok('select * from recording_finalize.claim_preview(0)', 'RF001', null,
    'a limit of 0 is refused');
select throws_ok('select * from recording_finalize.claim_preview(10001)', 'RF001', null,
    'a limit above 10000 is refused');
select throws_ok('select * from recording_finalize.claim_preview(null)', 'RF001', null,
    'a null limit is refused');
select throws_ok($$select * from recording_finalize.claim_preview(10, '{"max_attempts": 0}')$$,
    'RF001', null, 'a policy its own rules refuse');
select throws_ok($$select * from recording_finalize.claim_preview(10, '{"sla": 60}')$$,
    'RF001', null, 'an unknown policy key');
select throws_ok(
    $$select * from recording_finalize.claim_preview(10, '{"max_attempts": 1000000}')$$,
    'RF010', null, 'a policy outside the server''s bounds');

select * from finish();
rollback;
