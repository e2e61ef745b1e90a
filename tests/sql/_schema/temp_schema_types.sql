-- A caller's temporary schema cannot hijack the product's functions. Every login may create
-- temporary objects (PUBLIC has TEMP on a database by default). With search_path = '' PostgreSQL
-- searches pg_temp FIRST for type and table names, so a domain pg_temp.text whose CHECK calls
-- the caller's code would run that code as the product's owner inside any SECURITY DEFINER
-- function that declares a text variable. The functions name pg_temp last (search_path =
-- pg_catalog, pg_temp): the caller's types are never found.
begin;
select plan(9);

select tests.clean_slate();
select tests.make_stuck() as stuck_rec \gset
select tests.make_stuck() as ingest_rec \gset

create function pg_temp.hijacked(p_what pg_catalog.text)
returns pg_catalog.bool
language plpgsql
as $$
begin
    raise exception 'hijacked: % ran the caller''s code as %', p_what, current_user;
end
$$;
-- A function that pins search_path to '', the way the product once did.
create function pg_temp.victim()
returns pg_catalog.text
language plpgsql
set search_path = ''
as $$
begin
    return 'caught'::text;
end
$$;
-- Runs p_sql with the trap set: domains pg_temp.text, uuid, jsonb and timestamptz whose CHECK
-- raises. Returns the error p_sql raised, or NULL. The trap is set only around p_sql (pgTAP's
-- own functions, which pin no search_path, would fall into it too), and this function names
-- pg_temp last itself.
create function pg_temp.under_trap(p_sql pg_catalog.text)
returns pg_catalog.text
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
    v_error pg_catalog.text;
begin
    create domain pg_temp.text as pg_catalog.text check (pg_temp.hijacked('text'));
    create domain pg_temp.uuid as pg_catalog.uuid check (pg_temp.hijacked('uuid'));
    create domain pg_temp.jsonb as pg_catalog.jsonb check (pg_temp.hijacked('jsonb'));
    create domain pg_temp.timestamptz as pg_catalog.timestamptz
        check (pg_temp.hijacked('timestamptz'));
    begin
        execute p_sql;
    exception when others then
        v_error := sqlerrm;
    end;
    drop domain pg_temp.text, pg_temp.uuid, pg_temp.jsonb, pg_temp.timestamptz;
    return v_error;
end
$$;

-- 1: the trap works: a function that pins search_path to '' falls into it.
select matches(pg_temp.under_trap('select pg_temp.victim()'), '^hijacked: text',
    'sanity: with search_path '''' a declared text is the caller''s domain');

-- 2..: the product's functions do not.
select is(pg_temp.under_trap($$select * from recording_finalize.stats()$$), null, 'stats');
select is(pg_temp.under_trap($$select recording_finalize.server_settings()$$), null,
    'server_settings');
select is(pg_temp.under_trap(format(
    $$select * from recording_finalize.claim_due(10)$$)), null, 'claim_due');
select is(pg_temp.under_trap(format(
    $$select * from recording_finalize.apply_outcome(%L, %L, 'missing')$$,
    :'stuck_rec', tests.token(:'stuck_rec'))), null, 'apply_outcome');
select is(pg_temp.under_trap(format(
    $$select recording_finalize.discover_stuck(10)$$)), null,
    'discover_stuck');
select is(pg_temp.under_trap(format(
    $$select * from recording_finalize.explain(%L)$$, :'stuck_rec')), null,
    'explain');
select is(pg_temp.under_trap(format(
    $$select * from recording_finalize.recording_ingest_completed(%L, 'rec/x', 1, 1, 'Webm')$$,
    :'ingest_rec')), null, 'recording_ingest_completed');
select is(pg_temp.under_trap(format(
    $$select * from recording_finalize.audit()$$)), null, 'audit');

select * from finish();
rollback;
