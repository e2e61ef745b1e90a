-- The operator role: EXECUTE on the runbook functions, nothing on any table.
begin;
select plan(3);

create role rfr_pgtap_operator_login login in role recording_finalize_operator;

-- Which functions it may execute: _schema/privileges.sql (operator_api).
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
