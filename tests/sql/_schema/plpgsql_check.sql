-- plpgsql_check finds no error and no warning in any PL/pgSQL function of the product.
begin;
select plan(2);

select is_empty(
    $$
    select p.oid::regprocedure::text, c.level, c.message
    from pg_catalog.pg_proc as p
    join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
    join pg_catalog.pg_language as l on l.oid = p.prolang
    cross join lateral public.plpgsql_check_function_tb(
        p.oid,
        relid => coalesce(
            (select t.tgrelid from pg_catalog.pg_trigger as t where t.tgfoid = p.oid limit 1),
            0
        ),
        oldtable => (select t.tgoldtable from pg_catalog.pg_trigger as t
            where t.tgfoid = p.oid limit 1),
        fatal_errors => false,
        other_warnings => true,
        extra_warnings => true
    ) as c
    where n.nspname in ('messenger', 'recording_finalize') and l.lanname = 'plpgsql'
    $$,
    'plpgsql_check reports nothing for any function'
);

select cmp_ok(
    (
        select count(*)::integer
        from pg_catalog.pg_proc as p
        join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
        join pg_catalog.pg_language as l on l.oid = p.prolang
        where n.nspname in ('messenger', 'recording_finalize') and l.lanname = 'plpgsql'
    ),
    '>=',
    14,
    'the check above saw the product''s PL/pgSQL functions'
);

select * from finish();
rollback;
