-- plpgsql_check finds no error and no warning (other and extra warnings included) in any
-- PL/pgSQL function of the product's schemas, recording_finalize and recording_finalize_internal.
begin;
select plan(3);

create temp table checked as
select p.oid, p.oid::regprocedure::text as fn
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
join pg_catalog.pg_language as l on l.oid = p.prolang
where n.nspname in ('recording_finalize', 'recording_finalize_internal')
    and l.lanname = 'plpgsql';

select is_empty(
    $$
    select f.fn, c.level, c.message, c.lineno, c.statement
    from checked as f
    cross join lateral public.plpgsql_check_function_tb(
        f.oid,
        fatal_errors => false,
        other_warnings => true,
        extra_warnings => true
    ) as c
    $$,
    'plpgsql_check reports nothing for any PL/pgSQL function of the product'
);

select cmp_ok(
    (select count(*)::integer from checked where fn like 'recording\_finalize.%'),
    '>=', 20, 'it saw the API functions'
);
select cmp_ok(
    (select count(*)::integer from checked where fn like 'recording\_finalize\_internal.%'),
    '>=', 10, 'and the internal ones'
);

select * from finish();
rollback;
