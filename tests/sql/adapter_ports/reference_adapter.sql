-- adapter_ports: the reference adapter, as migrate installed it, holds every declared port -
-- each view with the declared columns and types, each function with the declared arguments (names
-- and types, in order) and result.
begin;
select plan(3);

select is_empty(
    $$select p.port, d.name
    from recording_finalize_internal.adapter_ports() as p
    cross join lateral unnest(p.names, p.types) as d (name, type)
    where p.kind = 'view' and not exists (
        select from pg_catalog.pg_attribute as a
        where a.attrelid = pg_catalog.to_regclass('recording_finalize_adapter.' || p.port)
            and a.attname = d.name and a.attnum > 0 and not a.attisdropped
            and pg_catalog.format_type(a.atttypid, a.atttypmod) = d.type)$$,
    'every declared view column is in the reference adapter with its type'
);
select is_empty(
    $$select p.port from recording_finalize_internal.adapter_ports() as p
    where p.kind = 'function' and not exists (
        select from pg_catalog.pg_proc as f
        where f.pronamespace = 'recording_finalize_adapter'::regnamespace
            and f.proname = p.port
            and f.proargnames = p.names
            and array(select pg_catalog.format_type(t, null)
                from pg_catalog.unnest(f.proargtypes) as t) = p.types
            and pg_catalog.format_type(f.prorettype, null) = p.result_type)$$,
    'every declared function is in the reference adapter with its arguments and result'
);
select set_eq(
    $$select port from recording_finalize_internal.adapter_ports() where optional$$,
    $$values ('start_recording'), ('hold_session'), ('end_session'), ('make_uploading')$$,
    'only the lifecycle ports are optional'
);

select * from finish();
rollback;
