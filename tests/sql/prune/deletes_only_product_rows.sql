-- prune deletes, older than the cutoff, only the product's finished rows: Done finalize rows of
-- terminal recordings (a Done row of a vanished recording too), expired relay leases, storage
-- incidents that ended; never a Pending, Quarantined or young row, never a Done row of a
-- recording that is not terminal (an audit finding), never an open incident - and never a row of
-- the service: integration_outbox and realtime_outbox keep every row, however old.
begin;
select plan(14);

select tests.clean_slate();
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

-- Finalize rows. Old = settled 40 days ago.
create function pg_temp.age_row(p_rec uuid, p_age interval) returns void language sql as $f$
    update messenger.recording_finalize_attempts
    set updated_at = now() - p_age, created_at = now() - p_age - interval '1 hour'
    where recording_id = p_rec
$f$;
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as old_available \gset
select tests.make_due_row(:'old_available') is not null as ok \gset
select recording_finalize.recording_ingest_completed(:'old_available', 'files/o', 1, 1, 'Ogg')
    as ingested \gset
select pg_temp.age_row(:'old_available', '40 days');
select tests.make_recording('Direct', tests.make_session(), 'Failed') as old_failed \gset
select tests.make_due_row(:'old_failed', 1, now(), 'Done') is not null as ok \gset
select pg_temp.age_row(:'old_failed', '40 days');
select tests.make_recording('Direct', tests.make_session(), 'Available') as vanished \gset
select tests.make_due_row(:'vanished', 1, now(), 'Done') is not null as ok \gset
select pg_temp.age_row(:'vanished', '40 days');
delete from messenger.call_recordings where id = :'vanished';
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as done_active \gset
select tests.make_due_row(:'done_active', 1, now(), 'Done') is not null as ok \gset
select pg_temp.age_row(:'done_active', '40 days');
select tests.make_recording('Direct', tests.make_session(), 'Available') as young \gset
select tests.make_due_row(:'young', 1, now(), 'Done') is not null as ok \gset
select pg_temp.age_row(:'young', '29 days');
select tests.make_stuck() as pending \gset
select pg_temp.age_row(:'pending', '40 days');
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as quarantined \gset
select tests.make_due_row(:'quarantined', 8, now(), 'Quarantined') is not null as ok \gset
select pg_temp.age_row(:'quarantined', '40 days');

-- Leases (of the product's own events): one expired (of the event the ingest wrote), one live
-- (of another event, published long ago).
insert into recording_finalize.outbox (recording_id, topic, message_key, headers, payload,
    created_at, published_at)
values (gen_random_uuid(), 'pin.messenger.call-recording-available.v1', 'k', '{}', '{}',
    now() - interval '400 days', now() - interval '399 days')
returning recording_id as other_event \gset
insert into recording_finalize.relay_leases (outbox_id, lease_token, leased_until)
select id, gen_random_uuid(),
    case when recording_id = :'old_available' then now() - interval '1 second'
        else now() + interval '1 minute' end
from recording_finalize.outbox where recording_id in (:'old_available', :'other_event');
-- The service's own old events, published long ago (one of another topic).
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload,
    created_at, published_at)
values ('pin.messenger.call-recording-available.v1', 'k', 'e', 'old-published', '{}',
    now() - interval '400 days', now() - interval '399 days'),
    ('pin.billing.invoice-paid.v1', 'k', 'e', 'other-topic', '{}',
    now() - interval '400 days', now() - interval '399 days');
-- Incidents: ended 40 days ago (goes), ended yesterday (stays), open for 100 days (stays).
insert into recording_finalize.storage_incidents (source, started_at, ended_at)
values ('ops', now() - interval '41 days', now() - interval '40 days'),
    ('recorders', now() - interval '2 days', now() - interval '1 day'),
    ('worker', now() - interval '100 days', null);
-- The service's old rows: pushed and published long ago.
update messenger.realtime_outbox set dispatched_at = now() - interval '400 days',
    created_at = now() - interval '400 days';
insert into messenger.realtime_outbox (kind, session_kind, session_id, reference_id,
    created_at, dispatched_at)
values ('RecordingFailed', 'Direct', gen_random_uuid(), gen_random_uuid(),
    now() - interval '400 days', now() - interval '399 days');
create temp table service_rows as
select (select md5(string_agg(o::text, ',' order by o.id)) from messenger.integration_outbox as o)
        as outbox,
    (select md5(string_agg(r::text, ',' order by r.id)) from messenger.realtime_outbox as r)
        as realtime,
    (select count(*) from messenger.integration_outbox) as outbox_count,
    (select count(*) from messenger.realtime_outbox) as realtime_count;

-- The dry run counts and deletes nothing.
create temp table fingerprint as select tests.snapshot() as s;
select results_eq(
    $$select * from recording_finalize.prune('30 days', p_dry_run => true)$$,
    'values (3::bigint, 1::bigint, 1::bigint)',
    'the dry run counts 3 finalize rows, 1 lease and 1 incident'
);
select is(tests.snapshot(), (select s from fingerprint), 'and deletes nothing');

-- As the worker (run's hourly pruner).
set local role rfr_pgtap_worker_login;
create temp table pruned as select * from recording_finalize.prune('30 days');
reset role;
select results_eq('select * from pruned', 'values (3::bigint, 1::bigint, 1::bigint)',
    'one batch deletes the same rows the dry run counted');
select set_eq(
    'select recording_id from messenger.recording_finalize_attempts',
    format('values (%L::uuid), (%L::uuid), (%L::uuid), (%L::uuid)',
        :'done_active', :'young', :'pending', :'quarantined'),
    'the old Done rows of terminal (or vanished) recordings went; the rest stayed'
);
select is(
    (select status::text from messenger.recording_finalize_attempts
        where recording_id = :'done_active'),
    'Done',
    'a Done row of a recording that is not terminal is kept (audit''s done_not_terminal)'
);
select results_eq(
    $$select o.recording_id from recording_finalize.relay_leases as l
    join recording_finalize.outbox as o on o.id = l.outbox_id$$,
    format('values (%L::uuid)', :'other_event'),
    'the expired lease went, the live one stayed'
);
select results_eq(
    'select source::text from recording_finalize.storage_incidents order by source',
    $$values ('recorders'), ('worker')$$,
    'the incident that ended before the cutoff went; the recent and the open one stayed'
);
select results_eq(
    $$select (select count(*) from messenger.integration_outbox),
        (select count(*) from messenger.realtime_outbox)$$,
    'select outbox_count, realtime_count from service_rows',
    'the service''s outboxes keep every row'
);
select is(
    (select md5(string_agg(o::text, ',' order by o.id)) from messenger.integration_outbox as o),
    (select outbox from service_rows),
    'integration_outbox is exactly as it was'
);
select is(
    (select md5(string_agg(r::text, ',' order by r.id)) from messenger.realtime_outbox as r),
    (select realtime from service_rows),
    'realtime_outbox is exactly as it was'
);
select ok(
    exists (select from messenger.call_recordings where id = :'old_available')
        and exists (select from messenger.call_recordings where id = :'old_failed'),
    'the recordings themselves are the service''s and stay'
);
select results_eq(
    $$select * from recording_finalize.prune('30 days')$$,
    'values (0::bigint, 0::bigint, 0::bigint)',
    'the next batch finds nothing'
);

-- A shorter age reaches the younger rows.
select results_eq(
    $$select * from recording_finalize.prune('1 day', p_dry_run => true)$$,
    'values (1::bigint, 0::bigint, 0::bigint)',
    'with 1 day the 29-day-old Done row is due (the incident ended 1 day ago is not older)'
);
select results_eq(
    $$select finalize from recording_finalize.prune('1 day')$$,
    'values (1::bigint)',
    'and goes'
);

select * from finish();
rollback;
