-- Storage parameters: the product sets them on its own finalize table only (vacuumed by churn,
-- not by history: every finalized row leaves two dead versions), none on its other tables or
-- indexes, and never on a table of the service (SPEC section 8: no reloptions on service
-- objects; the test database's service tables come from the reference DDL, which sets none).
begin;
select plan(3);

select is(
    (select c.reloptions from pg_catalog.pg_class as c
        where c.oid = 'messenger.recording_finalize_attempts'::regclass),
    array[
        'autovacuum_vacuum_scale_factor=0.01', 'autovacuum_vacuum_threshold=2000',
        'autovacuum_analyze_scale_factor=0.02', 'autovacuum_analyze_threshold=2000'
    ],
    'recording_finalize_attempts is vacuumed and analyzed after 2,000 changes + 1-2 %'
);
select is_empty(
    $$select c.oid::regclass::text || ': ' || array_to_string(c.reloptions, ', ')
    from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where c.reloptions is not null
        and c.oid <> 'messenger.recording_finalize_attempts'::regclass
        and (n.nspname like 'recording\_finalize%'
            or c.oid in (select i.indexrelid from pg_catalog.pg_index as i
                where i.indrelid = 'messenger.recording_finalize_attempts'::regclass))$$,
    'no other table or index of the product has a storage parameter'
);
select is_empty(
    $$select c.oid::regclass::text || ': ' || array_to_string(c.reloptions, ', ')
    from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.nspname = 'messenger' and c.reloptions is not null
        and c.oid <> 'messenger.recording_finalize_attempts'::regclass
        and c.oid not in (select i.indexrelid from pg_catalog.pg_index as i
            where i.indrelid = 'messenger.recording_finalize_attempts'::regclass)$$,
    'no table, index or sequence of the service carries a storage parameter'
);

select * from finish();
rollback;
