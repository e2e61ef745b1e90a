-- set_policy: every refusal names the policy column in the error's COLUMN field (the driver maps
-- it to the RFR_* variable, never reading the message): RF001 for the policy's own rules, RF010
-- for a bound, RF009 for another topic; the relay batch and the retention are checked as their
-- calls check them.
begin;
select plan(11);

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

select is(pg_temp.column_of($$select recording_finalize.set_policy(p_backoff_factor => 0.5)$$),
    'RF001 backoff_factor', 'a factor below 1: RF001, COLUMN backoff_factor');
select is(pg_temp.column_of($$select recording_finalize.set_policy(p_backoff_cap => '30 s')$$),
    'RF001 backoff_cap', 'a cap below the base (the default 1 min): RF001, COLUMN backoff_cap');
select is(pg_temp.column_of($$select recording_finalize.set_policy(p_backoff_jitter => -0.1)$$),
    'RF001 backoff_jitter', 'a negative jitter: RF001, COLUMN backoff_jitter');
select is(pg_temp.column_of($$select recording_finalize.set_policy(p_max_attempts => 0)$$),
    'RF010 max_attempts', 'zero attempts: below the server''s floor (RF010)');
select is(pg_temp.column_of($$select recording_finalize.set_policy(p_sla_timeout => '0.5 s')$$),
    'RF010 sla_timeout', 'below the server''s SLA bound: RF010, COLUMN sla_timeout');
select is(
    pg_temp.column_of($$select recording_finalize.set_policy(p_backoff_factor => 'NaN')$$),
    'RF010 backoff_factor', 'NaN is above every bound');
select is(pg_temp.column_of($$select recording_finalize.set_policy(p_topic => 'other')$$),
    'RF009 topic', 'another topic: RF009, COLUMN topic');
select is(pg_temp.column_of($$select recording_finalize.set_policy(p_relay_batch_size => 0)$$),
    'RF001 relay_batch_size', 'a relay batch of 0: RF001, COLUMN relay_batch_size');
update recording_finalize.settings set relay_batch_max = 50;
select is(pg_temp.column_of($$select recording_finalize.set_policy(p_relay_batch_size => 51)$$),
    'RF010 relay_batch_size', 'a relay batch above relay_batch_max: RF010, as relay_claim says');
select is(
    pg_temp.column_of($$select recording_finalize.set_policy(p_retention => '2 hours')$$),
    'RF010 retention', 'a retention fresher than retention_min: RF010, as prune says');
select isnt(
    recording_finalize.set_policy(p_topic => 'pin.messenger.call-recording-available.v1',
        p_relay_batch_size => 50, p_retention => '2 days'),
    null, 'within every bound: the stored policy');

select * from finish();
rollback;
