-- Least privilege: a login role granted recording_finalize_worker can EXECUTE the worker API
-- (what the cycle and the relay need) and nothing else; one granted recording_finalize_operator
-- the runbook functions and nothing else; PUBLIC can execute no function; nobody but the owner
-- touches the tables, the server settings included.
begin;
select plan(50);

create role rfr_pgtap_worker_login login in role recording_finalize_worker;
create role rfr_pgtap_operator_login login in role recording_finalize_operator;

create temp table api (fn text);
insert into api values
    ('recording_finalize.claim_due(integer,integer,interval,interval,double precision,interval,'
        || 'double precision,text)'),
    ('recording_finalize.apply_outcome(uuid,uuid,text,text,bigint,integer,text,text,integer,'
        || 'text,interval)'),
    ('recording_finalize.storage_incident_open(text,text,timestamp with time zone)'),
    ('recording_finalize.storage_incident_close(text,timestamp with time zone,text)'),
    ('recording_finalize.storage_incident_list(interval,integer)'),
    ('recording_finalize.relay_claim(integer,interval,text)'),
    ('recording_finalize.relay_mark_published(bigint[],uuid)'),
    ('recording_finalize.try_lock_runner(bigint)'),
    ('recording_finalize.unlock_runner(bigint)'),
    ('recording_finalize.stats(text)'),
    ('recording_finalize.server_settings()'),
    ('recording_finalize.server_bounds()'),
    ('recording_finalize.schema_state()'),
    -- the operator toolkit (0010): what the cycle reads and run's own retention
    ('recording_finalize.claim_preview(integer,integer,interval,text)'),
    ('recording_finalize.operator_state()'),
    ('recording_finalize.prune(interval,integer,boolean,text)');

create temp table operator_api (fn text);
insert into operator_api values
    ('recording_finalize.quarantined_rows(integer)'),
    ('recording_finalize.stats(text)'),
    ('recording_finalize.server_settings()'),
    ('recording_finalize.server_bounds()'),
    ('recording_finalize.schema_state()'),
    -- the operator toolkit (0010)
    ('recording_finalize.explain(uuid,integer,interval,text)'),
    ('recording_finalize.audit(interval,interval,integer,text)'),
    ('recording_finalize.audit_repair(text,interval,integer)'),
    ('recording_finalize.failed_recordings(integer)'),
    ('recording_finalize.claim_preview(integer,integer,interval,text)'),
    ('recording_finalize.operator_requeue(uuid,text,text)'),
    ('recording_finalize.operator_requeue_quarantined(text,text,text,timestamp with time zone,'
        || 'integer,boolean)'),
    ('recording_finalize.operator_retry(uuid,text,text)'),
    ('recording_finalize.set_pause(text,boolean,text,text)'),
    ('recording_finalize.operator_state()'),
    ('recording_finalize.prune(interval,integer,boolean,text)'),
    -- storage incidents (0008): any source
    ('recording_finalize.storage_incident_open(text,text,timestamp with time zone)'),
    ('recording_finalize.storage_incident_close(text,timestamp with time zone,text)'),
    ('recording_finalize.storage_incident_list(interval,integer)');

create temp table product_functions as
select p.oid, replace(p.oid::regprocedure::text, ', ', ',') as fn, p.proacl, p.proowner
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
where n.nspname in ('messenger', 'recording_finalize');

-- Catalogue checks.
select set_eq(
    $$select fn from product_functions
    where has_function_privilege('rfr_pgtap_worker_login', oid, 'execute')$$,
    'select fn from api',
    'the worker can execute exactly the worker API functions of sql/README.md'
);
select set_eq(
    $$select fn from product_functions
    where has_function_privilege('rfr_pgtap_operator_login', oid, 'execute')$$,
    'select fn from operator_api',
    'the operator can execute exactly the operator API functions of sql/README.md'
);
select is_empty(
    $$select fn from product_functions as f
    where exists (
        select from aclexplode(coalesce(f.proacl, acldefault('f', f.proowner))) as a
        where a.grantee = 0 and a.privilege_type = 'EXECUTE'
    )$$,
    'PUBLIC can execute none of the functions'
);
select is(
    array(
        select p from unnest(array[
            'SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER'
        ]) as p
        where has_table_privilege('rfr_pgtap_worker_login', ('messenger.' || t)::regclass, p)
    ),
    array[]::text[],
    format('the worker has no privilege on messenger.%s', t)
)
from unnest(array[
    'call_sessions', 'conference_sessions', 'call_recordings', 'recording_finalize_attempts',
    'integration_outbox', 'realtime_outbox', 'storage_incidents'
]) as t;
select is_empty(
    $$select c.relname from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.nspname in ('messenger', 'recording_finalize') and c.relkind in ('r', 'S', 'v', 'm')
        and (has_table_privilege('public', c.oid, 'select')
            or has_table_privilege('public', c.oid, 'insert')
            or has_table_privilege('public', c.oid, 'update')
            or has_table_privilege('public', c.oid, 'delete'))$$,
    'PUBLIC has no privilege on any table or sequence'
);
select ok(
    not has_schema_privilege('rfr_pgtap_worker_login', 'messenger', 'usage')
        and not has_schema_privilege('rfr_pgtap_worker_login', 'messenger', 'create'),
    'the worker cannot even look into schema messenger'
);
select ok(
    has_schema_privilege('rfr_pgtap_worker_login', 'recording_finalize', 'usage')
        and not has_schema_privilege('rfr_pgtap_worker_login', 'recording_finalize', 'create'),
    'the worker can use schema recording_finalize but not create in it'
);
select results_eq(
    $$select rolsuper, rolcreaterole, rolcreatedb, rolbypassrls, rolcanlogin
    from pg_catalog.pg_roles where rolname = 'recording_finalize_worker'$$,
    $$values (false, false, false, false, false)$$,
    'recording_finalize_worker is a plain NOLOGIN group role'
);
select results_eq(
    $$select rolsuper, rolcreaterole, rolcreatedb, rolbypassrls, rolcanlogin
    from pg_catalog.pg_roles where rolname = 'recording_finalize_operator'$$,
    $$values (false, false, false, false, false)$$,
    'recording_finalize_operator is a plain NOLOGIN group role'
);
select is(
    array(
        select r || ' ' || p
        from unnest(array['rfr_pgtap_worker_login', 'rfr_pgtap_operator_login', 'public']) as r,
            unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) as p
        where has_table_privilege(r, 'recording_finalize.settings', p)
    ),
    array[]::text[],
    'nobody but the owner reads or changes the server settings table'
);
select ok(
    not pg_has_role('rfr_pgtap_worker_login', 'recording_finalize_operator', 'usage')
        and not pg_has_role('rfr_pgtap_operator_login', 'recording_finalize_worker', 'usage'),
    'the worker and the operator roles are apart'
);

-- A fixture, built as the owner.
select tests.clean_slate();
select tests.make_stuck() as rec \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as published \gset
select recording_finalize.enqueue_available(
    :'published', 'pin.messenger.call-recording-available.v1'
) as enqueued \gset

-- Now as the worker.
set local role rfr_pgtap_worker_login;

select throws_ok(
    'select count(*) from messenger.call_recordings', '42501', null,
    'the worker cannot read call_recordings'
);
select throws_ok(
    'select count(*) from messenger.recording_finalize_attempts', '42501', null,
    'the worker cannot read the finalize rows'
);
select throws_ok(
    format(
        $$update messenger.recording_finalize_attempts set status = 'Done'
        where recording_id = %L$$,
        :'rec'
    ),
    '42501', null, 'the worker cannot update a finalize row'
);
select throws_ok(
    $$insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key,
        payload) values ('t', 'k', 'e', 'd', '{}')$$,
    '42501', null, 'the worker cannot insert into the outbox'
);
select throws_ok(
    'delete from messenger.realtime_outbox', '42501', null,
    'the worker cannot delete realtime rows'
);
select throws_ok(
    format(
        $$select messenger.recording_ingest_completed(%L, 'k', 1, 1, 'Ogg')$$, :'rec'
    ),
    '42501', null, 'the worker cannot call the messenger service''s ingest callback'
);
select throws_ok(
    format($$select recording_finalize.enqueue_available(%L, 't')$$, :'published'),
    '42501', null, 'the worker cannot call the internal enqueue_available'
);
select throws_ok(
    format(
        $$select recording_finalize.transition_available(%L, 'k', 1, 1, 'Ogg', 't')$$, :'rec'
    ),
    '42501', null, 'the worker cannot call the internal transition_available'
);
select throws_ok(
    format(
        $$select recording_finalize.schedule_finalize(%L, 'Direct', %L, now())$$,
        :'rec', gen_random_uuid()
    ),
    '42501', null, 'the worker cannot call the internal schedule_finalize'
);

-- A whole cycle through the API, as the worker.
create temp table worker_claim as
select * from recording_finalize.claim_due(p_backoff_jitter => 0);
select is(
    (select action from worker_claim where recording_id = :'rec'), 'reconcile',
    'the worker claims through claim_due'
);
select is(
    (select result from recording_finalize.apply_outcome(
        :'rec', (select claim_token from worker_claim where recording_id = :'rec'), 'found',
        'recordings/w', 10, 10, 'Ogg'
    )),
    'reconciled',
    'and records the verdict through apply_outcome'
);
create temp table worker_relay as select * from recording_finalize.relay_claim(10);
select is((select count(*) from worker_relay), 2::bigint, 'relay_claim works for the worker');
select is(
    recording_finalize.relay_mark_published(
        (select array_agg(id) from worker_relay),
        (select min(lease_token::text)::uuid from worker_relay)
    ),
    2,
    'relay_mark_published works for the worker'
);
select is(
    (select backlog from recording_finalize.stats()), 0::bigint,
    'stats works for the worker'
);
select is(
    (select topic from recording_finalize.server_settings()),
    'pin.messenger.call-recording-available.v1',
    'server_settings works for the worker'
);
select throws_ok(
    'select * from recording_finalize.quarantined_rows()', '42501', null,
    'the worker cannot list quarantined rows (an operator function)'
);
select throws_ok(
    format('select * from recording_finalize.requeue(%L)', :'rec'), '42501', null,
    'the worker cannot requeue (an operator action)'
);
select ok(recording_finalize.try_lock_runner(777), 'try_lock_runner works for the worker');
select ok(recording_finalize.unlock_runner(777), 'unlock_runner works for the worker');
select throws_ok(
    $$select recording_finalize.backoff_delay(1, '1 minute', 2, '15 minutes', 0)$$,
    '42501', null, 'the worker cannot call backoff_delay (claim_due calls it as the owner)'
);
select throws_ok(
    'select * from recording_finalize.settings', '42501', null,
    'the worker cannot read the settings table'
);
select throws_ok(
    $$update recording_finalize.settings set topic = 'pin.billing.invoice-paid.v1'$$,
    '42501', null, 'the worker cannot change the server''s topic'
);

reset role;

-- The operator: the runbook functions, nothing of the cycle.
set local role rfr_pgtap_operator_login;
select is_empty(
    'select * from recording_finalize.quarantined_rows()',
    'quarantined_rows works for the operator'
);
select throws_ok(
    format('select * from recording_finalize.operator_requeue(%L, %L, %L)', :'rec', 'op', 'test'),
    'RF006', null, 'the audited requeue runs for the operator (and refuses a Done row)'
);
select throws_ok(
    format('select * from recording_finalize.requeue(%L)', :'rec'),
    '42501', null, 'the unaudited requeue is the owner''s alone'
);
select is(
    (select backlog from recording_finalize.stats()), 0::bigint,
    'stats works for the operator'
);
select is(
    (select relay_lease_max from recording_finalize.server_settings()), interval '15 minutes',
    'server_settings works for the operator'
);
select throws_ok(
    'select * from recording_finalize.claim_due()', '42501', null,
    'the operator cannot claim'
);
select throws_ok(
    'select * from recording_finalize.relay_claim()', '42501', null,
    'the operator cannot lease outbox rows'
);
select throws_ok(
    $$update recording_finalize.settings set max_attempts_max = 2147483647$$,
    '42501', null, 'the operator cannot change the server''s bounds'
);

reset role;

select is(
    (select status from messenger.call_recordings where id = :'rec'), 'Available',
    'the worker''s verdict reached the table it cannot touch directly'
);
select is(
    (select count(*) from messenger.integration_outbox where published_at is not null),
    2::bigint,
    'and its relay marked both events published'
);
select is(current_user::text, session_user::text, 'back to the owner');

select * from finish();
rollback;
