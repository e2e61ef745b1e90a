-- The pause switch: pauses or resumes reconcile, relay or both, for every runner at once.

create or replace function recording_finalize.set_pause(
    p_part text,
    p_paused boolean,
    p_operator text,
    p_reason text default null
)
returns table (part text, paused boolean, paused_at timestamptz, paused_by text, reason text)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    v_parts text[];
    v_reason text := nullif(btrim(p_reason), '');
begin
    if p_part is null or p_part not in ('reconcile', 'relay', 'all') then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: pause: the part must be reconcile, relay or '
                'all, got %L', p_part);
    end if;
    if p_paused is null then
        raise exception using
            errcode = 'RF001', message = 'invalid_parameter: pause: p_paused must be set';
    end if;
    -- Every operator action states why (the CLI passes its own text when --reason is omitted).
    if v_reason is null then
        raise exception using
            errcode = 'RF001',
            message = 'invalid_parameter: pause: p_reason must be given (a pause or resume is '
                'an audited action)';
    end if;
    v_parts := case when p_part = 'all' then array['reconcile', 'relay'] else array[p_part] end;
    perform recording_finalize_internal.record_operator_action(
        null, case when p_paused then 'pause' else 'resume' end, p_operator, v_reason,
        jsonb_build_object('part', p_part)
    );
    if p_paused then
        insert into recording_finalize.pause as s (part, paused_by, reason)
        select x, btrim(p_operator), v_reason from unnest(v_parts) as x
        on conflict (part) do update
        -- A re-pause is a new pause: its time and login go with its name and reason.
        set paused_by = excluded.paused_by, reason = excluded.reason, paused_at = now(),
            login_role = session_user;
    else
        delete from recording_finalize.pause as s where s.part = any(v_parts);
    end if;
    return query
    select x, s.part is not null, s.paused_at, s.paused_by, s.reason
    from unnest(array['reconcile', 'relay']) as x
    left join recording_finalize.pause as s on s.part = x
    order by x;
end
$$;

comment on function recording_finalize.set_pause(text, boolean, text, text) is
'Pause switch: p_paused true pauses p_part (reconcile, relay or all) for every runner from its '
'next cycle, false resumes it; idempotent (pausing a paused part again records the new '
'paused_at, name, login_role = session_user and reason). Writes one operator audit row '
'(pause/resume, with the login). Returns the state of both parts after the change. RF001 for '
'an unknown part, an empty operator or a missing reason. '
'Operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.set_pause(text, boolean, text, text) from public;
grant execute on function recording_finalize.set_pause(text, boolean, text, text)
to recording_finalize_operator;
