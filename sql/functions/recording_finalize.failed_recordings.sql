-- audit: the most recent Failed recordings, whose binaries the driver looks for in S3.

create or replace function recording_finalize.failed_recordings(p_limit integer default 1000)
returns table (
    recording_id uuid,
    session_kind text,
    session_id uuid,
    failure_reason text,
    failed_at timestamptz
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
            message = format('invalid_parameter: failed_recordings: p_limit must be 1..10000, '
                'got %s', p_limit);
    end if;
    return query
    -- failed_at is not a port: the time the product's own row settled stands for it (NULL for a
    -- recording the service failed itself).
    select r.id, r.session_kind, r.session_id, r.failure_reason,
        case when f.status = 'Done' then f.updated_at end
    from recording_finalize_adapter.recordings as r
    left join messenger.recording_finalize_attempts as f on f.recording_id = r.id
    where r.status = 'Failed'
    order by f.updated_at desc nulls last, r.id
    limit p_limit;
end
$$;

comment on function recording_finalize.failed_recordings(integer) is
'Read-only. The p_limit (1..10000, RF001 otherwise) most recently Failed recordings, newest '
'first: audit HEADs each one''s object, and a binary found there is an orphaned binary for a '
'human to look at (Failed is terminal). Operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.failed_recordings(integer) from public;
grant execute on function recording_finalize.failed_recordings(integer)
to recording_finalize_operator;
