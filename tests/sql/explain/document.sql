-- explain: one read-only document per recording - the recording, its session with the SLA due
-- time, its finalize row, the product's event (with its lease) or the service's own (through
-- the adapter's service_events), the operators' actions on it, and the sentence of what happens
-- next. It no longer reads the service's realtime rows (the product only writes them, through
-- the enqueue_realtime port).
begin;
select plan(15);

select tests.clean_slate();
-- Backing off: attempt 2 ended transient, an operator retried it, next attempt in 4 minutes.
select tests.make_stuck(p_attempts => 1) as rec \gset
create temp table claimed as select * from tests.claim();
select * from tests.apply(:'rec', 'transient', p_error => 'ReadTimeoutError') \gset
select count(*) as retried from recording_finalize.reschedule(array[:'rec']::uuid[], 'Pending',
    'ann', 'S3 is back') \gset
update messenger.recording_finalize_attempts set next_attempt_at = now() + interval '4 minutes'
where recording_id = :'rec';
create temp table before as select tests.snapshot() as fingerprint;

create temp table doc as select recording_finalize.explain(:'rec') as d;
select is(tests.snapshot(), (select fingerprint from before), 'explain wrote nothing');
select is((select d ->> 'recordingId' from doc), :'rec', 'the recording''s id');
select is((select d -> 'recording' ->> 'status' from doc), 'Uploading', 'the recording');
select results_eq(
    $$select (d -> 'finalize' ->> 'attempts')::integer, d -> 'finalize' ->> 'lastError',
        d -> 'finalize' ->> 'lastOutcome', d -> 'finalize' ->> 'openedBy',
        d -> 'finalize' ->> 'status'
    from doc$$,
    $$values (2, 'Transient: ReadTimeoutError', 'transient', 'lifecycle', 'Pending')$$,
    'the finalize row: attempts, last error and verdict, who opened it'
);
select is((select d -> 'next' ->> 'action' from doc), 'reconcile', 'next: reconcile');
select results_eq(
    $$select (d -> 'next' ->> 'attempt')::integer, (d -> 'next' ->> 'maxAttempts')::integer,
        (d -> 'next' ->> 'due')::boolean, (d -> 'next' ->> 'at')::timestamptz
    from doc$$,
    $$values (3, 8, false, now() + interval '4 minutes')$$,
    'attempt 3 of 8, not due yet, at the row''s next attempt'
);
select matches(
    (select d -> 'next' ->> 'text' from doc),
    '^at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z \(in 240 s\): check the binary in the file '
        || 'storage \(attempt 3 of 8\)$',
    'the sentence says when (ISO UTC) and what'
);
select results_eq(
    $$select d -> 'operatorActions' -> 0 ->> 'action', d -> 'operatorActions' -> 0 ->> 'operator',
        d -> 'operatorActions' -> 0 ->> 'reason', d -> 'operatorActions' -> 0 ->> 'login'
    from doc$$,
    $$values ('retry', 'ann', 'S3 is back', session_user::text collate "default")$$,
    'the audit trail shows who stepped in, why, and the login'
);
select is(
    (select (d -> 'session' ->> 'slaDueAt')::timestamptz from doc),
    (select ended_at + interval '30 minutes' from messenger.call_sessions
        where id = (select session_id from messenger.call_recordings where id = :'rec')),
    'the session''s SLA due time is its end + the policy''s SLA'
);
select results_eq(
    $$select d -> 'outbox', d -> 'serviceEvent', d ? 'realtime' from doc$$,
    $$values ('null'::jsonb, 'null'::jsonb, false)$$,
    'no event yet, neither the product''s nor the service''s; no realtime key'
);

-- After the ingest callback: the event, its lease and the push are in the document.
select recording_finalize.recording_ingest_completed(:'rec', 'recordings/x', 1, 2, 'Ogg')
    as ingested \gset
create temp table leased as select * from recording_finalize.relay_claim(10, '1 minute');
create temp table doc2 as select recording_finalize.explain(:'rec') as d;
select results_eq(
    $$select (d -> 'outbox' ->> 'id')::bigint, (d -> 'outbox' ->> 'leasedUntil')::timestamptz,
        d -> 'outbox' ->> 'eventId', d -> 'outbox' ->> 'publishedAt'
    from doc2$$,
    format($$select o.id, now() + interval '1 minute', o.headers ->> 'event-id', null::text
    from recording_finalize.outbox as o where o.recording_id = %L$$, :'rec'),
    'the product''s event with its event-id and the relay''s lease'
);
select is((select d -> 'serviceEvent' from doc2), 'null'::jsonb,
    'no service event beside it');

-- A recording the service published itself: its event is shown as the service's.
select tests.make_recording('Direct', tests.make_session(), 'Available') as svc \gset
select tests.make_service_event(:'svc', now() - interval '5 minutes') as svc_event \gset
create temp table doc3 as select recording_finalize.explain(:'svc') as d;
select results_eq(
    $$select d -> 'outbox', (d -> 'serviceEvent' ->> 'enqueuedAt')::timestamptz,
        (d -> 'serviceEvent' ->> 'publishedAt')::timestamptz
    from doc3$$,
    format($$values ('null'::jsonb, (select available_at from messenger.call_recordings
        where id = %L), now() - interval '5 minutes')$$, :'svc'),
    'the service''s own event, enqueued and published, and none of the product''s'
);
select results_eq(
    $$select d -> 'recording' ->> 'status', d -> 'finalize' ->> 'status',
        d -> 'next' ->> 'action'
    from doc2$$,
    $$values ('Available', 'Done', 'none')$$,
    'the recording is Available, its row Done: nothing next'
);

select is(
    (select provolatile::text from pg_catalog.pg_proc
        where oid = 'recording_finalize.explain(uuid)'::regprocedure),
    's', 'explain is STABLE'
);

select * from finish();
rollback;
