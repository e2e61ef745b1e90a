-- recording_finalize_internal.topic: the one topic rule. NULL means the server's topic; the
-- server's topic named explicitly is returned; anything else is RF009 naming both; the caller
-- may pass the server's topic it read already (no second read); no settings row is P0002.
begin;
select plan(10);

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

select is(recording_finalize_internal.topic(null), 'pin.messenger.call-recording-available.v1',
    'NULL is the server''s topic');
select is(
    recording_finalize_internal.topic('pin.messenger.call-recording-available.v1'),
    'pin.messenger.call-recording-available.v1',
    'the server''s topic named is returned'
);
select throws_ok($$select recording_finalize_internal.topic('pin.billing.invoice-paid.v1')$$,
    'RF009', null, 'another topic is refused');
select throws_ok($$select recording_finalize_internal.topic('')$$, 'RF009', null,
    'so is the empty string');
select throws_ok(
    $$select recording_finalize_internal.topic('PIN.messenger.call-recording-available.v1')$$,
    'RF009', null, 'topics are compared exactly');
select matches(
    tests.error_of($$select recording_finalize_internal.topic('pin.billing.invoice-paid.v1')$$),
    '^RF009: topic_mismatch: the caller''s topic is pin.billing.invoice-paid.v1 but the '
        || 'server''s topic \(recording_finalize.settings\) is '
        || 'pin.messenger.call-recording-available.v1$',
    'the message names both'
);
select is(
    pg_temp.column_of($$select recording_finalize_internal.topic('pin.billing.invoice-paid.v1')$$),
    'topic', 'the error''s COLUMN field names topic (RFR_TOPIC)'
);
update recording_finalize.settings set topic = 'rfr.pgtap.other';
select is(recording_finalize_internal.topic(null), 'rfr.pgtap.other',
    'the owner''s change is followed at once');

delete from recording_finalize.settings;
select is(recording_finalize_internal.topic('t.1', 't.1'), 't.1',
    'with p_server_topic the table is not read');
select throws_ok($$select recording_finalize_internal.topic(null)$$, 'P0002', null,
    'without it and without the settings row: P0002');

select * from finish();
rollback;
