-- The driver's start-up check: does the server accept this policy? The resolved policy.

create or replace function recording_finalize.check_policy(
    p_policy jsonb default '{}',
    p_relay_batch_size integer default null,
    p_retention interval default null
)
returns jsonb
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_policy recording_finalize_internal.policy := recording_finalize_internal.policy(p_policy);
begin
    -- The relay's batch and the pruner's retention are their calls' own arguments, checked by
    -- the same helpers relay_claim and prune call.
    if p_relay_batch_size is not null then
        perform recording_finalize_internal.check_relay_batch(p_relay_batch_size);
    end if;
    if p_retention is not null then
        perform recording_finalize_internal.check_retention(p_retention);
    end if;
    return pg_catalog.jsonb_build_object(
        'topic', v_policy.topic,
        'max_attempts', v_policy.max_attempts,
        'sla_timeout_seconds', extract(epoch from v_policy.sla_timeout),
        'backoff_base_seconds', extract(epoch from v_policy.backoff_base),
        'backoff_factor', v_policy.backoff_factor,
        'backoff_cap_seconds', extract(epoch from v_policy.backoff_cap),
        'backoff_jitter', v_policy.backoff_jitter,
        'upload_grace_seconds', extract(epoch from v_policy.upload_grace)
    );
end
$$;

comment on function recording_finalize.check_policy(jsonb, integer, interval) is
'The policy every worker call takes (p_policy), resolved and checked exactly as claim_due and '
'apply_outcome do (recording_finalize_internal.policy): keys topic, max_attempts, '
'sla_timeout_seconds, backoff_base_seconds, backoff_factor, backoff_cap_seconds, backoff_jitter, '
'upload_grace_seconds, all optional (the defaults filled in); with p_relay_batch_size and '
'p_retention also the relay''s batch and the pruner''s retention, as relay_claim and prune check '
'them. Returns the resolved policy; raises RF001 (a value the policy''s own rules refuse, an '
'unknown key), RF009 (another topic) or RF010 (outside recording_finalize.settings, naming the '
'bound), each with the key in the error''s COLUMN field. The driver calls it once at start and '
'exits 2 naming the variable. Read-only. Worker and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.check_policy(jsonb, integer, interval) from public;
grant execute on function recording_finalize.check_policy(jsonb, integer, interval)
to recording_finalize_worker, recording_finalize_operator;
