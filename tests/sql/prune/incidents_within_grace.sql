-- prune keeps a storage incident that may still defer a 404: one that ended less than
-- settings.upload_grace_max ago, however short the retention the owner allows (retention_min
-- may go down to 1 minute, below the grace cap); older than both, it goes.
begin;
select plan(4);

select tests.clean_slate();
update recording_finalize.settings set retention_min = '1 hour';
insert into recording_finalize.storage_incidents (source, started_at, ended_at)
values ('ops', now() - interval '4 hours', now() - interval '3 hours'),
    ('recorders', now() - interval '26 hours', now() - interval '25 hours');

select results_eq(
    $$select incidents from recording_finalize.prune('2 hours', p_dry_run => true)$$,
    'values (1::bigint)',
    'with a 2-hour retention and the default 24-hour grace cap, only the 25-hour-old one is due'
);
select results_eq(
    $$select incidents from recording_finalize.prune('2 hours')$$,
    'values (1::bigint)',
    'and only it goes'
);
select results_eq(
    'select source::text from recording_finalize.storage_incidents',
    $$values ('ops')$$,
    'the incident that ended 3 hours ago stays: a 24-hour grace would still defer on it'
);
update recording_finalize.settings set upload_grace_max = '2 hours';
select results_eq(
    $$select incidents from recording_finalize.prune('2 hours')$$,
    'values (1::bigint)',
    'once the owner caps the grace at 2 hours, it goes too'
);

select * from finish();
rollback;
