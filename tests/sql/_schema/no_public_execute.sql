-- PUBLIC can execute no function of the product: not one that exists, and
-- not one its owner creates later in one of its schemas - the baseline's global ALTER DEFAULT
-- PRIVILEGES for the migrating role revokes PUBLIC's EXECUTE from every function that role
-- creates, whether or not the file that creates it remembers to. PUBLIC reaches no schema or
-- table of the product either.
begin;
select plan(11);

select n.nspowner::regrole::text as owner from pg_catalog.pg_namespace as n
where n.nspname = 'recording_finalize' \gset

create temp table product_functions as
select p.oid, p.oid::regprocedure::text as fn, p.proacl, p.proowner
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
where n.nspname in ('recording_finalize', 'recording_finalize_internal',
        'recording_finalize_migrations', 'messenger')
    or p.proowner = :'owner'::regrole;

-- A login with no membership at all: what PUBLIC alone grants it.
create role rfr_pgtap_nobody login;

select cmp_ok((select count(*) from product_functions), '>=', 49::bigint,
    'the check sees the product''s functions');
select is_empty(
    $$select fn from product_functions as f
    where exists (
        select from aclexplode(coalesce(f.proacl, acldefault('f', f.proowner))) as a
        where a.grantee = 0 and a.privilege_type = 'EXECUTE'
    )$$,
    'PUBLIC is granted EXECUTE on none of the product''s functions'
);
select is_empty(
    $$select fn from product_functions
    where has_function_privilege('rfr_pgtap_nobody', oid, 'execute')$$,
    'a login that is a member of nothing can execute none of them'
);

-- The default privileges the baseline set for the owner, database-wide (not per schema: a
-- per-schema default cannot take away the global default of PUBLIC).
select results_eq(
    format($$select d.defaclnamespace::integer,
        exists (select from aclexplode(d.defaclacl) as a where a.grantee = 0)
    from pg_catalog.pg_default_acl as d
    where d.defaclrole = %L::regrole and d.defaclobjtype = 'f'$$, :'owner'),
    $$values (0, false)$$,
    'the owner''s global default for functions grants PUBLIC nothing'
);

-- Functions the owner creates from now on, in the product's schemas, as a later migration or
-- function file would (and forgets its REVOKE).
set local role :owner;
create function recording_finalize.rfr_pgtap_later() returns integer
language sql stable security definer set search_path = '' as $$ select 1 $$;
create function recording_finalize_internal.rfr_pgtap_later_helper() returns integer
language sql immutable as $$ select 2 $$;
create procedure recording_finalize.rfr_pgtap_later_procedure() language sql as $$ select 3 $$;
reset role;

select ok(
    not has_function_privilege('public', 'recording_finalize.rfr_pgtap_later()', 'execute'),
    'a function the owner creates later in recording_finalize is not executable by PUBLIC'
);
select ok(
    not has_function_privilege('public', 'recording_finalize_internal.rfr_pgtap_later_helper()',
        'execute'),
    'nor one in recording_finalize_internal'
);
select ok(
    not has_function_privilege('public', 'recording_finalize.rfr_pgtap_later_procedure()',
        'execute'),
    'nor a procedure'
);
-- A login that may use the schema (as the group roles may) but holds no grant on the function.
create role rfr_pgtap_schema_user login;
grant usage on schema recording_finalize to rfr_pgtap_schema_user;
set local role rfr_pgtap_schema_user;
select throws_ok('select recording_finalize.rfr_pgtap_later()', '42501', null,
    'a login with USAGE on the schema but no grant is refused the new function');
reset role;
select ok(
    has_function_privilege(:'owner', 'recording_finalize.rfr_pgtap_later()', 'execute'),
    'the owner keeps it (until a file grants it to a group role)'
);

-- Schemas and tables.
select is(
    array(
        select s || ' ' || p
        from unnest(array['recording_finalize', 'recording_finalize_internal',
                'recording_finalize_migrations']) as s,
            unnest(array['USAGE', 'CREATE']) as p
        where has_schema_privilege('rfr_pgtap_nobody', s, p)
    ),
    array[]::text[],
    'PUBLIC has no USAGE or CREATE on any schema of the product'
);
select is_empty(
    $$select c.oid::regclass::text from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where (n.nspname like 'recording\_finalize%'
            or c.oid = 'messenger.recording_finalize_attempts'::regclass)
        and c.relkind in ('r', 'p', 'v', 'm', 'S')
        and exists (select from aclexplode(coalesce(c.relacl, acldefault(
            (case when c.relkind = 'S' then 's' else 'r' end)::"char", c.relowner))) as a
            where a.grantee = 0)$$,
    'PUBLIC is granted nothing on any table or sequence of the product'
);

select * from finish();
rollback;
