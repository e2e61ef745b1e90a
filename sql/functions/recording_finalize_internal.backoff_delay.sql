-- The retry delay after the n-th attempt: capped exponential backoff with proportional jitter.

create or replace function recording_finalize_internal.backoff_delay(
    p_attempts integer,
    p_base interval,
    p_factor double precision,
    p_cap interval,
    p_jitter double precision
)
returns interval
language sql
volatile
parallel restricted
-- No SET clause, so that it is inlined where it is called (claim_due's UPDATE runs it once per
-- claimed row). Its arguments are the stored policy, which set_policy checked when it stored it
-- (check_policy_bounds); attempts >= 1 after the claim's count.
as $$
    select pg_catalog.make_interval(secs =>
        -- Compared in log space, so the exponent is capped before power() runs: base *
        -- factor^(n-1) would overflow double precision (and timestamptz long before) for a
        -- large n.
        case
            when (p_attempts - 1) * pg_catalog.ln(p_factor)
                < pg_catalog.ln(extract(epoch from p_cap)::double precision
                    / extract(epoch from p_base)::double precision)
                then extract(epoch from p_base)::double precision
                    * pg_catalog.power(p_factor, (p_attempts - 1)::double precision)
            else extract(epoch from p_cap)::double precision
        end
        -- Proportional jitter, U(1 - jitter, 1 + jitter); none at all when jitter is 0.
        * case
            when p_jitter > 0 then 1 - p_jitter + 2 * p_jitter * pg_catalog.random()
            else 1
        end)
$$;

comment on function recording_finalize_internal.backoff_delay(
    integer, interval, double precision, interval, double precision
) is
'Internal. delay(n) = min(cap, base * factor^(n-1)) * U(1 - jitter, 1 + jitter), n = attempts '
'after the claim''s increment (>= 1). jitter = 0 makes it exact. The exponent is capped in log '
'space, so any n is safe. The arguments are the stored policy, checked when set_policy stored '
'it (recording_finalize_internal.check_policy_bounds holds the rules); nothing here checks '
'them again. Inlined into the caller''s statement. VOLATILE and PARALLEL RESTRICTED, like the '
'random() it calls; reads no table.';

revoke all on function recording_finalize_internal.backoff_delay(
    integer, interval, double precision, interval, double precision
) from public;
