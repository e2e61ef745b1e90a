-- The fingerprint of the adapter as it is: whether it is still what migrate installed.

create or replace function recording_finalize_internal.adapter_fingerprint()
returns text
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
    -- Every view's definition and every function's, in a fixed order; no row (NULL) without
    -- the schema.
    select pg_catalog.md5(coalesce((
        select pg_catalog.string_agg(d.text, E'\n' order by d.text)
        from (
            select 'view ' || c.relname || ': ' || pg_catalog.pg_get_viewdef(c.oid) as text
            from pg_catalog.pg_class as c
            where c.relnamespace = n.oid and c.relkind in ('v', 'm')
            union all
            select 'function ' || p.oid::pg_catalog.regprocedure::text || ': '
                || pg_catalog.pg_get_functiondef(p.oid)
            from pg_catalog.pg_proc as p
            where p.pronamespace = n.oid and p.prokind = 'f'
        ) as d
    ), ''))
    from pg_catalog.pg_namespace as n
    where n.nspname = 'recording_finalize_adapter'
$$;

comment on function recording_finalize_internal.adapter_fingerprint() is
'Internal. md5 of the definitions of every view and function in schema '
'recording_finalize_adapter (NULL when the schema does not exist). migrate records it right '
'after it installs the reference adapter: while the live fingerprint equals the recorded one, '
'the adapter is the reference one and the next release may upgrade it; otherwise a DBA edited '
'it and migrate keeps it. Read by schema_state.';

revoke all on function recording_finalize_internal.adapter_fingerprint() from public;
