-- relay_claim refuses a bad limit or lease (RF001), a limit above the server's relay batch
-- bound (RF010, naming it) and another topic (RF009), before it leases anything.
begin;
select plan(11);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as rec \gset
select recording_finalize.recording_ingest_completed(:'rec', 'recordings/e', 1, 1, 'Ogg')
    as ingested \gset

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
select throws_ok(
    $$select * from recording_finalize.relay_claim(10, interval '1 minute', null,
        'pin.billing.invoice-paid.v1')$$,
    'RF009', null, 'another topic is refused'
);
update recording_finalize.settings set relay_batch_max = 100;
select throws_ok(
    $$select * from recording_finalize.relay_claim(101, interval '1 minute')$$, 'RF010', null,
    'a limit above the server''s relay_batch_max is refused'
);
select matches(
    tests.error_of($$select * from recording_finalize.relay_claim(101)$$),
    '^RF010: .*relay_batch_size is 101.*at most 100',
    'the message names the argument, its value and the bound'
);
select is(
    (select count(*) from recording_finalize.relay_leases), 0::bigint,
    'nothing was leased by the refused calls'
);
select is(
    (select count(*) from recording_finalize.relay_claim(100, interval '1 minute')), 1::bigint,
    'the bound itself is accepted'
);

select * from finish();
rollback;
