-- The ingest callback writes its event to the server's topic only: NULL (the default) is the
-- server's topic, another p_topic is RF009 and moves nothing.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table before as select tests.snapshot() as fingerprint;

select throws_ok(
    format(
        $$select recording_finalize.recording_ingest_completed(%L, 'recordings/x', 10, 10, 'Ogg',
            'pin.billing.invoice-paid.v1')$$,
        :'rec'
    ),
    'RF009', null, 'another topic is refused'
);
select is(tests.snapshot(), (select fingerprint from before), 'and nothing moved');
select is(
    recording_finalize.recording_ingest_completed(:'rec', 'recordings/x', 10, 10, 'Ogg'),
    'available',
    'with the default the callback runs'
);
select is(
    (select topic from recording_finalize.outbox where recording_id = :'rec'),
    'pin.messenger.call-recording-available.v1',
    'and its event is on the server''s topic'
);

select * from finish();
rollback;
