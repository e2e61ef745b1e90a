-- recording_ingest_completed closes the recording's finalize row, whatever it was doing: a
-- claimed Pending row (its token spent, so the worker's verdict is stale), a Quarantined one (its
-- reason cleared), and after a Failed recording too; a Done row is left as it is, and a
-- recording without a row gets none.
begin;
select plan(9);

select tests.clean_slate();
select tests.make_stuck() as claimed \gset
select tests.make_stuck(p_attempts => 8) as quarantined \gset
select tests.make_stuck() as failed \gset
select count(*) as n from tests.claim(p_max_attempts => 8) \gset
update messenger.call_recordings set status = 'Failed', failure_reason = 'RecorderError',
    failed_at = now() where id = :'failed';

select results_eq(
    format($$select recording_id::text, status, quarantine_reason, claim_token is not null
        from messenger.recording_finalize_attempts where recording_id in (%L, %L)
        order by status$$, :'claimed', :'quarantined'),
    format($$values (%L, 'Pending'::varchar, null::varchar, true),
        (%L, 'Quarantined', 'crash_loop', false)$$, :'claimed', :'quarantined'),
    'before: one row claimed, one quarantined at claim'
);
select is(
    recording_finalize.recording_ingest_completed(:'claimed', 'recordings/a', 1, 1, 'Ogg'),
    'available', 'the callback for the claimed row'
);
select results_eq(
    format($$select status, claim_token, quarantine_reason, attempts
        from messenger.recording_finalize_attempts where recording_id = %L$$, :'claimed'),
    $$values ('Done'::varchar, null::uuid, null::varchar, 1)$$,
    'closes it Done, the token spent, the attempt as the claim left it'
);
select is(
    (select result from tests.apply(:'claimed', 'missing')), 'stale',
    'so the worker''s late verdict is stale'
);
select is(
    recording_finalize.recording_ingest_completed(:'quarantined', 'recordings/b', 1, 1, 'Ogg'),
    'available', 'the callback for the quarantined row'
);
select results_eq(
    format($$select status, quarantine_reason from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'quarantined'),
    $$values ('Done'::varchar, null::varchar)$$,
    'closes it Done, its quarantine reason cleared'
);
select is(
    recording_finalize.recording_ingest_completed(:'failed', 'recordings/c', 1, 1, 'Ogg'),
    'already_failed', 'the callback after a Failed recording'
);
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'failed'),
    'Done', 'closes its row too'
);
-- A Done row is not rewritten by a duplicate callback.
create temp table done_rows as select * from messenger.recording_finalize_attempts;
select recording_finalize.recording_ingest_completed(:'claimed', 'recordings/a', 1, 1, 'Ogg')
    as again \gset
select set_eq(
    'select * from messenger.recording_finalize_attempts', 'select * from done_rows',
    'a duplicate callback rewrites no Done row (updated_at kept)'
);

select * from finish();
rollback;
