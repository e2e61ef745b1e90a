-- Least privilege: the worker's login role may only EXECUTE the API functions.
-- The role is cluster-wide, so it is created only when missing.

set local lock_timeout = '5s';
set local statement_timeout = '5min';

do $$
begin
    if not exists (select from pg_catalog.pg_roles where rolname = 'recording_finalize_worker') then
        create role recording_finalize_worker nologin;
    end if;
end
$$;

comment on role recording_finalize_worker is
'recording-finalize-retry worker: EXECUTE on the recording_finalize API functions, nothing else. '
'Grant it to the login role the sidecar uses.';

-- The tables are private to their owner; the API functions are SECURITY DEFINER.
revoke all on schema messenger from public;
revoke all on all tables in schema messenger from public;
revoke all on schema recording_finalize from public;
grant usage on schema recording_finalize to recording_finalize_worker;

-- New functions are not executable by PUBLIC; each function file grants what it exposes.
alter default privileges in schema recording_finalize revoke execute on functions from public;
alter default privileges in schema messenger revoke execute on functions from public;
