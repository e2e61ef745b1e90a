-- The retry delay after the n-th attempt: capped exponential backoff with proportional jitter.

create or replace function recording_finalize_internal.backoff_delay(
    p_attempts integer,
    p_base interval,
    p_factor double precision,
    p_cap interval,
    p_jitter double precision
)
returns interval
language plpgsql
volatile
parallel restricted
set search_path = ''
as $$
declare
    v_base_s double precision := extract(epoch from p_base);
    v_cap_s double precision := extract(epoch from p_cap);
    v_exponent integer;
    v_delay_s double precision;
begin
    if p_attempts is null or p_attempts < 1 then
        raise exception using
            errcode = 'RF001',
            message = format('backoff_delay: p_attempts must be >= 1, got %s', p_attempts);
    end if;
    if v_base_s is null or v_base_s <= 0 then
        raise exception using
            errcode = 'RF001',
            message = format('backoff_delay: p_base must be > 0, got %s', p_base);
    end if;
    -- PostgreSQL orders NaN above Infinity, so one comparison refuses both.
    if p_factor is null or p_factor < 1 or p_factor >= 'Infinity'::double precision then
        raise exception using
            errcode = 'RF001',
            message = format('backoff_delay: p_factor must be a finite number >= 1, got %s', p_factor);
    end if;
    if v_cap_s is null or v_cap_s < v_base_s then
        raise exception using
            errcode = 'RF001',
            message = format('backoff_delay: p_cap must be >= p_base (%s), got %s', p_base, p_cap);
    end if;
    if p_jitter is null or p_jitter < 0 or p_jitter >= 1 then
        raise exception using
            errcode = 'RF001',
            message = format('backoff_delay: p_jitter must be in [0, 1), got %s', p_jitter);
    end if;

    -- Only now: p_attempts - 1 would overflow for the smallest integer before the check above.
    v_exponent := p_attempts - 1;

    -- Compare in log space so the exponent is capped before power() runs: base * factor^(n-1)
    -- would overflow double precision (and timestamptz long before) for large n.
    if v_exponent * ln(p_factor) < ln(v_cap_s / v_base_s) then
        v_delay_s := v_base_s * power(p_factor, v_exponent);
    else
        v_delay_s := v_cap_s;
    end if;

    if p_jitter > 0 then
        v_delay_s := v_delay_s * (1 - p_jitter + 2 * p_jitter * random());
    end if;

    return make_interval(secs => v_delay_s);
end
$$;

comment on function recording_finalize_internal.backoff_delay(
    integer, interval, double precision, interval, double precision
) is
'Internal. delay(n) = min(cap, base * factor^(n-1)) * U(1 - jitter, 1 + jitter), n = attempts after the '
'claim''s increment (>= 1). jitter = 0 makes it exact. The exponent is capped in log space, so '
'any n is safe. Raises RF001 when attempts < 1, base <= 0, factor < 1 (or not finite), '
'cap < base or jitter outside [0, 1). '
'VOLATILE and PARALLEL RESTRICTED, like the random() it calls; reads no table.';

revoke all on function recording_finalize_internal.backoff_delay(
    integer, interval, double precision, interval, double precision
) from public;
