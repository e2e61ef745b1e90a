-- prune refuses bad arguments (RF001) and an age below the server's retention floor (RF010,
-- naming the bound): no worker or operator login prunes fresher history than the owner allows.
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
create temp table fingerprint as select tests.snapshot() as s;

select throws_ok($$select * from recording_finalize.prune('30 seconds')$$, 'RF001', null,
    'less than a minute is refused');
select throws_ok($$select * from recording_finalize.prune(null)$$, 'RF001', null,
    'a missing age is refused');
select throws_ok($$select * from recording_finalize.prune('30 days', 0)$$, 'RF001', null,
    'a batch of 0 is refused');
select throws_ok($$select * from recording_finalize.prune('30 days', 10001)$$, 'RF001', null,
    'a batch above 10000 is refused');
select throws_ok($$select * from recording_finalize.prune('30 days', null)$$, 'RF001', null,
    'a missing batch size is refused');
select throws_ok($$select * from recording_finalize.prune('30 days', 10, null)$$, 'RF001', null,
    'a missing dry-run flag is refused');

-- The retention floor: 1 day by default; the owner may lower it (not below 1 minute).
select throws_ok($$select * from recording_finalize.prune('2 hours')$$, 'RF010', null,
    'fresher than settings.retention_min is refused');
select throws_ok($$select * from recording_finalize.prune('2 hours', p_dry_run => true)$$,
    'RF010', null, 'also in a dry run');
select matches(
    tests.error_of($$select * from recording_finalize.prune('2 hours')$$),
    'retention is 02:00:00.*retention_min.*at least 1 day',
    'the message names the argument, its value and the bound'
);
select is(pg_temp.column_of($$select * from recording_finalize.prune('2 hours')$$), 'retention',
    'the error''s COLUMN field names retention (RFR_RETENTION)');
select is(pg_temp.column_of($$select * from recording_finalize.prune('30 seconds')$$),
    'retention', 'so does an RF001 about the age');
update recording_finalize.settings set retention_min = '1 hour';
select lives_ok($$select * from recording_finalize.prune('2 hours')$$,
    'allowed once the owner lowers retention_min');
select is(tests.snapshot(), (select s from fingerprint), 'nothing was deleted on the way');

select * from finish();
rollback;
