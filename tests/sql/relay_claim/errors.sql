-- relay_claim refuses a bad limit or lease (RF001), a limit above the server's relay batch
-- bound (RF010, naming it, in the message and the COLUMN field) and another topic (RF009),
-- before it leases anything.
begin;
select plan(13);

-- The COLUMN field of the error a statement raises (NULL if none is named).
create function pg_temp.column_of(p_sql text) returns text language plpgsql as $f$
declare
    v_column text;
begin
    execute p_sql;
    return '(no error)';
exception when others then
    get stacked diagnostics v_column = column_name;
    return nullif(v_column, '');
end
$f$;

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
select is(pg_temp.column_of($$select * from recording_finalize.relay_claim(101)$$),
    'relay_batch_size', 'the error''s COLUMN field names relay_batch_size (RFR_RELAY_BATCH_SIZE)');
select is(pg_temp.column_of($$select * from recording_finalize.relay_claim(0)$$),
    'relay_batch_size', 'so does an RF001 about the limit');
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
