-- Page fill of the hot tables (migration 0003): the relay's lease update can stay on its page;
-- autovacuum thresholds (migration 0013).
begin;
select plan(3);

select is(
    (
        select c.reloptions
        from pg_catalog.pg_class as c
        where c.oid = 'messenger.integration_outbox'::regclass
    ),
    array[
        'fillfactor=50', 'autovacuum_vacuum_scale_factor=0.01', 'autovacuum_vacuum_threshold=2000'
    ],
    'integration_outbox keeps half of each page free (fillfactor 50), vacuumed by its churn'
);

-- Autovacuum by churn, not history (migration 0013): 2,000 dead versions + 1 % of the table.
select is(
    (
        select array_agg(
            c.relname::text || ': ' || array_to_string(c.reloptions, ', ') order by c.relname
        )
        from pg_catalog.pg_class as c
        where c.oid in (
            'messenger.recording_finalize_attempts'::regclass,
            'messenger.call_recordings'::regclass,
            'messenger.realtime_outbox'::regclass
        )
    ),
    array[
        'call_recordings: autovacuum_vacuum_scale_factor=0.01, autovacuum_vacuum_threshold=2000',
        'realtime_outbox: autovacuum_vacuum_scale_factor=0.01, autovacuum_vacuum_threshold=2000',
        'recording_finalize_attempts: autovacuum_vacuum_scale_factor=0.01, '
        || 'autovacuum_vacuum_threshold=2000, autovacuum_analyze_scale_factor=0.02, '
        || 'autovacuum_analyze_threshold=2000'
    ],
    'the finalize tables and outboxes are vacuumed after 2,000 dead versions + 1 %'
);

-- The lease is a HOT update: no index covers relay_lease_until, nor uses it in a predicate.
select is(
    (
        select count(*)::integer
        from pg_catalog.pg_index as i
        inner join pg_catalog.pg_attribute as a
            on a.attrelid = i.indrelid and a.attname = 'relay_lease_until'
        where i.indrelid = 'messenger.integration_outbox'::regclass
            and (
                a.attnum = any(i.indkey::smallint[])
                or pg_catalog.pg_get_expr(i.indpred, i.indrelid) like '%relay_lease_until%'
            )
    ),
    0,
    'no index of integration_outbox covers relay_lease_until'
);

select * from finish();
rollback;
