-- audit --repair: opens a finalize row, due now, for every orphaned recording (and nothing else).

create or replace function recording_finalize.audit_repair(
    p_operator text,
    p_sla_timeout interval default '30 minutes',
    p_limit integer default 1000
)
returns table (recording_id uuid, session_kind text, session_id uuid)
language plpgsql
volatile
security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
    v_id uuid;
begin
    if p_sla_timeout is null or p_sla_timeout <= interval '0'
        or p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('audit_repair: p_sla_timeout must be > 0 and p_limit 1..10000, '
                'got %s and %s', p_sla_timeout, p_limit);
    end if;
    -- The operator is checked before anything is written.
    if p_operator is null or length(btrim(p_operator)) not between 1 and 128 then
        raise exception using
            errcode = 'RF001',
            message = format('repair: the operator must be 1..128 characters, got %L',
                p_operator);
    end if;

    for recording_id, session_kind, session_id in
        select r.id, r.session_kind::text, r.session_id from messenger.call_recordings as r
        left join messenger.call_sessions as c
            on r.session_kind = 'Direct' and c.id = r.session_id
        left join messenger.conference_sessions as k
            on r.session_kind = 'Conference' and k.id = r.session_id
        where r.status in ('Pending', 'Recording', 'Uploading')
            and coalesce(c.ended_at, k.ended_at) + p_sla_timeout <= now()
            and not exists (select from messenger.recording_finalize_attempts as f
                where f.recording_id = r.id)
        order by r.id
        limit p_limit
    loop
        -- A lifecycle call may open the row meanwhile: then it is not ours to open.
        insert into messenger.recording_finalize_attempts as f (
            recording_id, session_kind, session_id, next_attempt_at
        )
        values (recording_id, session_kind, session_id, now())
        on conflict (recording_id) do nothing
        returning f.recording_id into v_id;
        continue when v_id is null;
        perform recording_finalize.record_operator_action(
            recording_id, 'repair', p_operator,
            'audit --repair: orphaned recording (session ended past the SLA, no finalize row)',
            jsonb_build_object('slaTimeout', p_sla_timeout::text)
        );
        v_id := null;
        return next;
    end loop;
end
$$;

comment on function recording_finalize.audit_repair(text, interval, integer) is
'audit --repair: for up to p_limit (1..10000) orphaned recordings (non-terminal, session ended '
'more than p_sla_timeout ago, no finalize row) opens a Pending finalize row due now and writes '
'one operator audit row (action repair) each; returns the recordings it opened. Touches no '
'other row. Idempotent: a row opened meanwhile by a lifecycle call is left alone (ON '
'CONFLICT). RF001 for bad arguments or an empty operator. Operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.audit_repair(text, interval, integer) from public;
grant execute on function recording_finalize.audit_repair(text, interval, integer)
to recording_finalize_operator;
