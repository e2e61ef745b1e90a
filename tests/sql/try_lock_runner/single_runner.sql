-- try_lock_runner/unlock_runner: one runner at a time across sessions, and never a wait.
begin;
select plan(10);

set local client_min_messages = error;  -- unlock_runner of a lock not held warns

select is(dblink_connect('rfr_other', tests.conninfo()), 'OK', 'second runner connected');

select ok(recording_finalize.try_lock_runner(424242), 'the first runner gets the lock');
select is(
    (select locked from dblink('rfr_other', 'select recording_finalize.try_lock_runner(424242)')
        as t(locked boolean)),
    false,
    'a second runner is refused at once (no wait)'
);
select ok(
    recording_finalize.try_lock_runner(424243),
    'another lock key is independent (the key is the caller''s: the driver passes its own)'
);
select ok(recording_finalize.unlock_runner(424242), 'the first runner releases the lock');
select is(
    (select locked from dblink('rfr_other', 'select recording_finalize.try_lock_runner(424242)')
        as t(locked boolean)),
    true,
    'then the second runner gets it'
);
select is(
    recording_finalize.try_lock_runner(424242), false,
    'and the first one is refused in turn'
);
select is(
    recording_finalize.unlock_runner(424242), false,
    'unlocking a lock this session does not hold returns false'
);
select ok(recording_finalize.unlock_runner(424243), 'release the other key');
select is(dblink_disconnect('rfr_other'), 'OK', 'closing a session releases its lock');

select * from finish();
rollback;
