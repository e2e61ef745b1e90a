-- A recording held by an in-flight ingest callback is skipped, not waited for: its row stays due.
-- The fixture is committed through dblink so the other sessions see it; removed at the end.
begin;
select plan(10);

select tests.delete_committed('c0c0c0c1');
select tests.clean_slate();
select tests.fixed_uuid('c0c0c0c1', 1) as rec \gset
select tests.commit_stuck(:'rec', tests.fixed_uuid('c0c0c0c1', 2));
create temp table row_before as
select * from messenger.recording_finalize_attempts where recording_id = :'rec';

select is(dblink_connect('rfr_ingest', tests.conninfo()), 'OK', 'callback session connected');
select is(dblink_connect('rfr_worker', tests.conninfo()), 'OK', 'worker session connected');
select dblink_exec('rfr_worker', $$set lock_timeout = '3s'$$) as worker_lock_timeout \gset

-- The ingest callback has locked the recording (its first step) and not committed yet.
select dblink_exec('rfr_ingest', 'begin') as ingest_begin \gset
select status as locked_status from dblink(
    'rfr_ingest',
    format('select status from messenger.call_recordings where id = %L for update', :'rec')
) as t(status text) \gset

select is(
    (select count(*) from dblink('rfr_worker', 'select recording_id from tests.claim()')
        as t(recording_id uuid)),
    0::bigint,
    'the worker''s claim returns without the locked recording (and without waiting)'
);
select set_eq(
    format('select * from messenger.recording_finalize_attempts where recording_id = %L', :'rec'),
    'select * from row_before',
    'the skipped row is untouched: no attempt counted, still due'
);

-- The callback finishes and commits.
select is(
    (select result from dblink(
        'rfr_ingest',
        format(
            $$select recording_finalize.recording_ingest_completed(
                %L, 'recordings/x', 10, 5, 'Ogg')$$,
            :'rec'
        )
    ) as t(result text)),
    'available',
    'the callback makes the recording Available'
);
select dblink_exec('rfr_ingest', 'commit') as ingest_commit \gset

select is(
    (select count(*) from dblink('rfr_worker', 'select recording_id from tests.claim()')
        as t(recording_id uuid)),
    0::bigint,
    'the next claim has nothing to do: the callback closed the row'
);
select results_eq(
    format(
        $$select status, attempts from messenger.recording_finalize_attempts
        where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Done'::varchar, 0)$$,
    'the row was closed by the callback without ever costing an attempt'
);
select is(tests.event_count(:'rec'), 1::bigint, 'exactly one event, from the callback');

select is(dblink_disconnect('rfr_ingest'), 'OK', 'callback session disconnected');
select is(dblink_disconnect('rfr_worker'), 'OK', 'worker session disconnected');
select tests.delete_committed('c0c0c0c1');

select * from finish();
rollback;
