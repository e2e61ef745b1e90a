-- Writes one row of the operator audit trail, after checking it names a person and a reason.

create or replace function recording_finalize.record_operator_action(
    p_recording_id uuid,
    p_action text,
    p_operator text,
    p_reason text,
    p_detail jsonb default '{}'
)
returns bigint
language plpgsql
volatile
set search_path = ''
as $$
declare
    v_id bigint;
begin
    if p_operator is null or length(btrim(p_operator)) not between 1 and 128 then
        raise exception using
            errcode = 'RF001',
            message = format('%s: the operator must be 1..128 characters, got %L',
                p_action, p_operator);
    end if;
    if p_reason is null or length(btrim(p_reason)) not between 1 and 512 then
        raise exception using
            errcode = 'RF001',
            message = format('%s: a reason of 1..512 characters is required', p_action),
            hint = 'Say why, for whoever reads the audit trail (recording-finalize explain).';
    end if;
    insert into messenger.recording_finalize_operator_actions (
        recording_id, action_kind, operator_name, reason, detail
    )
    values (p_recording_id, p_action, btrim(p_operator), btrim(p_reason), coalesce(p_detail, '{}'))
    returning id into v_id;
    return v_id;
end
$$;

comment on function recording_finalize.record_operator_action(uuid, text, text, text, jsonb) is
'Internal. Appends one row to messenger.recording_finalize_operator_actions (who, why, when, '
'what, which recording) in the caller''s transaction; returns its id. RF001 when the operator '
'is not 1..128 characters or the reason not 1..512 (after trimming).';

revoke all on function recording_finalize.record_operator_action(uuid, text, text, text, jsonb)
from public;
