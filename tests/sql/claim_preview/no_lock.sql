-- claim_preview takes no lock and never waits: it reports a row while another session holds its
-- finalize row and recording (the real claim would pass it over), and that session is not
-- blocked by it. The fixture is committed through dblink; removed at the end.
begin;
select plan(5);

select tests.delete_committed('c0c0c1b1');
select tests.clean_slate();
select tests.fixed_uuid('c0c0c1b1', 1) as rec \gset
select tests.commit_stuck(:'rec', tests.fixed_uuid('c0c0c1b1', 101));

select is(dblink_connect('rfr_holder', tests.conninfo()), 'OK', 'holding session connected');
select dblink_exec('rfr_holder', 'begin') as h_begin \gset
select count(*) as held from dblink('rfr_holder', format(
    $$select 1 from messenger.recording_finalize_attempts as f
    join messenger.call_recordings as r on r.id = f.recording_id
    where f.recording_id = %L for update$$, :'rec')) as t(one integer) \gset

set local lock_timeout = '200ms';
select results_eq(
    format($$select action, attempts, detail from recording_finalize.claim_preview() where recording_id = %L$$, :'rec'),
    $$values ('reconcile', 1, 'Uploading')$$,
    'a held row is previewed as reconcile, attempt 1, without waiting'
);
select is(
    (select count(*) from tests.claim()), 0::bigint,
    'while the real claim passes it over'
);
reset lock_timeout;
select is(
    (select n from dblink('rfr_holder', format(
        $$select count(*) from (select from messenger.recording_finalize_attempts
            where recording_id = %L for update nowait) as l$$, :'rec')) as t(n bigint)),
    1::bigint,
    'the holder is not blocked by the preview (it can still lock the row NOWAIT)'
);
select dblink_exec('rfr_holder', 'rollback') as h_rollback \gset
select is(dblink_disconnect('rfr_holder'), 'OK', 'holding session disconnected');
select tests.delete_committed('c0c0c1b1');

select * from finish();
rollback;
