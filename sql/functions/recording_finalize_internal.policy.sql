-- The one reader of the policy: the stored policy with the server's topic and grace cap.

create or replace function recording_finalize_internal.policy()
returns recording_finalize_internal.policy
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
    v_p recording_finalize_internal.policy;
begin
    select s.topic, p.max_attempts, p.sla_timeout, p.backoff_base, p.backoff_factor,
        p.backoff_cap, p.backoff_jitter, coalesce(p.upload_grace, p.sla_timeout),
        s.upload_grace_max
    into v_p
    from recording_finalize.policy as p
    cross join recording_finalize.settings as s;
    if not found then
        raise exception using
            errcode = 'P0002',
            message = 'recording_finalize.policy or recording_finalize.settings has no row',
            hint = 'Restore the missing row as the owner: insert into recording_finalize.policy '
                '(or .settings) default values, then restart the worker (it sets the policy).';
    end if;
    return v_p;
end
$$;

comment on function recording_finalize_internal.policy() is
'Internal. The policy every function works with: the one row of recording_finalize.policy (the '
'worker''s, set by set_policy at its start; upload grace NULL resolved to the SLA) with the '
'server''s topic and upload grace cap from recording_finalize.settings. No arguments, no '
'checks (set_policy checked the row when it wrote it). P0002 when either row is missing. '
'Read-only; takes no row lock.';

revoke all on function recording_finalize_internal.policy() from public;
