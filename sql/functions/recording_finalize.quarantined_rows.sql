-- Runbook: the quarantined rows with the error that put them there.

create or replace function recording_finalize.quarantined_rows(p_limit integer default 100)
returns table (
    recording_id uuid,
    session_kind text,
    session_id uuid,
    attempts integer,
    last_error text,
    quarantined_at timestamptz
)
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('quarantined_rows: p_limit must be 1..10000, got %s', p_limit);
    end if;
    return query
    select f.recording_id, f.session_kind::text, f.session_id, f.attempts, f.last_error::text,
        f.updated_at
    from messenger.recording_finalize_attempts as f
    where f.status = 'Quarantined'
    order by f.updated_at, f.recording_id
    limit p_limit;
end
$$;

comment on function recording_finalize.quarantined_rows(integer) is
'Runbook listing: up to p_limit (1..10000, RF001 otherwise) Quarantined rows, oldest first, '
'with attempts and last_error (error class and code, no PII, no URL). Read-only. '
'Operator API (SECURITY DEFINER): not the worker''s.';

-- The worker had it before migration 0004: the runbook listing is the operator's.
revoke all on function recording_finalize.quarantined_rows(integer)
from public, recording_finalize_worker;
grant execute on function recording_finalize.quarantined_rows(integer)
to recording_finalize_operator;
