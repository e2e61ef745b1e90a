-- Releases the single-runner lock at the end of a cycle.

create or replace function recording_finalize.unlock_runner(
    p_lock_key bigint default 5928001741300501
)
returns boolean
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
    select pg_catalog.pg_advisory_unlock(p_lock_key)
$$;

comment on function recording_finalize.unlock_runner(bigint) is
'Releases the single-runner lock taken by try_lock_runner in this session; false (and a '
'server WARNING) when this session did not hold it. Closing the session releases it too. '
'Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.unlock_runner(bigint) from public;
grant execute on function recording_finalize.unlock_runner(bigint) to recording_finalize_worker;
