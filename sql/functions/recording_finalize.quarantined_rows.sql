-- Runbook: the quarantined rows with the error that put them there, filtered and oldest first.

create or replace function recording_finalize.quarantined_rows(
    p_limit integer default 100,
    p_reason_code text default null,
    p_since timestamptz default null
)
returns table (
    recording_id uuid,
    session_kind text,
    session_id uuid,
    attempts integer,
    last_error text,
    quarantine_reason text,
    quarantined_at timestamptz
)
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: quarantined_rows: p_limit must be 1..10000, '
                'got %s', p_limit);
    end if;
    -- The reasons are the vocabulary's (declared once, with the table's CHECK tested against it).
    if p_reason_code is not null and p_reason_code not in (
        select v.word from recording_finalize_internal.vocabulary() as v
        where v.kind = 'quarantine_reason') then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: quarantined_rows: unknown quarantine reason code '
                '%L', p_reason_code),
            hint = 'One of ' || (select pg_catalog.string_agg(v.word, ', ')
                from recording_finalize_internal.vocabulary() as v
                where v.kind = 'quarantine_reason') || '.';
    end if;
    return query
    select f.recording_id, f.session_kind::text, f.session_id, f.attempts, f.last_error::text,
        f.quarantine_reason::text, f.updated_at
    from messenger.recording_finalize_attempts as f
    where f.status = 'Quarantined'
        and (p_reason_code is null or f.quarantine_reason = p_reason_code)
        and (p_since is null or f.updated_at >= p_since)
    order by f.updated_at, f.recording_id
    limit p_limit;
end
$$;

comment on function recording_finalize.quarantined_rows(integer, text, timestamptz) is
'Runbook listing: up to p_limit (1..10000) Quarantined rows, oldest first, with attempts, '
'last_error (error class and code, no PII, no URL) and quarantine_reason; only those of '
'p_reason_code and quarantined since p_since when given (RF001 for an unknown code). What the '
'bulk requeue hands to reschedule. Read-only. Operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.quarantined_rows(integer, text, timestamptz)
from public;
grant execute on function recording_finalize.quarantined_rows(integer, text, timestamptz)
to recording_finalize_operator;
