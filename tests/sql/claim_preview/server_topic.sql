-- claim_preview reads the server's topic only (it takes none of the caller's): it follows
-- recording_finalize.settings.topic.
begin;
select plan(2);

select tests.clean_slate();
select tests.make_stuck(p_status => 'Available') as rec \gset
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
values ('pin.messenger.call-recording-available.v2', 'k', 'call-recording-available', :'rec',
    '{}');
select is(
    (select action from recording_finalize.claim_preview()), 'republished',
    'the server''s topic: the event of another topic is not this one'
);
-- After the owner changes the topic, the preview follows it.
update recording_finalize.settings set topic = 'pin.messenger.call-recording-available.v2';
select is(
    (select action from recording_finalize.claim_preview()), 'closed',
    'and follows a changed server topic, where the event exists'
);
select * from finish();
rollback;
