-- explain: the product's own event is shown whatever the topic (its outbox is its own, relayed
-- to the server's topic), while a service event counts only on the server's topic
-- (recording_finalize.settings.topic, read by the adapter's service_events): after the owner
-- changes the topic, an Available recording with only a service event of the old topic is a
-- republish again.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select recording_finalize.recording_ingest_completed(:'rec', 'recordings/t', 1, 1, 'Ogg')
    as ingested \gset
update messenger.recording_finalize_attempts set status = 'Pending' where recording_id = :'rec';
-- Another service's event under the same dedupe key, on its own topic.
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
values ('billing.invoice-issued.v1', 'k', 'e', :'rec', '{}');
-- A recording whose event the service enqueued itself, on the server's topic.
select tests.make_stuck(p_status => 'Available') as svc \gset
select tests.make_service_event(:'svc') as svc_event \gset

select results_eq(
    format($$select (d -> 'outbox' ->> 'id')::bigint, d -> 'serviceEvent'
        from recording_finalize.explain(%L) as d$$, :'rec'),
    format($$select id, 'null'::jsonb from recording_finalize.outbox where recording_id = %L$$,
        :'rec'),
    'the product''s event is shown; another topic''s service row is not the service''s event'
);
select results_eq(
    format($$select d -> 'serviceEvent' is not null and d -> 'serviceEvent' <> 'null',
        d -> 'next' ->> 'action' from recording_finalize.explain(%L) as d$$, :'svc'),
    $$values (true, 'closed')$$,
    'the service''s event of the server''s topic is shown: the claim would close the row'
);
update recording_finalize.settings set topic = 'pin.messenger.call-recording-available.v2';
select results_eq(
    format($$select d -> 'serviceEvent', d -> 'next' ->> 'action'
        from recording_finalize.explain(%L) as d$$, :'svc'),
    $$values ('null'::jsonb, 'republished')$$,
    'after the owner changes the topic, the service''s event of the old one no longer counts: '
        || 'the claim would enqueue the product''s'
);
select isnt(
    recording_finalize.explain(:'rec') -> 'outbox', 'null'::jsonb,
    'the product''s own event is still shown'
);
select is(
    recording_finalize.explain(:'rec') -> 'next' ->> 'action', 'closed',
    'and still closes the row'
);

select * from finish();
rollback;
