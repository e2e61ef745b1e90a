-- Who may record a storage incident of which source, and when: shared by open and close.

create or replace function recording_finalize_internal.check_incident_caller(
    p_source text,
    p_at timestamptz,
    p_what text
)
returns void
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
begin
    if p_source is null or p_source !~ '^[a-z][a-z0-9_.-]{0,63}$' then
        raise exception using
            errcode = 'RF016',
            message = format('incident_source_invalid: storage_incident_%s: the source must match '
                '^[a-z][a-z0-9_.-]{0,63}$ (worker, recorders, ops...), got %s', p_what,
                coalesce(quote_literal(p_source), 'NULL'));
    end if;
    if p_at is not null and p_at > now() then
        raise exception using
            errcode = 'RF017',
            message = format('incident_time_invalid: storage_incident_%s: p_at %s is in the '
                'future (now %s)', p_what, recording_finalize_internal.iso_utc(p_at),
                recording_finalize_internal.iso_utc(now()));
    end if;
    -- Deny by default, by membership (not inherited usage: a NOINHERIT login that SET ROLEs is
    -- still what it logged in as). Operators and the owner record any source; the worker only
    -- what it saw itself; the service only what its recorders saw. current_user is the owner
    -- here (the callers are SECURITY DEFINER).
    if pg_catalog.pg_has_role(session_user, 'recording_finalize_operator', 'MEMBER')
        or pg_catalog.pg_has_role(session_user, current_user, 'MEMBER')
        or (p_source = 'worker'
            and pg_catalog.pg_has_role(session_user, 'recording_finalize_worker', 'MEMBER'))
        or (p_source = 'recorders'
            and pg_catalog.pg_has_role(session_user, 'recording_finalize_service', 'MEMBER')) then
        return;
    end if;
    raise exception using
        errcode = 'RF018',
        message = format('incident_source_forbidden: storage_incident_%s: role %s may not record '
            'incidents of source %s', p_what, session_user, p_source),
        hint = 'The worker records source worker, the service source recorders; any other '
            'source needs a login granted recording_finalize_operator.';
end
$$;

comment on function recording_finalize_internal.check_incident_caller(text, timestamptz, text) is
'Internal. RF016 for a source not matching ^[a-z][a-z0-9_.-]{0,63}$, RF017 for p_at in the '
'future, RF018 unless the login (session_user, by membership) is an operator or the owner (any '
'source), the worker (source worker) or the service (source recorders).';

revoke all on function recording_finalize_internal.check_incident_caller(text, timestamptz, text)
from public;
