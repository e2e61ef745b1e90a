-- Rules every table of the product keeps, whichever migration adds it (sql/schema.sql pins the
-- tables themselves: columns, keys, CHECKs, indexes): owned by the product's owner role, the
-- binary never in the database (only its file_id and metadata), enumerations as varchar +
-- CHECK, never enum types or domains.
begin;
select plan(3);

create temp table product_tables as
select c.oid from pg_catalog.pg_class as c
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
where c.relkind in ('r', 'p')
    and (n.nspname like 'recording\_finalize%'
        or c.oid = 'messenger.recording_finalize_attempts'::regclass);

select is_empty(
    $$select c.oid::regclass::text || ' owned by ' || c.relowner::regrole::text
    from pg_catalog.pg_class as c
    where c.oid in (select oid from product_tables)
        and c.relowner <> (select n.nspowner from pg_catalog.pg_namespace as n
            where n.nspname = 'recording_finalize')$$,
    'every product table is owned by the product''s owner role'
);
select is_empty(
    $$select a.attrelid::regclass::text || '.' || a.attname from pg_catalog.pg_attribute as a
    where a.attrelid in (select oid from product_tables) and a.attnum > 0
        and not a.attisdropped and a.atttypid in ('bytea'::regtype, 'oid'::regtype)$$,
    'no bytea or large-object column: only file_id and metadata are stored'
);
select is_empty(
    $$select t.oid::regtype::text from pg_catalog.pg_type as t
    join pg_catalog.pg_namespace as n on n.oid = t.typnamespace
    where t.typtype in ('e', 'd') and n.nspname like 'recording\_finalize%'$$,
    'no enum or domain type: enumerations are varchar with CHECK constraints'
);

select * from finish();
rollback;
