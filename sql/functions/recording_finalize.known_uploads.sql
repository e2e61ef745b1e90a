-- The recordings whose binary is known to be in the file storage: the newest Available ones.

create or replace function recording_finalize.known_uploads(
    -- NULL: as many as the key-layout rule asks about (a default expression would run with the
    -- caller's privileges, which do not reach recording_finalize_internal).
    p_limit integer default null
)
returns table (recording_id uuid, session_kind text, session_id uuid)
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    v_limit integer := coalesce(p_limit, recording_finalize_internal.key_layout_evidence());
begin
    if v_limit not between 1 and 100 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: known_uploads: p_limit must be 1..100, got %s',
                p_limit);
    end if;
    -- Newest first, and only of the last week: an older binary may be gone by the storage's
    -- own retention, and must not make a right configuration look wrong.
    return query
    select r.id, r.session_kind, r.session_id
    from recording_finalize_adapter.recordings as r
    where r.status = 'Available' and r.available_at > now() - interval '7 days'
    order by r.available_at desc, r.id desc
    limit v_limit;
end
$$;

comment on function recording_finalize.known_uploads(integer) is
'Up to p_limit (1..100, RF001; NULL, the default: as many as the key-layout rule asks '
'about, recording_finalize_internal.key_layout_evidence) recordings that became Available in '
'the last 7 days, newest '
'first, through the adapter''s recordings view: their binaries are known to be in the file '
'storage. When a cycle sees a 404 before it found any object, the worker HEADs their keys and '
'passes what they answered to apply_outcome: when all answer 404, outcome_decision takes the '
'bucket, prefix or key template as wrong, and the cycle stops as a configuration error instead '
'of failing recordings. No row: nothing to confirm with (a new system). '
'Read-only. Worker and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.known_uploads(integer) from public;
grant execute on function recording_finalize.known_uploads(integer)
to recording_finalize_worker, recording_finalize_operator;
