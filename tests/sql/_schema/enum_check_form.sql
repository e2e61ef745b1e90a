-- Migration 0015: the enumeration CHECKs of the tables the worker writes for every finalized
-- row are stored as one constant array (`col::text = any ('{...}'::text[])`), not as an array
-- cast element by element (`col in (...)` on a varchar column), which the executor re-plans
-- for every statement at several times the cost (bench/check_cost.psql). A later migration
-- that re-creates one of them with IN (...) makes this fail; the rules themselves are probed on
-- real rows by check_constraints.sql.
begin;
select plan(4);

create temp table enum_checks as
select c.conrelid::regclass::text as tbl, c.conname, c.convalidated,
    pg_catalog.pg_get_constraintdef(c.oid) as def
from pg_catalog.pg_constraint as c
where c.contype = 'c'
    and c.conrelid in (
        'messenger.call_recordings'::regclass,
        'messenger.recording_finalize_attempts'::regclass,
        'messenger.realtime_outbox'::regclass
    )
    and pg_catalog.pg_get_constraintdef(c.oid) like '%= ANY%';

select set_eq(
    'select conname::text from enum_checks',
    $$values
        ('call_recordings_session_kind_ck'), ('call_recordings_media_type_ck'),
        ('call_recordings_trigger_ck'), ('call_recordings_status_ck'),
        ('call_recordings_format_ck'), ('call_recordings_failure_reason_ck'),
        ('recording_finalize_attempts_session_kind_ck'),
        ('recording_finalize_attempts_status_ck'),
        ('recording_finalize_attempts_quarantine_reason_ck'),
        ('realtime_outbox_kind_ck'), ('realtime_outbox_session_kind_ck')$$,
    'the enumeration CHECKs of the per-row tables are the eleven migration 0015 rewrote'
);

select is_empty(
    $$select conname || ': ' || def from enum_checks where def like '%ARRAY[%'$$,
    'each is stored as one constant array, none as an array built and cast per element'
);

select is_empty(
    $$select conname from enum_checks
    where not convalidated and conname <> 'recording_finalize_attempts_quarantine_reason_ck'$$,
    'each is validated (the old rows were checked once more), as before the rewrite'
);

select is(
    (select convalidated from enum_checks
        where conname = 'recording_finalize_attempts_quarantine_reason_ck'),
    false,
    'the quarantine-reason CHECK stays NOT VALID, as migration 0010 added it'
);

select * from finish();
rollback;
