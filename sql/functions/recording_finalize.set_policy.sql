-- The worker's start-up call: stores its retry policy once, within the server's bounds.

create or replace function recording_finalize.set_policy(
    p_max_attempts integer default null,
    p_sla_timeout interval default null,
    p_backoff_base interval default null,
    p_backoff_factor double precision default null,
    p_backoff_cap interval default null,
    p_backoff_jitter double precision default null,
    p_upload_grace interval default null,
    p_topic text default null,
    p_relay_batch_size integer default null,
    p_retention interval default null
)
returns jsonb
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
-- The replaced row is shown with its intervals as everyone reads them (00:15:00).
set intervalstyle = 'postgres'
as $$
declare
    v_before recording_finalize.policy;
    v_after recording_finalize.policy;
    v_p recording_finalize_internal.policy;
begin
    -- The worker's other server-bounded values, checked where their own calls check them, so
    -- that one start-up call refuses whatever the server would refuse later.
    perform recording_finalize_internal.topic(p_topic);
    if p_relay_batch_size is not null then
        perform recording_finalize_internal.check_relay_batch(p_relay_batch_size);
    end if;
    if p_retention is not null then
        perform recording_finalize_internal.check_retention(p_retention);
    end if;
    -- Runners starting at once queue here: the last one wins, and learns what it replaced.
    select p.* into v_before from recording_finalize.policy as p for no key update;
    if not found then
        raise exception using
            errcode = 'P0002',
            message = 'recording_finalize.policy has no row',
            hint = 'Restore it as the owner: insert into recording_finalize.policy default values.';
    end if;
    -- An argument left NULL takes the column's default: EXCLUDED is a row of defaults.
    insert into recording_finalize.policy as p (singleton) values (true)
    on conflict (singleton) do update set
        max_attempts = coalesce(p_max_attempts, excluded.max_attempts),
        sla_timeout = coalesce(p_sla_timeout, excluded.sla_timeout),
        backoff_base = coalesce(p_backoff_base, excluded.backoff_base),
        backoff_factor = coalesce(p_backoff_factor, excluded.backoff_factor),
        backoff_cap = coalesce(p_backoff_cap, excluded.backoff_cap),
        backoff_jitter = coalesce(p_backoff_jitter, excluded.backoff_jitter),
        upload_grace = coalesce(p_upload_grace, excluded.upload_grace),
        set_by = excluded.set_by,
        set_at = excluded.set_at
    returning p.* into v_after;
    -- Judged as stored; a refusal undoes the write with the rest of the call.
    v_p := recording_finalize_internal.policy();
    perform recording_finalize_internal.check_policy_bounds(v_p);
    return pg_catalog.jsonb_build_object(
        'topic', v_p.topic,
        'max_attempts', v_p.max_attempts,
        'sla_timeout_seconds', extract(epoch from v_p.sla_timeout),
        'backoff_base_seconds', extract(epoch from v_p.backoff_base),
        'backoff_factor', v_p.backoff_factor,
        'backoff_cap_seconds', extract(epoch from v_p.backoff_cap),
        'backoff_jitter', v_p.backoff_jitter,
        'upload_grace_seconds', extract(epoch from v_p.upload_grace),
        'replaced', case when (to_jsonb(v_before) - 'set_by' - 'set_at')
            is distinct from (to_jsonb(v_after) - 'set_by' - 'set_at')
            then to_jsonb(v_before) - 'singleton' end
    );
end
$$;

comment on function recording_finalize.set_policy(
    integer, interval, interval, double precision, interval, double precision, interval, text,
    integer, interval
) is
'Stores the retry policy every function reads (recording_finalize.policy): max attempts, SLA, '
'backoff base, factor, cap and jitter, upload grace (NULL: the SLA). An argument left NULL takes '
'the column''s default (the defaults live there only). p_topic, p_relay_batch_size and '
'p_retention are only checked, as their own calls check them (RF009, RF001/RF010). Returns the '
'policy as stored and resolved (topic, max_attempts, *_seconds, backoff_factor, backoff_jitter) '
'with replaced: the previous row when its values differed (another runner''s), else null. '
'Raises RF001 (backoff_factor < 1, cap < base, jitter < 0) or RF010 (outside recording_finalize.'
'settings), naming the policy column in the COLUMN field; nothing is written then. Locks the '
'policy row until commit: runners starting at once take turns, the last one wins. The worker '
'calls it once at start; worker API (SECURITY DEFINER), no table privilege needed.';

revoke all on function recording_finalize.set_policy(
    integer, interval, interval, double precision, interval, double precision, interval, text,
    integer, interval
) from public;
grant execute on function recording_finalize.set_policy(
    integer, interval, interval, double precision, interval, double precision, interval, text,
    integer, interval
) to recording_finalize_worker;
