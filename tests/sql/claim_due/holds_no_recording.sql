-- The claim neither waits for a recording nor holds one: it locks only the product's own rows.
-- A recording an in-flight ingest callback holds is claimed like any other (the claim reads its
-- committed state), a batch is full whatever the service holds, and while the claim's
-- transaction is open the service updates the claimed recordings without waiting. The callback
-- then settles its recording, and the worker's verdict for it is stale: one event, the
-- callback's.
-- The fixture is committed through dblink so the other sessions see it; removed at the end.
begin;
select plan(9);

select tests.delete_committed('c0c0c0c1');
select tests.clean_slate();
select tests.fixed_uuid('c0c0c0c1', 1) as held, tests.fixed_uuid('c0c0c0c1', 2) as free \gset
select tests.commit_stuck(:'held', tests.fixed_uuid('c0c0c0c1', 101),
    now() - interval '2 minutes');
select tests.commit_stuck(:'free', tests.fixed_uuid('c0c0c0c1', 102));

select is(dblink_connect('rfr_ingest', tests.conninfo()), 'OK', 'callback session connected');
select is(dblink_connect('rfr_service', tests.conninfo()), 'OK', 'service session connected');
select is(dblink_connect('rfr_worker', tests.conninfo()), 'OK', 'worker session connected');
-- Nobody may hang the suite; the service gives up at once where it would wait.
select dblink_exec('rfr_worker', $$set statement_timeout = '5s'$$) as t1,
    dblink_exec('rfr_service', $$set lock_timeout = '50ms'$$) as t2 \gset

-- The ingest callback has locked the first recording (its first step) and not committed yet.
select dblink_exec('rfr_ingest', 'begin') as ingest_begin \gset
select status as locked_status from dblink('rfr_ingest', format(
    'select status from messenger.call_recordings where id = %L for no key update', :'held'))
    as t(status text) \gset

-- The worker claims inside a transaction it keeps open, as claim_due's own does until it
-- returns.
select dblink_exec('rfr_worker', 'begin') as w_begin \gset
create temp table claimed as
select * from dblink('rfr_worker', 'select recording_id, action, claim_token from tests.claim(2)')
    as t(recording_id uuid, action text, claim_token uuid);
select set_eq('select recording_id, action from claimed',
    format($$values (%L::uuid, 'reconcile'), (%L::uuid, 'reconcile')$$, :'held', :'free'),
    'a batch of 2 comes back full, the held recording in it, without waiting for it');
select is(
    (select count(*) from dblink('rfr_service', format(
        $$update messenger.call_recordings set updated_at = now() where id = %L
        returning 1$$, :'free')) as t(one integer)),
    1::bigint,
    'with the claim''s transaction open, the service updates a claimed recording at once'
);
select dblink_exec('rfr_worker', 'commit') as w_commit \gset

-- The callback finishes and commits: Available, its event, the row closed.
select is(
    (select result from dblink('rfr_ingest', format(
        $$select recording_finalize.recording_ingest_completed(%L, 'recordings/x', 10, 5, 'Ogg')$$,
        :'held')) as t(result text)),
    'available',
    'the callback makes the recording Available'
);
select dblink_exec('rfr_ingest', 'commit') as ingest_commit \gset

-- The verdict comes from the worker's session too (its row lock then ends with its call).
select is(
    (select result from dblink('rfr_worker', format(
        $$select result from recording_finalize.apply_outcome(%L, %L, 'found', 'recordings/y',
            10, 5, 'Ogg', null)$$,
        :'held', (select claim_token from claimed where recording_id = :'held')))
        as t(result text)),
    'stale',
    'the worker''s verdict for it is stale: the callback settled it'
);
select is(tests.event_count(:'held'), 1::bigint, 'exactly one event, the callback''s');
select is(dblink_disconnect('rfr_ingest') || dblink_disconnect('rfr_service')
    || dblink_disconnect('rfr_worker'), 'OKOKOK', 'sessions disconnected');
select tests.delete_committed('c0c0c0c1');

select * from finish();
rollback;
