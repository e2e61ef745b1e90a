-- check_adapter on the reference adapter: nothing to report, and the rehearsal of the three
-- write ports (make_failed, make_available, enqueue_realtime) leaves no trace: the recording it
-- rehearsed on is as it was, no realtime row, nothing written anywhere. Callable by the worker
-- and the operator; without an active recording the writes are not rehearsed (a notice each).
begin;
select plan(9);

select tests.clean_slate();
create role rfr_pgtap_worker_login login in role recording_finalize_worker;
create role rfr_pgtap_operator_login login in role recording_finalize_operator;
select tests.make_recording('Direct', tests.make_session(), 'Available') as done \gset
select tests.make_stuck() as active \gset
create temp table before as select tests.snapshot() as fingerprint;

set local role rfr_pgtap_worker_login;
create temp table findings as select * from recording_finalize.check_adapter();
reset role;
select is_empty(
    $$select severity || ' ' || port || ': ' || problem from findings
    where severity in ('error', 'notice')$$,
    'as the worker: no error on the reference adapter, every write port rehearsed'
);
select is(tests.snapshot(), (select fingerprint from before),
    'the rehearsal left no trace: every row of the service and the product as it was');
select is(
    (select count(*) from messenger.realtime_outbox), 0::bigint,
    'no realtime row'
);
select results_eq(
    format($$select status, version, failure_reason from messenger.call_recordings
        where id = %L$$, :'active'),
    $$values ('Uploading'::varchar, 1, null::varchar)$$,
    'the recording it rehearsed on is unchanged'
);
set local role rfr_pgtap_operator_login;
select lives_ok('select * from recording_finalize.check_adapter(false)',
    'the operator may call it too');
reset role;

-- No active recording: nothing to rehearse on, said so.
delete from messenger.recording_finalize_attempts;
delete from messenger.call_recordings where id = :'active';
select set_eq(
    $$select port, severity from recording_finalize.check_adapter() where severity <> 'warning'$$,
    $$values ('recording_finalize_adapter.make_failed', 'notice'),
        ('recording_finalize_adapter.make_available', 'notice'),
        ('recording_finalize_adapter.enqueue_realtime', 'notice')$$,
    'without an active recording each write port is a notice: not rehearsed'
);
-- The reference schema has an index for republish discovery's scan of the window: nothing,
-- even beside a long history of older Available recordings.
select tests.make_session() as old_session \gset
insert into messenger.call_recordings (
    id, session_kind, session_id, media_type, trigger, status, file_id, size_bytes,
    duration_seconds, format, started_at, ended_at, available_at
)
select gen_random_uuid(), 'Direct', :'old_session', 'Audio', 'Manual', 'Available', 'f', 1, 1,
    'Webm', now() - interval '30 days', now() - interval '30 days', now() - interval '29 days'
from generate_series(1, 3000);
analyze messenger.call_recordings;
select is_empty(
    $$select port from recording_finalize.check_adapter() where severity = 'warning'$$,
    'with the index on available_at of the Available recordings nothing is reported'
);
-- Without it (an older reference database): a warning naming what discovery would read. The
-- primary key is an index too: judged by the rows read beyond the slice, not by the plan's words.
drop index messenger.call_recordings_available_at_idx;
select results_eq(
    $$select severity, port, problem like 'discovery reads 300_ rows to return _ %available_at%'
    from recording_finalize.check_adapter() where severity = 'warning'$$,
    $$values ('warning', 'recording_finalize_adapter.recordings', true)$$,
    'without it: one warning, discovery of the window would read the whole history'
);
select is_empty(
    $$select port from recording_finalize.check_adapter(false) where severity = 'warning'$$,
    'the quick form (start-up''s /readyz) leaves the scans alone'
);

select * from finish();
rollback;
