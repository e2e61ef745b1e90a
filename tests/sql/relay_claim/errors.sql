-- relay_claim refuses a bad limit or lease with RF001.
begin;
select plan(6);

select throws_ok(
    $$select * from recording_finalize.relay_claim(0, interval '1 minute')$$, 'RF001', null,
    'limit 0 is refused'
);
select throws_ok(
    $$select * from recording_finalize.relay_claim(10001, interval '1 minute')$$, 'RF001', null,
    'a limit above 10000 is refused'
);
select throws_ok(
    $$select * from recording_finalize.relay_claim(null, interval '1 minute')$$, 'RF001', null,
    'a null limit is refused'
);
select throws_ok(
    $$select * from recording_finalize.relay_claim(10, interval '0')$$, 'RF001', null,
    'a zero lease is refused'
);
select throws_ok(
    $$select * from recording_finalize.relay_claim(10, interval '-1 minute')$$, 'RF001', null,
    'a negative lease is refused'
);
select throws_ok(
    $$select * from recording_finalize.relay_claim(10, null)$$, 'RF001', null,
    'a null lease is refused'
);

select * from finish();
rollback;
