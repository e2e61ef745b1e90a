-- Who may record an incident of which source, and when: shared by storage_incident_open/close.

create or replace function recording_finalize.storage_incident_check_caller(
    p_source text,
    p_at timestamptz,
    p_what text
)
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
    if p_source is null or p_source !~ '^[a-z][a-z0-9_.-]{0,63}$' then
        raise exception using
            errcode = 'RF016',
            message = format('storage_incident_%s: the source must match ^[a-z][a-z0-9_.-]{0,63}$ '
                '(worker, recorder, ops...), got %s', p_what, coalesce(quote_literal(p_source),
                'NULL'));
    end if;
    if p_at is not null and p_at > now() then
        raise exception using
            errcode = 'RF017',
            message = format('storage_incident_%s: p_at %s is in the future (now %s)', p_what,
                recording_finalize.iso_utc(p_at), recording_finalize.iso_utc(now()));
    end if;
    -- The worker records only what it saw itself; operators and the owner record any source.
    if p_source <> 'worker'
        and pg_catalog.pg_has_role(session_user, 'recording_finalize_worker', 'USAGE')
        and not pg_catalog.pg_has_role(session_user, 'recording_finalize_operator', 'USAGE') then
        raise exception using
            errcode = 'RF018',
            message = format('storage_incident_%s: role %s may only record incidents of source '
                'worker, not %s', p_what, session_user, p_source),
            hint = 'log in as a role granted recording_finalize_operator';
    end if;
end
$$;

comment on function recording_finalize.storage_incident_check_caller(text, timestamptz, text) is
'Internal (no grant): the argument and caller checks of storage_incident_open/close. RF016 '
'source not ^[a-z][a-z0-9_.-]{0,63}$; RF017 p_at in the future; RF018 a login role that is '
'granted recording_finalize_worker but not recording_finalize_operator names a source other '
'than worker. Read-only.';

revoke all on function recording_finalize.storage_incident_check_caller(text, timestamptz, text)
from public;
