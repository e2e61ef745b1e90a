-- Least privilege, read from the catalog: the functions a login granted each group role can
-- EXECUTE, over every function of every schema the product owns (and any function its owner
-- owns anywhere), equal exactly the expected set - anything unexpected fails. None of the three
-- roles has any privilege on any table, view or sequence of the database, nor on the product's
-- internal schemas; they are plain NOLOGIN group roles, apart from each other and the owner.
begin;
select plan(26);

create role rfr_pgtap_worker_login login in role recording_finalize_worker;
create role rfr_pgtap_operator_login login in role recording_finalize_operator;
create role rfr_pgtap_service_login login in role recording_finalize_service;

create temp table product_functions as
select p.oid, replace(p.oid::regprocedure::text, ', ', ',') as fn
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
where n.nspname in ('recording_finalize', 'recording_finalize_internal',
        'recording_finalize_migrations', 'recording_finalize_adapter', 'messenger')
    or p.proowner = (select s.nspowner from pg_catalog.pg_namespace as s
        where s.nspname = 'recording_finalize');

create temp table expected (role text, fn text);
insert into expected
select 'worker', fn from (values
    ('recording_finalize.apply_outcome(uuid,uuid,text,text,bigint,integer,text,text,boolean,'
        || 'integer,integer,integer)'),
    ('recording_finalize.check_adapter(boolean)'),
    ('recording_finalize.claim_due(integer)'),
    ('recording_finalize.discover_stuck(integer,integer)'),
    ('recording_finalize.discover_unpublished(interval,integer,integer)'),
    ('recording_finalize.known_uploads(integer)'),
    ('recording_finalize.operator_state()'),
    ('recording_finalize.prune(interval,integer,boolean)'),
    ('recording_finalize.prune_events(interval,integer,boolean)'),
    ('recording_finalize.service_events_unpublished(interval,integer)'),
    ('recording_finalize.storage_layout_unconfirmed(integer,integer,integer)'),
    ('recording_finalize.record_apply_failure(uuid[],uuid[],text,boolean)'),
    ('recording_finalize.record_apply_failure(uuid[],uuid[],text[],text,text,integer,uuid[],'
        || 'uuid[])'),
    ('recording_finalize.report_worker_config(text,text,interval)'),
    ('recording_finalize.relay_claim(integer,interval,bigint,text)'),
    ('recording_finalize.relay_mark_published(bigint[],uuid)'),
    ('recording_finalize.release_claims(uuid[],uuid[])'),
    ('recording_finalize.republish_hold()'),
    ('recording_finalize.schema_state()'),
    ('recording_finalize.server_settings()'),
    ('recording_finalize.set_policy(integer,interval,interval,double precision,interval,'
        || 'double precision,interval,text,integer,interval)'),
    ('recording_finalize.stats(text)'),
    ('recording_finalize.storage_incident_close(text,timestamp with time zone,text)'),
    ('recording_finalize.storage_incident_list(interval,integer)'),
    ('recording_finalize.storage_incident_open(text,text,timestamp with time zone)'),
    ('recording_finalize.storage_health(boolean,integer,integer,boolean,text)'),
    ('recording_finalize.try_lock_runner(bigint)'),
    ('recording_finalize.unlock_runner(bigint)'),
    ('recording_finalize.worker_config()')
) as v(fn)
union all
select 'operator', fn from (values
    ('recording_finalize.audit(interval,integer,interval)'),
    ('recording_finalize.audit_repair(text,integer)'),
    ('recording_finalize.check_adapter(boolean)'),
    ('recording_finalize.claim_preview(integer)'),
    ('recording_finalize.explain(uuid)'),
    ('recording_finalize.failed_recordings(integer)'),
    ('recording_finalize.known_uploads(integer)'),
    ('recording_finalize.operator_state()'),
    ('recording_finalize.preview_outcomes(jsonb)'),
    ('recording_finalize.prune(interval,integer,boolean)'),
    ('recording_finalize.prune_events(interval,integer,boolean)'),
    ('recording_finalize.quarantined_rows(integer,text,timestamp with time zone)'),
    ('recording_finalize.republish_hold()'),
    ('recording_finalize.requeue(uuid,text)'),
    ('recording_finalize.reschedule(uuid[],text,text,text,boolean)'),
    ('recording_finalize.service_events_unpublished(interval,integer)'),
    ('recording_finalize.schema_state()'),
    ('recording_finalize.server_settings()'),
    ('recording_finalize.set_pause(text,boolean,text,text)'),
    ('recording_finalize.stats(text)'),
    ('recording_finalize.storage_incident_close(text,timestamp with time zone,text)'),
    ('recording_finalize.storage_incident_list(interval,integer)'),
    ('recording_finalize.storage_incident_open(text,text,timestamp with time zone)'),
    ('recording_finalize.worker_config()')
) as v(fn)
union all
select 'service', fn from (values
    ('recording_finalize.recording_ingest_completed(uuid,text,bigint,integer,text,text)'),
    ('recording_finalize.recording_started(uuid,text,uuid,text,text)'),
    ('recording_finalize.recording_stopped(uuid,interval)'),
    ('recording_finalize.session_ended(text,uuid,interval)'),
    ('recording_finalize.storage_incident_close(text,timestamp with time zone,text)'),
    ('recording_finalize.storage_incident_open(text,text,timestamp with time zone)')
) as v(fn);

-- 1: the scan sees every function of the product.
select cmp_ok(
    (select count(*) from product_functions), '>=', 49::bigint,
    'the scan covers the product''s functions'
);

-- 6: what each login can execute, exactly; and the group roles themselves agree.
select set_eq(
    format($$select fn from product_functions
        where has_function_privilege(%L, oid, 'execute')$$, 'rfr_pgtap_' || r || '_login'),
    format($$select fn from expected where role = %L$$, r),
    format('the %s login can execute exactly the %s API', r, r)
)
from unnest(array['worker', 'operator', 'service']) as r;
select set_eq(
    format($$select fn from product_functions
        where has_function_privilege(%L, oid, 'execute')$$, 'recording_finalize_' || r),
    format($$select fn from expected where role = %L$$, r),
    format('recording_finalize_%s itself holds exactly that', r)
)
from unnest(array['worker', 'operator', 'service']) as r;

-- 3: no privilege on any table, view or sequence of the database (any schema, any column),
-- but the catalogs and the objects of extensions (pgTAP's views here).
create temp table database_relations as
select c.oid from pg_catalog.pg_class as c
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
where n.nspname not in ('pg_catalog', 'information_schema')
    and n.nspname !~ '^pg_(toast|temp)'
    and n.oid <> pg_catalog.pg_my_temp_schema()
    and not exists (select from pg_catalog.pg_depend as d
        where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e');
select is_empty(
    format($$select c.oid::regclass::text || ' ' || p
    from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    cross join unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES',
        'TRIGGER']) as p
    where c.relkind in ('r', 'p', 'v', 'm', 'f')
        and c.oid in (select oid from database_relations)
        and (has_table_privilege(%1$L, c.oid, p)
            or (p in ('SELECT', 'INSERT', 'UPDATE', 'REFERENCES')
                and has_any_column_privilege(%1$L, c.oid, p)))
    union all
    select c.oid::regclass::text || ' ' || p
    from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    cross join unnest(array['USAGE', 'SELECT', 'UPDATE']) as p
    where c.relkind = 'S' and c.oid in (select oid from database_relations)
        and has_sequence_privilege(%1$L, c.oid, p)$$, 'rfr_pgtap_' || r || '_login'),
    format('the %s login has no privilege on any table, view, column or sequence', r)
)
from unnest(array['worker', 'operator', 'service']) as r;

-- 3: schemas: USAGE on recording_finalize (to reach the API), nothing else of the product's.
select is(
    array(
        select s || ' ' || p
        from unnest(array['recording_finalize', 'recording_finalize_internal',
                'recording_finalize_migrations', 'recording_finalize_adapter', 'messenger']) as s,
            unnest(array['USAGE', 'CREATE']) as p
        where has_schema_privilege('rfr_pgtap_' || r || '_login', s, p)
        order by 1
    ),
    array['recording_finalize USAGE'],
    format('the %s login may only use schema recording_finalize (no CREATE, not the '
        || 'internals, not the bookkeeping, not the adapter, not messenger)', r)
)
from unnest(array['worker', 'operator', 'service']) as r;

-- 2: the roles themselves.
select results_eq(
    $$select rolname::text collate "default", rolsuper, rolcreaterole, rolcreatedb, rolbypassrls,
        rolcanlogin, rolreplication
    from pg_catalog.pg_roles where rolname like 'recording\_finalize\_%' order by 1$$,
    $$values ('recording_finalize_operator', false, false, false, false, false, false),
        ('recording_finalize_service', false, false, false, false, false, false),
        ('recording_finalize_worker', false, false, false, false, false, false)$$,
    'the three group roles are plain NOLOGIN roles with no attribute'
);
select is_empty(
    $$select a.rolname || ' in ' || b.rolname
    from unnest(array['recording_finalize_worker', 'recording_finalize_operator',
            'recording_finalize_service',
            (select n.nspowner::regrole::text from pg_catalog.pg_namespace as n
                where n.nspname = 'recording_finalize')]) as a(rolname),
        unnest(array['recording_finalize_worker', 'recording_finalize_operator',
            'recording_finalize_service',
            (select n.nspowner::regrole::text from pg_catalog.pg_namespace as n
                where n.nspname = 'recording_finalize')]) as b(rolname)
    where a.rolname <> b.rolname and pg_has_role(a.rolname, b.rolname, 'member')$$,
    'no group role is a member of another or of the owner (nor the owner of them)'
);

-- 10: what a login meets when it tries (SQLSTATE 42501 each time).
select tests.clean_slate();
select tests.make_stuck() as rec \gset

set local role rfr_pgtap_worker_login;
select throws_ok('select count(*) from messenger.recording_finalize_attempts', '42501', null,
    'the worker cannot read the finalize rows');
select throws_ok('select * from recording_finalize.settings', '42501', null,
    'the worker cannot read the settings table');
select throws_ok($$select recording_finalize_internal.policy()$$, '42501', null,
    'the worker cannot call an internal helper');
select lives_ok('select * from recording_finalize.claim_due(1)',
    'the worker claims through claim_due');
select throws_ok(format('select * from recording_finalize.requeue(%L)', :'rec'), '42501', null,
    'the worker cannot requeue');
select throws_ok(format($$select recording_finalize_adapter.make_failed(%L, 'Uploading', 'x',
    now())$$, :'rec'), '42501', null,
    'the worker cannot call an adapter port itself (only the product''s functions do)');
reset role;

set local role rfr_pgtap_service_login;
select throws_ok('select * from recording_finalize.claim_due()', '42501', null,
    'the service login cannot claim');
select throws_ok('delete from messenger.recording_finalize_attempts', '42501', null,
    'nor touch the product''s table');
reset role;

set local role rfr_pgtap_operator_login;
select throws_ok('select * from recording_finalize.relay_claim()', '42501', null,
    'the operator cannot lease outbox rows');
select throws_ok('delete from recording_finalize.operator_actions', '42501', null,
    'nor rewrite the audit trail');
reset role;
select is(current_user::text, session_user::text, 'back to the superuser');

select * from finish();
rollback;
