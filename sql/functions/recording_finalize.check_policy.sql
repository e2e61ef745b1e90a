-- The driver's start-up check: is this policy within the server's bounds? The resolved policy.

create or replace function recording_finalize.check_policy(p_policy jsonb default '{}')
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
    select pg_catalog.jsonb_build_object(
        'topic', p.topic,
        'max_attempts', p.max_attempts,
        'sla_timeout_seconds', extract(epoch from p.sla_timeout),
        'backoff_base_seconds', extract(epoch from p.backoff_base),
        'backoff_factor', p.backoff_factor,
        'backoff_cap_seconds', extract(epoch from p.backoff_cap),
        'backoff_jitter', p.backoff_jitter,
        'upload_grace_seconds', extract(epoch from p.upload_grace)
    )
    from recording_finalize_internal.policy(p_policy) as p
$$;

comment on function recording_finalize.check_policy(jsonb) is
'The policy every worker call takes (p_policy), resolved and checked exactly as claim_due and '
'apply_outcome do (recording_finalize_internal.policy): keys topic, max_attempts, '
'sla_timeout_seconds, backoff_base_seconds, backoff_factor, backoff_cap_seconds, backoff_jitter, '
'upload_grace_seconds, all optional (the defaults filled in). Returns the resolved policy; '
'raises RF001 (a value the policy''s own rules refuse, an unknown key), RF009 (another topic) or '
'RF010 (outside recording_finalize.settings, naming the bound). The driver calls it once at '
'start and exits 2 with the message. Read-only. Worker and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.check_policy(jsonb) from public;
grant execute on function recording_finalize.check_policy(jsonb)
to recording_finalize_worker, recording_finalize_operator;
