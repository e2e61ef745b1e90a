-- explain reports the event of the server's topic only (recording_finalize.settings.topic; a
-- policy naming another is RF009): after the owner changes the topic, the old topic's event is
-- no longer this product's, and an Available recording without an event of the new one is
-- a republish again.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select recording_finalize.recording_ingest_completed(:'rec', 'recordings/t', 1, 1, 'Ogg')
    as ingested \gset
update messenger.recording_finalize_attempts set status = 'Pending' where recording_id = :'rec';
-- Another service's event under the same dedupe key, on its own topic.
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
values ('billing.invoice-issued.v1', 'k', 'e', :'rec', '{}');

select is(
    (recording_finalize.explain(:'rec') -> 'outbox' ->> 'id')::bigint,
    (select id from messenger.integration_outbox
        where topic = 'pin.messenger.call-recording-available.v1'),
    'the event shown is the one of the server''s topic'
);
select is(
    recording_finalize.explain(:'rec') -> 'next' ->> 'action', 'closed',
    'its event exists: the claim would close the row'
);
update recording_finalize.settings set topic = 'pin.messenger.call-recording-available.v2';
select is(
    recording_finalize.explain(:'rec') -> 'outbox', 'null'::jsonb,
    'after the owner changes the topic, no event of it is shown'
);
select is(
    recording_finalize.explain(:'rec') -> 'next' ->> 'action', 'republished',
    'and the claim would enqueue one on the new topic'
);

select * from finish();
rollback;
