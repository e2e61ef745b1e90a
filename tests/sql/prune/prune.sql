-- prune: deletes old finished rows in bounded batches, keeps everything else, leaves markers.
begin;
select plan(9);

select tests.clean_slate();
delete from messenger.integration_outbox_pruned;
-- Old and finished: an Available recording whose event was published and pushed 40 days ago.
select tests.make_recording('Direct', tests.make_session()) as old \gset
select tests.make_due_row(:'old') is not null as ok \gset
select messenger.recording_ingest_completed(:'old', 'files/o', 1, 1, 'Ogg');
update messenger.integration_outbox set published_at = now() - interval '40 days'
where dedupe_key = :'old';
update messenger.realtime_outbox set dispatched_at = now() - interval '40 days'
where reference_id = :'old';
update messenger.recording_finalize_attempts
set updated_at = now() - interval '40 days', next_attempt_at = now() - interval '40 days'
where recording_id = :'old';
-- Young, unpublished, or still open: kept.
select tests.make_recording('Direct', tests.make_session()) as young \gset
select messenger.recording_ingest_completed(:'young', 'files/y', 1, 1, 'Ogg');
update messenger.integration_outbox set published_at = now() where dedupe_key = :'young';
select tests.make_recording('Direct', tests.make_session()) as unpublished \gset
select messenger.recording_ingest_completed(:'unpublished', 'files/u', 1, 1, 'Ogg');
update messenger.integration_outbox set created_at = now() - interval '40 days'
where dedupe_key = :'unpublished';
select tests.make_stuck() as pending \gset
update messenger.recording_finalize_attempts
set updated_at = now() - interval '40 days', next_attempt_at = now() - interval '40 days'
where recording_id = :'pending';

create temp table fingerprint as select tests.snapshot() as s;
select results_eq(
    $$select * from recording_finalize.prune('30 days', p_dry_run => true)$$,
    'values (1::bigint, 1::bigint, 1::bigint)', 'the dry run counts one of each'
);
select is(tests.snapshot(), (select s from fingerprint), 'and deletes nothing');

select results_eq(
    $$select * from recording_finalize.prune('30 days')$$,
    'values (1::bigint, 1::bigint, 1::bigint)', 'one batch deletes one of each'
);
select is(tests.event_count(:'old'), 0::bigint, 'the old published event is gone');
select is(
    (select count(*) from messenger.integration_outbox_pruned where dedupe_key = :'old'),
    1::bigint, 'and its marker outlives it'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts where recording_id = :'pending'),
    1::bigint, 'a Pending row is never pruned'
);
select is(
    tests.event_count(:'young') + tests.event_count(:'unpublished'), 2::bigint,
    'young and unpublished events are kept'
);
select results_eq(
    $$select * from recording_finalize.prune('30 days')$$,
    'values (0::bigint, 0::bigint, 0::bigint)', 'the next batch finds nothing'
);
select throws_ok($$select * from recording_finalize.prune('30 seconds')$$, 'RF001', null,
    'less than a minute is refused');

select * from finish();
rollback;
