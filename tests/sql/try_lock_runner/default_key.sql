-- try_lock_runner() without arguments takes the documented key 5928001741300501.
begin;
select plan(4);

select ok(recording_finalize.try_lock_runner(), 'the default lock is taken');
select ok(
    exists (
        select from pg_catalog.pg_locks
        where locktype = 'advisory' and pid = pg_backend_pid()
            and ((classid::bigint << 32) | objid::bigint) = 5928001741300501
    ),
    'it is the advisory lock 5928001741300501 of sql/README.md'
);
select is(
    (select mode from pg_catalog.pg_locks
        where locktype = 'advisory' and pid = pg_backend_pid() and objsubid = 1),
    'ExclusiveLock',
    'a session-level exclusive advisory lock'
);
select ok(recording_finalize.unlock_runner(), 'unlock_runner() releases it');

select * from finish();
rollback;
