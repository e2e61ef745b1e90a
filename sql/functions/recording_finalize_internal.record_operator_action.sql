-- Writes rows of the operator audit trail, after checking they name a person and a reason.

create or replace function recording_finalize_internal.record_operator_action(
    p_recording_ids uuid[],
    p_action text,
    p_operator text,
    p_reason text,
    p_detail jsonb default '{}'
)
returns integer
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
    v_count integer;
begin
    perform recording_finalize_internal.check_operator(p_action, p_operator, p_reason);
    insert into recording_finalize.operator_actions (
        recording_id, action_kind, operator_name, reason, detail
    )
    select x, p_action, btrim(p_operator), btrim(p_reason), coalesce(p_detail, '{}')
    from unnest(coalesce(p_recording_ids, array[null::uuid])) as x;
    get diagnostics v_count = row_count;
    return v_count;
end
$$;

comment on function recording_finalize_internal.record_operator_action(
    uuid[], text, text, text, jsonb
) is
'Internal. Appends one row per recording of p_recording_ids (one row with recording NULL when it '
'is NULL: an action on the whole worker) to recording_finalize.operator_actions, in the caller''s '
'transaction; returns how many. RF001 through check_operator.';

revoke all on function recording_finalize_internal.record_operator_action(
    uuid[], text, text, text, jsonb
) from public;
