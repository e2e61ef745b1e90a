-- An operator action names a person and says why: checked before anything is written.

create or replace function recording_finalize_internal.check_operator(
    p_action text,
    p_operator text,
    p_reason text
)
returns void
language plpgsql
immutable
set search_path = pg_catalog, pg_temp
as $$
begin
    if p_operator is null or length(btrim(p_operator)) not between 1 and 128 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: %s: the operator must be 1..128 characters, '
                'got %L', p_action, p_operator);
    end if;
    if p_reason is null or length(btrim(p_reason)) not between 1 and 512 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: %s: a reason of 1..512 characters is required',
                p_action),
            hint = 'Say why, for whoever reads the audit trail (recording-finalize explain).';
    end if;
end
$$;

comment on function recording_finalize_internal.check_operator(text, text, text) is
'Internal, pure. RF001 unless p_operator is 1..128 and p_reason 1..512 characters (trimmed): '
'every audited operator action (reschedule, audit_repair, set_pause) calls it first, a dry run '
'included.';

revoke all on function recording_finalize_internal.check_operator(text, text, text) from public;
