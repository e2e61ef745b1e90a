-- claim_preview reads the server's topic only: another topic in the policy is refused (RF009)
-- instead of reporting on it, and the default follows recording_finalize.settings.topic.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_stuck(p_status => 'Available') as rec \gset
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
values ('pin.messenger.call-recording-available.v2', 'k', 'call-recording-available', :'rec',
    '{}');
select throws_ok(
    $$select * from recording_finalize.claim_preview(
        p_policy => '{"topic": "billing.invoice-issued.v1"}')$$,
    'RF009', null, 'another service''s topic is refused'
);
select is(
    (select action from recording_finalize.claim_preview()), 'republished',
    'by default the server''s topic: the event of another topic is not this one'
);
-- After the owner changes the topic, the default follows it (a literal default would not).
update recording_finalize.settings set topic = 'pin.messenger.call-recording-available.v2';
select is(
    (select action from recording_finalize.claim_preview()), 'closed',
    'and follows a changed server topic, where the event exists'
);
select throws_ok(
    $$select * from recording_finalize.claim_preview(
        p_policy => '{"topic": "pin.messenger.call-recording-available.v1"}')$$,
    'RF009', null, 'the old topic is now another topic'
);

select * from finish();
rollback;
