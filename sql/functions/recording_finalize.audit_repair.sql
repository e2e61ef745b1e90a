-- audit --repair: opens a finalize row, due now, for every orphaned recording (and nothing else).

create or replace function recording_finalize.audit_repair(
    p_operator text,
    p_limit integer default 1000
)
returns table (recording_id uuid, session_kind text, session_id uuid)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
set lock_timeout = '100ms'
as $$
#variable_conflict use_column
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy();
    v_ids uuid[];
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: audit_repair: p_limit must be 1..10000, got %s',
                p_limit);
    end if;
    perform recording_finalize_internal.check_operator(
        'repair', p_operator, 'audit --repair: orphaned recording');

    -- The same rows discovery would open, due now and audited. A lifecycle call or the next
    -- discovery may open a row meanwhile: then it is not ours to open (ON CONFLICT).
    with opened as (
        insert into messenger.recording_finalize_attempts as f (
            recording_id, session_kind, session_id, next_attempt_at, opened_by
        )
        select o.recording_id, o.session_kind, o.session_id, now(), 'repair'
        from recording_finalize_internal.orphans(v_policy.sla_timeout) as o
        limit p_limit
        on conflict (recording_id) do nothing
        returning f.recording_id
    )
    select array_agg(x.recording_id order by x.recording_id) into v_ids from opened as x;
    if v_ids is null then
        return;
    end if;
    perform recording_finalize_internal.record_operator_action(
        v_ids, 'repair', p_operator,
        'audit --repair: orphaned recording (session ended past the SLA, no finalize row)',
        jsonb_build_object('slaTimeout', v_policy.sla_timeout::text)
    );
    return query
    select f.recording_id, f.session_kind::text, f.session_id
    from messenger.recording_finalize_attempts as f
    where f.recording_id = any(v_ids)
    order by f.recording_id;
end
$$;

comment on function recording_finalize.audit_repair(text, integer) is
'Opens a finalize row (Pending, due now, opened_by repair) for up to p_limit (1..10000) orphaned '
'recordings (recording_finalize_internal.orphans, the rule discovery uses), one audit row each '
'naming p_operator; nothing else. Returns the recordings it opened rows for. RF001 for a bad '
'limit or operator. The policy: the stored one. Operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.audit_repair(text, integer) from public;
grant execute on function recording_finalize.audit_repair(text, integer)
to recording_finalize_operator;
