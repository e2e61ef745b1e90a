-- check_policy: every refusal names the policy key in the error's COLUMN field (the driver maps
-- it to the RFR_* variable), and checks the relay batch and the retention as their calls do.
begin;
select plan(9);

create function pg_temp.column_of(p_sql text)
returns text
language plpgsql
as $$
declare
    v_column text;
    v_state text;
begin
    execute p_sql;
    return null;
exception when others then
    get stacked diagnostics v_column = column_name, v_state = returned_sqlstate;
    return v_state || ' ' || v_column;
end
$$;

select is(pg_temp.column_of($$select recording_finalize.check_policy('{"max_attempts": 0}')$$),
    'RF001 max_attempts', 'a value its own rule refuses: RF001, COLUMN max_attempts');
select is(pg_temp.column_of($$select recording_finalize.check_policy('{"bogus": 1}')$$),
    'RF001 bogus', 'an unknown key: COLUMN names it');
select is(pg_temp.column_of($$select recording_finalize.check_policy('{"backoff_jitter": "x"}')$$),
    'RF001 backoff_jitter', 'a value of the wrong type: COLUMN names the key');
select is(pg_temp.column_of($$select recording_finalize.check_policy('{"topic": "other"}')$$),
    'RF009 topic', 'another topic: RF009, COLUMN topic');
select is(
    pg_temp.column_of($$select recording_finalize.check_policy('{"sla_timeout_seconds": 0.5}')$$),
    'RF010 sla_timeout_seconds', 'below the server''s SLA bound: RF010, COLUMN names the key');
select is(
    pg_temp.column_of($$select recording_finalize.check_policy('{}', p_relay_batch_size => 0)$$),
    'RF001 relay_batch_size', 'a relay batch of 0: RF001, COLUMN relay_batch_size');
update recording_finalize.settings set relay_batch_max = 50;
select is(
    pg_temp.column_of($$select recording_finalize.check_policy('{}', p_relay_batch_size => 51)$$),
    'RF010 relay_batch_size', 'a relay batch above relay_batch_max: RF010, as relay_claim says');
select is(
    pg_temp.column_of($$select recording_finalize.check_policy('{}',
        p_retention => interval '2 hours')$$),
    'RF010 retention', 'a retention fresher than retention_min: RF010, as prune says');
select isnt(
    recording_finalize.check_policy('{}', p_relay_batch_size => 50, p_retention => '2 days'),
    null, 'within every bound: the resolved policy');

select * from finish();
rollback;
