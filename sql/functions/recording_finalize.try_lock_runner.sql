-- The single-runner lock: a session advisory lock, taken without waiting.

create or replace function recording_finalize.try_lock_runner(
    p_lock_key bigint default 5928001741300501
)
returns boolean
language sql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
    select pg_catalog.pg_try_advisory_lock(p_lock_key)
$$;

comment on function recording_finalize.try_lock_runner(bigint) is
'Tries the single-runner lock (session-level advisory lock p_lock_key; default '
'5928001741300501) without waiting: true = this session runs the cycle, false = another '
'runner holds it, skip this tick. The lock dies with the session, so hold it on a dedicated, '
'unpooled connection (never behind transaction pooling). Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.try_lock_runner(bigint) from public;
grant execute on function recording_finalize.try_lock_runner(bigint) to recording_finalize_worker;
