-- check_adapter: a NOT NULL column without a default that a port's write leaves out (here one
-- the service added to realtime_outbox) is found by the rehearsal, before any row is touched:
-- an error row on the enqueue_realtime port naming 23502 and the column, with the fix. The
-- rehearsal leaves no trace: the recording it rehearsed on is unchanged, no realtime row.
-- (The service's table is changed inside this test's transaction only: the rollback undoes it.)
begin;
select plan(5);

select tests.clean_slate();
select tests.make_stuck() as active \gset
alter table messenger.realtime_outbox add column tenant_id uuid not null;
create temp table recording_before as
select * from messenger.call_recordings where id = :'active';

create temp table findings as select * from recording_finalize.check_adapter();
select results_eq(
    $$select severity, port from findings where severity = 'error'$$,
    $$values ('error', 'recording_finalize_adapter.enqueue_realtime')$$,
    'one error, on the enqueue_realtime port (the transitions rehearse clean)'
);
select alike(
    (select problem from findings where severity = 'error'),
    '%23502%tenant_id%',
    'the problem names the SQLSTATE and the column'
);
select is(
    (select fix from findings where severity = 'error'),
    'give the column a default, or set it in the port',
    'and the fix'
);
select set_eq(
    format('select * from messenger.call_recordings where id = %L', :'active'),
    'select * from recording_before',
    'the rehearsal left the recording as it was (status, version, metadata)'
);
select is(
    (select count(*) from messenger.realtime_outbox), 0::bigint,
    'and no realtime row'
);

select * from finish();
rollback;
