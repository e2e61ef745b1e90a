-- The one rule for the policy: every argument the worker passes lies within the server's bounds.

create or replace function recording_finalize.check_policy(
    p_max_attempts integer,
    p_sla_timeout interval default null,
    p_backoff_base interval default null,
    p_backoff_factor double precision default null,
    p_backoff_cap interval default null,
    p_backoff_jitter double precision default null
)
returns void
language plpgsql
stable
set search_path = ''
as $$
declare
    v_s recording_finalize.settings%rowtype;
    v_argument text;
    v_value text;
    v_bound text;
begin
    select s.* into v_s from recording_finalize.settings as s;
    if not found then
        raise exception using
            errcode = 'P0002',
            message = 'recording_finalize.settings has no row',
            hint = 'Restore its one row as the owner: insert into recording_finalize.settings '
                'default values (then set the topic and bounds).';
    end if;

    -- NULL and values the caller's own rules refuse (RF001: max attempts < 1, SLA or base <= 0,
    -- factor < 1 or not finite, jitter outside [0, 1)) are left to those rules.
    if p_max_attempts >= 1 and p_max_attempts > v_s.max_attempts_max then
        v_argument := 'p_max_attempts';
        v_value := p_max_attempts::text;
        v_bound := format('at most %s', v_s.max_attempts_max);
    elsif p_sla_timeout > interval '0'
        and p_sla_timeout not between v_s.sla_timeout_min and v_s.sla_timeout_max then
        v_argument := 'p_sla_timeout';
        v_value := p_sla_timeout::text;
        v_bound := format('%s..%s', v_s.sla_timeout_min, v_s.sla_timeout_max);
    elsif p_backoff_base > interval '0'
        and p_backoff_base not between v_s.backoff_base_min and v_s.backoff_base_max then
        v_argument := 'p_backoff_base';
        v_value := p_backoff_base::text;
        v_bound := format('%s..%s', v_s.backoff_base_min, v_s.backoff_base_max);
    elsif p_backoff_factor >= 1 and p_backoff_factor < 'Infinity'::double precision
        and p_backoff_factor > v_s.backoff_factor_max then
        v_argument := 'p_backoff_factor';
        v_value := p_backoff_factor::text;
        v_bound := format('at most %s', v_s.backoff_factor_max);
    elsif p_backoff_cap > v_s.backoff_cap_max then
        v_argument := 'p_backoff_cap';
        v_value := p_backoff_cap::text;
        v_bound := format('at most %s', v_s.backoff_cap_max);
    elsif p_backoff_jitter >= 0 and p_backoff_jitter < 1
        and p_backoff_jitter > v_s.backoff_jitter_max then
        v_argument := 'p_backoff_jitter';
        v_value := p_backoff_jitter::text;
        v_bound := format('at most %s', v_s.backoff_jitter_max);
    end if;

    if v_argument is not null then
        raise exception using
            errcode = 'RF010',
            message = format(
                'policy_out_of_bounds: %s is %s; the server''s bound '
                '(recording_finalize.settings) is %s', v_argument, v_value, v_bound
            ),
            hint = 'Bring the RFR_* setting within the bound, or have the owner change '
                'recording_finalize.settings.';
    end if;
end
$$;

comment on function recording_finalize.check_policy(
    integer, interval, interval, double precision, interval, double precision
) is
'Internal. Raises RF010 (policy_out_of_bounds) naming the argument, its value and the server''s '
'bound (recording_finalize.settings) when a policy argument is outside it: max attempts above '
'max_attempts_max, SLA or backoff base outside [min, max], factor, cap or jitter above their '
'max. NULL and values the caller''s own RF001 rules refuse are left to those rules. Called '
'first by claim_due and apply_outcome, before any row is touched. Read-only.';

revoke all on function recording_finalize.check_policy(
    integer, interval, interval, double precision, interval, double precision
) from public;
