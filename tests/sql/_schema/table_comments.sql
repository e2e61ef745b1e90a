-- The contract a DBA sees in \d+: every messenger table, and the columns whose rules are not
-- obvious from their type, carry a COMMENT (migration 0005, issue 9).
begin;
select plan(2);

select is_empty(
    $$select c.relname from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.nspname = 'messenger' and c.relkind = 'r'
        and coalesce(btrim(obj_description(c.oid, 'pg_class')), '') = ''$$,
    'every messenger table has a COMMENT ON TABLE'
);
select is_empty(
    $$select t || '.' || col from (values
        ('call_sessions', 'ended_at'), ('conference_sessions', 'ended_at'),
        ('call_recordings', 'session_kind'), ('call_recordings', 'status'),
        ('call_recordings', 'file_id'), ('call_recordings', 'size_bytes'),
        ('call_recordings', 'duration_seconds'), ('call_recordings', 'format'),
        ('call_recordings', 'failure_reason'), ('call_recordings', 'version'),
        ('recording_finalize_attempts', 'recording_id'),
        ('recording_finalize_attempts', 'session_id'),
        ('recording_finalize_attempts', 'status'), ('recording_finalize_attempts', 'attempts'),
        ('recording_finalize_attempts', 'next_attempt_at'),
        ('recording_finalize_attempts', 'last_error'),
        ('recording_finalize_attempts', 'claim_token'),
        ('recording_finalize_attempts', 'created_at'),
        ('recording_finalize_attempts', 'quarantine_reason'),
        ('integration_outbox', 'message_key'), ('integration_outbox', 'dedupe_key'),
        ('integration_outbox', 'payload'), ('integration_outbox', 'published_at'),
        ('integration_outbox', 'relay_lease_until'),
        ('realtime_outbox', 'reference_id'), ('realtime_outbox', 'dispatched_at')
    ) as v(t, col)
    where coalesce(btrim(col_description(
        ('messenger.' || t)::regclass,
        (select a.attnum from pg_catalog.pg_attribute as a
            where a.attrelid = ('messenger.' || t)::regclass and a.attname = col)
    )), '') = ''$$,
    'the columns with a rule carry a COMMENT ON COLUMN'
);

select * from finish();
rollback;
