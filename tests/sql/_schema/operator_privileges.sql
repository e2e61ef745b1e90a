-- The operator role: EXECUTE on the runbook functions, nothing on any table.
begin;
select plan(4);

create role rfr_pgtap_operator_login login in role recording_finalize_operator;

select set_eq(
    $$select replace(p.oid::regprocedure::text, ', ', ',')
    from pg_catalog.pg_proc as p
    join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
    where n.nspname in ('messenger', 'recording_finalize')
        and has_function_privilege('rfr_pgtap_operator_login', p.oid, 'execute')$$,
    $$values
        ('recording_finalize.explain(uuid,integer,interval,text)'),
        ('recording_finalize.audit(interval,interval,integer,text)'),
        ('recording_finalize.audit_repair(text,interval,integer)'),
        ('recording_finalize.failed_recordings(integer)'),
        ('recording_finalize.claim_preview(integer,integer,interval,text)'),
        ('recording_finalize.operator_requeue(uuid,text,text)'),
        ('recording_finalize.operator_requeue_quarantined(text,text,text,'
            || 'timestamp with time zone,integer,boolean)'),
        ('recording_finalize.operator_retry(uuid,text,text)'),
        ('recording_finalize.set_pause(text,boolean,text,text)'),
        ('recording_finalize.operator_state()'),
        ('recording_finalize.prune(interval,integer,boolean,text)')$$,
    'the operator can execute exactly the toolkit functions'
);
select is_empty(
    $$select c.relname from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.nspname = 'messenger' and c.relkind = 'r'
        and has_table_privilege('rfr_pgtap_operator_login', c.oid,
            'select,insert,update,delete,truncate')$$,
    'the operator has no privilege on any messenger table'
);
select is_empty(
    $$select c.relname from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.nspname = 'messenger' and c.relkind = 'r'
        and c.relname in ('recording_finalize_operator_actions', 'recording_finalize_pause',
            'integration_outbox_pruned')
        and has_table_privilege('recording_finalize_worker', c.oid,
            'select,insert,update,delete,truncate')$$,
    'the worker has no privilege on the toolkit''s tables'
);
set local role rfr_pgtap_operator_login;
select throws_ok('delete from messenger.recording_finalize_operator_actions', '42501', null,
    'the audit trail cannot be rewritten by an operator');
reset role;

select * from finish();
rollback;
