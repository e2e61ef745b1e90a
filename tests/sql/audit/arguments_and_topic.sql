-- audit: RF001 for bad arguments (the policy is the stored one); only
-- the server's topic's events count (another service's event is neither "the event" of a
-- recording nor an overdue one), and the default follows the owner's change of the topic.
begin;
select plan(7);

select tests.clean_slate();
-- Its outbox keeps what it delivered: service_events remembers past every recording below.
select tests.make_remembering_service() is not null as remembering \gset
select throws_ok($$select * from recording_finalize.audit(p_polling_interval => '0')$$,
    'RF001', null, 'a zero polling interval');
select throws_ok($$select * from recording_finalize.audit(p_polling_interval => null)$$,
    'RF001', null, 'a missing polling interval');
select throws_ok($$select * from recording_finalize.audit(p_examples => -1)$$,
    'RF001', null, 'negative examples');
select throws_ok($$select * from recording_finalize.audit(p_lookback => '-1 day')$$,
    'RF001', null, 'a negative lookback');

select tests.make_recording('Direct', tests.make_session(), 'Available') as rec \gset
-- A second Available recording whose event is the service's own, unpublished for an hour: it
-- has its event (no finding), and the service's backlog is not the product's to report.
select tests.make_recording('Direct', tests.make_session(), 'Available') as svc \gset
select tests.make_service_event(:'svc') as svc_event \gset
update messenger.integration_outbox set created_at = now() - interval '1 hour'
where id = :svc_event;
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload,
    created_at)
values ('billing.invoice-issued.v1', 'k', 'e', :'rec', '{}', now() - interval '1 hour');
select results_eq(
    $$select check_name, found from recording_finalize.audit()
    where check_name in ('available_without_event', 'unpublished_overdue') order by 1$$,
    $$values ('available_without_event', 1::bigint), ('unpublished_overdue', 0::bigint)$$,
    'another topic''s event neither closes the finding nor is overdue'
);
select recording_finalize_internal.enqueue_available(
    (select r from recording_finalize_internal.recording_row(:'rec') as r),
    recording_finalize_internal.session_of('Direct',
        (select session_id from messenger.call_recordings where id = :'rec')),
    'pin.messenger.call-recording-available.v1') as enqueued \gset
update recording_finalize.outbox set created_at = now() - interval '1 hour'
where recording_id = :'rec';
select results_eq(
    $$select check_name, found from recording_finalize.audit()
    where check_name in ('available_without_event', 'unpublished_overdue') order by 1$$,
    $$values ('available_without_event', 0::bigint), ('unpublished_overdue', 1::bigint)$$,
    'our event closes it, and is overdue while unpublished'
);
update recording_finalize.settings set topic = 'pin.messenger.call-recording-available.v2';
select results_eq(
    $$select check_name, found from recording_finalize.audit()
    where check_name in ('available_without_event', 'unpublished_overdue') order by 1$$,
    $$values ('available_without_event', 1::bigint), ('unpublished_overdue', 1::bigint)$$,
    'after the owner changes the topic, the default follows it: the service''s event of the old '
        || 'topic no longer counts, the product''s own event still does (it is relayed whatever '
        || 'the topic)'
);

select * from finish();
rollback;
