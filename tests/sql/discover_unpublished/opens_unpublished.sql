-- discover_unpublished: the republish phase for a service that never opens a finalize row. An
-- Available recording of the window (became Available between SLA + window and SLA ago) with no
-- event - neither the service's (service_events) nor the product's - and no finalize row gets
-- one, opened by discovery and due now; the next claim republishes it. None for a recording
-- whose event exists (either side), one with a row already, or one that is not Available.
begin;
select plan(9);

select tests.clean_slate();
-- Its outbox keeps what it delivered: service_events remembers past every recording below.
select tests.make_remembering_service() is not null as remembering \gset
update recording_finalize.discovery_sweep
set republish_after_at = null, republish_after_id = null;
create role rfr_pgtap_worker_login login in role recording_finalize_worker;

-- All Available an hour ago (the SLA is 30 minutes, the window 1 day) unless said otherwise.
select tests.make_recording('Conference', tests.make_session('Conference'), 'Available')
    as lost \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as by_service \gset
select tests.make_service_event(:'by_service') as service_event \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as by_product \gset
insert into recording_finalize.outbox (recording_id, topic, message_key, headers, payload)
values (:'by_product', 'pin.messenger.call-recording-available.v1', 'k', '{}', '{}');
select tests.make_recording('Direct', tests.make_session(), 'Available') as has_row \gset
select tests.make_due_row(:'has_row', 2, now() + interval '1 hour') is not null as ok \gset
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as uploading \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as failed \gset
create temp table service_before as select * from messenger.integration_outbox;

set local role rfr_pgtap_worker_login;
select is(recording_finalize.discover_unpublished('1 day', 100), 1,
    'as the worker: one row opened');
reset role;

select results_eq(
    $$select recording_id, session_kind, status, attempts, opened_by, next_attempt_at
    from messenger.recording_finalize_attempts where opened_by = 'discovery'$$,
    format($$select id, session_kind, 'Pending'::varchar, 0, 'discovery'::varchar, now()
        from messenger.call_recordings where id = %L$$, :'lost'),
    'the Available recording without any event: Pending, discovery''s, due now'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts
        where recording_id in (:'by_service', :'by_product', :'uploading', :'failed')),
    0::bigint,
    'none for the service''s event, the product''s event, a recording not Available'
);
select results_eq(
    format($$select attempts, next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'has_row'),
    $$values (2, now() + interval '1 hour')$$,
    'a recording with a finalize row keeps it as it was'
);
select set_eq('select * from messenger.integration_outbox', 'select * from service_before',
    'the service''s outbox was only read');
select is(
    (select count(*) from recording_finalize.outbox), 1::bigint,
    'discovery enqueues no event itself'
);

-- The next claim republishes it: the product's event and realtime row, the row Done.
select results_eq(
    format('select action from tests.claim() where recording_id = %L', :'lost'),
    $$values ('republished')$$,
    'the next claim republishes it'
);
select results_eq(
    format($$select tests.event_count(%1$L), tests.service_event_count(%1$L),
        tests.realtime_count(%1$L, 'RecordingAvailable'),
        (select status from messenger.recording_finalize_attempts where recording_id = %1$L)$$,
        :'lost'),
    $$values (1::bigint, 0::bigint, 1::bigint, 'Done'::varchar)$$,
    'one event in the product''s outbox, one realtime row, the row Done'
);
select is(recording_finalize.discover_unpublished('1 day', 100), 0,
    'a second call opens nothing: every recording of the window has its event or its row');

select * from finish();
rollback;
