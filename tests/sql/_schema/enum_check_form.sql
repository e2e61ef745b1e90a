-- The enumeration CHECKs of the product's tables are stored as one constant array
-- (`col::text = any ('{...}'::text[])`), not as an array cast element by element
-- (`col in (...)` on a varchar column), which the executor re-plans for every statement at
-- several times the cost (bench/check_cost.psql). A later migration that re-creates one of
-- them with IN (...) makes this fail; the rules themselves are probed on real rows by
-- check_constraints.sql. The service's CHECKs are the service's (sql/service/schema.sql).
begin;
select plan(3);

create temp table enum_checks as
select c.conrelid::regclass::text as tbl, c.conname::text as conname,
    pg_catalog.pg_get_constraintdef(c.oid) as def
from pg_catalog.pg_constraint as c
join pg_catalog.pg_class as t on t.oid = c.conrelid
join pg_catalog.pg_namespace as n on n.oid = t.relnamespace
where c.contype = 'c'
    and (n.nspname like 'recording\_finalize%'
        or c.conrelid = 'messenger.recording_finalize_attempts'::regclass)
    and pg_catalog.pg_get_constraintdef(c.oid) like '%= ANY%';

select set_eq(
    'select conname from enum_checks',
    $$values
        ('recording_finalize_attempts_session_kind_ck'),
        ('recording_finalize_attempts_status_ck'),
        ('recording_finalize_attempts_last_outcome_ck'),
        ('recording_finalize_attempts_quarantine_reason_ck'),
        ('recording_finalize_attempts_opened_by_ck'),
        ('operator_actions_action_kind_ck'),
        ('pause_part_ck'),
        ('file_checksums_kind_ck'),
        ('storage_incidents_kind_ck')$$,
    'the product''s enumeration CHECKs are these nine'
);
select is_empty(
    $$select conname || ': ' || def from enum_checks where def like '%ARRAY[%'$$,
    'each enumeration is stored as one constant array, none as an array cast per element'
);
select is_empty(
    $$select conname || ': ' || def from enum_checks
    where def !~ '::text = ANY \(''\{[A-Za-z_,]+\}''::text\[\]\)'$$,
    'each is written col::text = any(''{...}''::text[])'
);

select * from finish();
rollback;
