-- The fingerprint of what one function file defines, to tell whether a definition has changed.

create or replace function recording_finalize_internal.function_fingerprint(p_file_name text)
returns text
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
    -- A file sql/functions/<schema>.<name>.sql defines the function(s) <schema>.<name>: every
    -- overload, with its definition, its privileges and its comment (all three are in the file).
    select pg_catalog.md5(
        pg_catalog.string_agg(
            pg_catalog.pg_get_functiondef(p.oid)
            || coalesce(p.proacl::text, '')
            || coalesce(pg_catalog.obj_description(p.oid, 'pg_proc'), ''),
            E'\n' order by p.oid::regprocedure::text
        )
    )
    from pg_catalog.pg_proc as p
    inner join pg_catalog.pg_namespace as n on p.pronamespace = n.oid
    where
        n.nspname = pg_catalog.split_part(p_file_name, '.', 1)
        and p.proname = pg_catalog.split_part(p_file_name, '.', 2)
$$;

comment on function recording_finalize_internal.function_fingerprint(text) is
'Internal. md5 of the definitions (pg_get_functiondef), privileges and comments of every '
'function the file p_file_name (<schema>.<name>.sql) defines; NULL when it defines none that '
'exist. Read-only; independent of the caller''s search_path. migrate records it right after '
'applying a file; schema_state() compares it with that record (the drift check).';

revoke all on function recording_finalize_internal.function_fingerprint(text) from public;
