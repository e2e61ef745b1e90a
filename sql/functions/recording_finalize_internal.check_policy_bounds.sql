-- The one place a policy is judged: its own rules, then the server's bounds.

create or replace function recording_finalize_internal.check_policy_bounds(
    p_stored recording_finalize_internal.policy
)
returns void
language plpgsql
stable
set search_path = pg_catalog, pg_temp
-- The bounds are named in the message: the same text whatever the caller's IntervalStyle.
set intervalstyle = 'postgres'
as $$
declare
    v_s recording_finalize.settings;
    v_problem text;
begin
    -- The rules no bound of the server implies (each bound is sane itself: settings_*_ck).
    v_problem := case
        when p_stored.backoff_factor < 1 then 'backoff_factor must be >= 1'
        when p_stored.backoff_cap < p_stored.backoff_base then
            'backoff_cap must be >= backoff_base'
        when p_stored.backoff_jitter < 0 then 'backoff_jitter must be >= 0'
    end;
    if v_problem is not null then
        -- The first word is the policy column: the driver names the RFR_* variable from the
        -- error's COLUMN field (never from the message text).
        raise exception using
            errcode = 'RF001',
            column = split_part(v_problem, ' ', 1),
            message = format('invalid_parameter: %s, got %s', v_problem, p_stored);
    end if;
    select s.* into strict v_s from recording_finalize.settings as s;
    v_problem := case
        when p_stored.max_attempts not between v_s.max_attempts_min and v_s.max_attempts_max then
            format('max_attempts is %s; the server''s bound is %s..%s', p_stored.max_attempts,
                v_s.max_attempts_min, v_s.max_attempts_max)
        when p_stored.sla_timeout not between v_s.sla_timeout_min and v_s.sla_timeout_max then
            format('sla_timeout is %s; the server''s bound is %s..%s', p_stored.sla_timeout,
                v_s.sla_timeout_min, v_s.sla_timeout_max)
        when p_stored.backoff_base not between v_s.backoff_base_min and v_s.backoff_base_max then
            format('backoff_base is %s; the server''s bound is %s..%s', p_stored.backoff_base,
                v_s.backoff_base_min, v_s.backoff_base_max)
        when not p_stored.backoff_factor <= v_s.backoff_factor_max then
            format('backoff_factor is %s; the server''s bound is at most %s',
                p_stored.backoff_factor, v_s.backoff_factor_max)
        when p_stored.backoff_cap > v_s.backoff_cap_max then
            format('backoff_cap is %s; the server''s bound is at most %s', p_stored.backoff_cap,
                v_s.backoff_cap_max)
        when not p_stored.backoff_jitter <= v_s.backoff_jitter_max then
            format('backoff_jitter is %s; the server''s bound is at most %s',
                p_stored.backoff_jitter, v_s.backoff_jitter_max)
        when p_stored.upload_grace not between v_s.upload_grace_min and v_s.upload_grace_max then
            format('upload_grace is %s; the server''s bound is %s..%s', p_stored.upload_grace,
                v_s.upload_grace_min, v_s.upload_grace_max)
    end;
    if v_problem is not null then
        raise exception using
            errcode = 'RF010',
            column = split_part(v_problem, ' ', 1),
            message = 'policy_out_of_bounds: ' || v_problem || ' (recording_finalize.settings)',
            hint = 'Bring the RFR_* setting within the bound, or have the owner change '
                'recording_finalize.settings.';
    end if;
end
$$;

comment on function recording_finalize_internal.check_policy_bounds(
    recording_finalize_internal.policy
) is
'Internal. Judges a policy as set_policy is about to store it: RF001 for a rule of the policy '
'itself (backoff_factor >= 1, backoff_cap >= backoff_base, backoff_jitter >= 0), RF010 for a '
'value outside the bounds of recording_finalize.settings (max attempts, SLA, backoff base, '
'factor, cap and jitter, upload grace), naming the value and the bound; the COLUMN field names '
'the recording_finalize.policy column. The one place of these rules. Read-only.';

revoke all on function recording_finalize_internal.check_policy_bounds(
    recording_finalize_internal.policy
) from public;
