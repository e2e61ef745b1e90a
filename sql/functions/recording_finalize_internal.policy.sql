-- The one policy rule: a caller's policy, checked once against the server's settings.

create or replace function recording_finalize_internal.policy(p_policy jsonb)
returns recording_finalize_internal.policy
language plpgsql
stable
set search_path = pg_catalog, pg_temp
-- The kept policy is text (below): it reads back exactly only in fixed output forms.
set intervalstyle = 'postgres'
set extra_float_digits = 1
as $$
declare
    v_known_keys constant text[] := array['topic', 'max_attempts', 'sla_timeout_seconds',
        'backoff_base_seconds', 'backoff_factor', 'backoff_cap_seconds', 'backoff_jitter',
        'upload_grace_seconds'];
    -- The settings row, and its version (xmin: it changes with every UPDATE of the row).
    v_s record;
    v_p recording_finalize_internal.policy;
    v_key text;
    v_attempts numeric;
    v_sla numeric;
    v_base numeric;
    v_cap numeric;
    v_grace numeric;
    v_factor numeric;
    v_jitter numeric;
    v_problem text;
    v_bound text;
    v_seal text;
    v_kept text;
begin
    select s.*, s.xmin::text as row_version into v_s from recording_finalize.settings as s;
    if not found then
        raise exception using
            errcode = 'P0002',
            message = 'recording_finalize.settings has no row',
            hint = 'Restore its one row as the owner: insert into recording_finalize.settings '
                'default values (then set the topic and bounds).';
    end if;
    if p_policy is null or jsonb_typeof(p_policy) <> 'object' then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: the policy must be a JSON object, got %s',
                coalesce(p_policy::text, 'NULL'));
    end if;
    -- Every call of a worker passes the same policy: one this session checked already, against
    -- this very settings row, is not checked again. The session keeps it in the setting
    -- recording_finalize.checked_policy (a placeholder any login may set, so it is sealed): a
    -- SHA-256 of the settings' policy_seal_key, which no caller can read, the settings row's
    -- version and the policy. A forged or stale one does not match and is checked anew; a
    -- changed bound is a new row version, so the next call checks again.
    v_seal := encode(sha256(convert_to(
        v_s.policy_seal_key::text || ' ' || v_s.row_version || ' ' || p_policy::text, 'UTF8')),
        'hex');
    v_kept := current_setting('recording_finalize.checked_policy', true);
    if v_kept is not null and left(v_kept, 64) = v_seal then
        return substr(v_kept, 66)::recording_finalize_internal.policy;
    end if;

    -- Every key is known, every duration a number of seconds, every count a number: asked of
    -- the whole object in one expression (a call's usual case costs no query); only a policy
    -- that fails it is walked key by key, to name the key.
    if p_policy - v_known_keys <> '{}'::jsonb
        or jsonb_typeof(p_policy -> 'topic') <> 'string'
        or (p_policy - 'topic') @? 'strict $.* ? (@.type() != "number")' then
        for v_key in select k from jsonb_object_keys(p_policy) as k loop
            if v_key <> all (v_known_keys) then
                raise exception using
                    errcode = 'RF001',
                    column = v_key,
                    message = format('invalid_parameter: unknown policy key %s', v_key),
                    hint = 'Known keys: ' || array_to_string(v_known_keys, ', ') || '.';
            end if;
            if jsonb_typeof(p_policy -> v_key)
                <> (case when v_key = 'topic' then 'string' else 'number' end) then
                raise exception using
                    errcode = 'RF001',
                    column = v_key,
                    message = format('invalid_parameter: policy %s must be a %s, got %s', v_key,
                        case when v_key = 'topic' then 'string' else 'number' end,
                        p_policy -> v_key);
            end if;
        end loop;
    end if;

    -- The defaults are the design card's (SPEC section 4); the upload grace defaults to the SLA.
    -- Numbers are read as numeric, which holds any JSON number, and durations rounded to the
    -- microsecond an interval keeps: a value no integer, interval or double precision can hold
    -- (1e400, 1e-400) is refused below with RF001 rather than failing a cast (22003).
    v_p.topic := recording_finalize_internal.topic(p_policy ->> 'topic', v_s.topic);
    v_attempts := coalesce((p_policy -> 'max_attempts')::numeric, 8);
    v_sla := round(coalesce((p_policy -> 'sla_timeout_seconds')::numeric, 1800), 6);
    v_base := round(coalesce((p_policy -> 'backoff_base_seconds')::numeric, 60), 6);
    v_cap := round(coalesce((p_policy -> 'backoff_cap_seconds')::numeric, 900), 6);
    v_grace := round(coalesce((p_policy -> 'upload_grace_seconds')::numeric, v_sla), 6);
    v_factor := round(coalesce((p_policy -> 'backoff_factor')::numeric, 2.0), 15);
    v_jitter := round(coalesce((p_policy -> 'backoff_jitter')::numeric, 0.1), 15);

    -- The policy's own rules (RF001), then the server's bounds (RF010), in one pass each.
    v_problem := case
        when v_attempts <> trunc(v_attempts) or v_attempts not between 1 and 1000000000 then
            'max_attempts must be a whole number in 1..1000000000'
        when v_sla <= 0 or v_sla > 1e9 then 'sla_timeout_seconds must be in (0, 1e9]'
        when v_base <= 0 or v_base > 1e9 then 'backoff_base_seconds must be in (0, 1e9]'
        when v_cap not between v_base and 1e9 then
            'backoff_cap_seconds must be >= backoff_base_seconds (and <= 1e9)'
        when v_grace <= 0 or v_grace > 1e9 then 'upload_grace_seconds must be in (0, 1e9]'
        when v_factor not between 1 and 1e6 then 'backoff_factor must be in [1, 1e6]'
        when v_jitter < 0 or v_jitter >= 1 then 'backoff_jitter must be in [0, 1)'
    end;
    if v_problem is not null then
        -- The rule's first word is the policy key it concerns: the driver reads it from the
        -- error's COLUMN field to name the RFR_* variable (never from the message text).
        raise exception using
            errcode = 'RF001',
            column = split_part(v_problem, ' ', 1),
            message = format('invalid_parameter: %s, got %s', v_problem, p_policy);
    end if;
    v_p.max_attempts := v_attempts::integer;
    v_p.sla_timeout := make_interval(secs => v_sla::double precision);
    v_p.backoff_base := make_interval(secs => v_base::double precision);
    v_p.backoff_cap := make_interval(secs => v_cap::double precision);
    v_p.upload_grace := make_interval(secs => v_grace::double precision);
    v_p.backoff_factor := v_factor::double precision;
    v_p.backoff_jitter := v_jitter::double precision;
    v_p.upload_grace_max := v_s.upload_grace_max;

    v_bound := case
        when v_p.max_attempts not between v_s.max_attempts_min and v_s.max_attempts_max then
            format('max_attempts is %s; the server''s bound is %s..%s', v_p.max_attempts,
                v_s.max_attempts_min, v_s.max_attempts_max)
        when v_p.sla_timeout not between v_s.sla_timeout_min and v_s.sla_timeout_max then
            format('sla_timeout_seconds is %s; the server''s bound is %s..%s', v_p.sla_timeout,
                v_s.sla_timeout_min, v_s.sla_timeout_max)
        when v_p.backoff_base not between v_s.backoff_base_min and v_s.backoff_base_max then
            format('backoff_base_seconds is %s; the server''s bound is %s..%s',
                v_p.backoff_base, v_s.backoff_base_min, v_s.backoff_base_max)
        when v_p.backoff_factor > v_s.backoff_factor_max then
            format('backoff_factor is %s; the server''s bound is at most %s',
                v_p.backoff_factor, v_s.backoff_factor_max)
        when v_p.backoff_cap > v_s.backoff_cap_max then
            format('backoff_cap_seconds is %s; the server''s bound is at most %s',
                v_p.backoff_cap, v_s.backoff_cap_max)
        when v_p.backoff_jitter > v_s.backoff_jitter_max then
            format('backoff_jitter is %s; the server''s bound is at most %s',
                v_p.backoff_jitter, v_s.backoff_jitter_max)
        when v_p.upload_grace not between v_s.upload_grace_min and v_s.upload_grace_max then
            format('upload_grace_seconds is %s; the server''s bound is %s..%s',
                v_p.upload_grace, v_s.upload_grace_min, v_s.upload_grace_max)
    end;
    if v_bound is not null then
        raise exception using
            errcode = 'RF010',
            column = split_part(v_bound, ' ', 1),
            message = 'policy_out_of_bounds: ' || v_bound || ' (recording_finalize.settings)',
            hint = 'Bring the RFR_* setting within the bound, or have the owner change '
                'recording_finalize.settings.';
    end if;
    -- Kept for the session (is_local false); a transaction that fails takes it back with it.
    perform set_config('recording_finalize.checked_policy', v_seal || ' ' || v_p::text, false);
    return v_p;
end
$$;

comment on function recording_finalize_internal.policy(jsonb) is
'Internal. The one place a policy is checked: reads recording_finalize.settings once and turns a '
'caller''s JSON policy {topic, max_attempts, sla_timeout_seconds, backoff_base_seconds, '
'backoff_factor, backoff_cap_seconds, backoff_jitter, upload_grace_seconds} (every key optional; '
'defaults 8 attempts, 30 min SLA, backoff 60 s x 2 up to 900 s with 10 % jitter, grace = SLA) '
'into recording_finalize_internal.policy. RF001 for an unknown key, a value of the wrong type or '
'one the policy''s own rules refuse (max attempts a whole number >= 1, SLA, base and grace > 0, '
'factor >= 1, cap >= base, jitter in [0, 1), nothing beyond 1e9 seconds; any JSON number, '
'however large or small, is refused so and never by a cast error; durations are kept to the '
'microsecond); RF009 for a topic other than the server''s; RF010 for a value outside the '
'server''s bounds, naming it, its value and the bound. Each error names the policy key in its '
'COLUMN field (topic for RF009). A new policy key is a new JSON key: no '
'signature changes. A policy the session checked against the same settings row version is '
'kept and not checked again (the session setting recording_finalize.checked_policy, sealed with '
'SHA-256 of settings.policy_seal_key, which no caller can read; a forged or stale one is '
'checked anew). Reads no table but settings; its one write is that session setting.';

revoke all on function recording_finalize_internal.policy(jsonb) from public;
