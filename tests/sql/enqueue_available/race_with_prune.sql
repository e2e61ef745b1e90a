-- enqueue_available racing prune (two real sessions, DBA review finding 2): prune has deleted
-- the published event and not committed; a duplicate ingest callback's INSERT waits on that row
-- and succeeds once prune commits. The marker check before the INSERT could not see prune's
-- marker; the re-check after it does, so the callback leaves no second (unpublished) event for
-- the relay to send again, and no second realtime push.
-- The fixture rows are committed through dblink so the other sessions see them; removed at the end.
begin;
select plan(11);

select tests.delete_committed('c0c0c0d7');
select tests.exec_committed(
    $$delete from messenger.integration_outbox_pruned where dedupe_key like 'c0c0c0d7%'$$
) as cleaned \gset
select tests.clean_slate();
select tests.fixed_uuid('c0c0c0d7', 1) as rec, tests.fixed_uuid('c0c0c0d7', 101) as ses \gset
select tests.exec_committed(format(
    $sql$do $do$ begin
    perform tests.make_session('Direct', interval '3 hours', %1$L);
    perform tests.make_recording('Direct', %1$L, 'Uploading', %2$L);
    perform messenger.recording_ingest_completed(%2$L, 'rec/d7.webm', 100, 10, 'Webm');
    update messenger.integration_outbox set published_at = now() - interval '40 days'
    where dedupe_key = %2$L;
    update messenger.realtime_outbox set dispatched_at = now() - interval '40 days'
    where reference_id = %2$L;
    end $do$ $sql$,
    :'ses', :'rec'
)) as committed \gset

select is(dblink_connect('rfr_prune', tests.conninfo()), 'OK', 'the prune session connected');
select is(dblink_connect('rfr_cb', tests.conninfo()), 'OK', 'the callback session connected');
select dblink_exec('rfr_prune', $$set lock_timeout = '10s'$$) as t1,
    dblink_exec('rfr_cb', $$set lock_timeout = '10s'$$) as t2 \gset
select pid as cb_pid from dblink('rfr_cb', 'select pg_backend_pid()') as t(pid integer) \gset

-- Prune deletes the published event (and its dispatched push) and keeps its transaction open.
select dblink_exec('rfr_prune', 'begin') as b1 \gset
select results_eq(
    $$select * from dblink('rfr_prune',
        'select outbox, realtime from recording_finalize.prune(''30 days'')')
        as t(outbox bigint, realtime bigint)$$,
    'values (1::bigint, 1::bigint)', 'prune deleted the published event and the push, uncommitted'
);
-- The duplicate ingest callback: its INSERT waits on the row prune is deleting.
select dblink_send_query('rfr_cb', format(
    $$select messenger.recording_ingest_completed(%L, 'rec/d7.webm', 100, 10, 'Webm')::text$$,
    :'rec'
)) as sent \gset
select ok(tests.wait_until_blocked('rfr_cb', :cb_pid),
    'the duplicate callback waits for the uncommitted prune');
select dblink_exec('rfr_prune', 'commit') as c1 \gset
select is((select r from dblink_get_result('rfr_cb') as t(r text)), 'already_available',
    'once prune commits, the callback returns already_available');
select is((select count(*) from dblink_get_result('rfr_cb') as t(r text)), 0::bigint,
    'no further result');

select is(
    (select count(*) from messenger.integration_outbox where dedupe_key = :'rec'), 0::bigint,
    'no second event row for the relay to publish again'
);
select is(
    (select count(*) from messenger.realtime_outbox where reference_id = :'rec'), 0::bigint,
    'and no second realtime push'
);
select is(
    (select count(*) from messenger.integration_outbox_pruned where dedupe_key = :'rec'),
    1::bigint, 'the marker of the published event is there'
);

select is(dblink_disconnect('rfr_prune'), 'OK', 'the prune session disconnected');
select is(dblink_disconnect('rfr_cb'), 'OK', 'the callback session disconnected');
select tests.delete_committed('c0c0c0d7');
select tests.exec_committed(
    $$delete from messenger.integration_outbox_pruned where dedupe_key like 'c0c0c0d7%'$$
) as cleaned \gset

select * from finish();
rollback;
