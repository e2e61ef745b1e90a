-- claim_preview reads the server's topic only: another topic is refused (RF009) instead of reporting on
-- it, and the default (NULL) follows recording_finalize.settings.topic (DBA review finding 1).
begin;
select plan(3);

select tests.clean_slate();
select throws_ok($$select * from recording_finalize.claim_preview(p_topic => 'billing.invoice-issued.v1')$$, 'RF009', null, 'another service''s topic is refused');
select lives_ok($$select * from recording_finalize.claim_preview()$$, 'the default is the server''s topic');
-- After the owner changes the topic, the default follows it (a literal default would not).
update recording_finalize.settings set topic = 'pin.messenger.call-recording-available.v2';
select lives_ok($$select * from recording_finalize.claim_preview()$$, 'and follows a changed server topic');

select * from finish();
rollback;
