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
    select r.id, r.session_kind::text, r.session_id, r.failure_reason::text, r.failed_at
    from messenger.call_recordings as r
    where r.status = 'Failed'
    order by r.failed_at desc, r.id
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
