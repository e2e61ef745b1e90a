-- The contract a DBA sees in \d+ and \dT+: every table and type the product owns, and every
-- column of its tables, carries a COMMENT (a visitor's objects explain themselves to the
-- host's DBA; the service's objects are the service's to comment, never the product's).
-- yoyo-migrations' own bookkeeping tables are the tool's and are left as it creates them.
begin;
select plan(5);

create temp table product_tables as
select c.oid, c.oid::regclass::text as tbl
from pg_catalog.pg_class as c
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
where c.relkind in ('r', 'p', 'v', 'm')
    and (n.nspname in ('recording_finalize', 'recording_finalize_internal',
            'recording_finalize_migrations')
        or c.oid = 'messenger.recording_finalize_attempts'::regclass)
    and c.relname not in ('_yoyo_log', '_yoyo_migration', '_yoyo_version', 'yoyo_lock');

select cmp_ok(
    (select count(*) from product_tables), '=', 12::bigint,
    'the check sees the product''s twelve tables'
);
select is_empty(
    $$select tbl from product_tables
    where coalesce(btrim(pg_catalog.obj_description(oid, 'pg_class')), '') = ''$$,
    'every product table has a COMMENT ON TABLE'
);
select is_empty(
    $$select t.tbl || '.' || a.attname
    from product_tables as t
    join pg_catalog.pg_attribute as a on a.attrelid = t.oid and a.attnum > 0
        and not a.attisdropped
    where coalesce(btrim(pg_catalog.col_description(t.oid, a.attnum)), '') = ''
    order by 1$$,
    'every column of every product table has a COMMENT ON COLUMN'
);
select is_empty(
    $$select t.oid::regtype::text from pg_catalog.pg_type as t
    join pg_catalog.pg_namespace as n on n.oid = t.typnamespace
    where n.nspname in ('recording_finalize', 'recording_finalize_internal',
            'recording_finalize_migrations')
        and t.typtype in ('c', 'e', 'd') and t.typrelid <> 0
        and (select c.relkind from pg_catalog.pg_class as c where c.oid = t.typrelid) = 'c'
        and coalesce(btrim(pg_catalog.obj_description(t.oid, 'pg_type')), '') = ''$$,
    'every composite type of the product has a COMMENT ON TYPE'
);
select is_empty(
    $$select n.nspname::text from pg_catalog.pg_namespace as n
    where n.nspname in ('recording_finalize', 'recording_finalize_internal',
            'recording_finalize_migrations')
        and coalesce(btrim(pg_catalog.obj_description(n.oid, 'pg_namespace')), '') = ''$$,
    'every schema of the product has a COMMENT ON SCHEMA'
);

select * from finish();
rollback;
