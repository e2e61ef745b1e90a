-- explain reads the server's topic only: another topic is refused (RF009) instead of reporting on
-- it, and the default (NULL) follows recording_finalize.settings.topic (DBA review finding 1).
begin;
select plan(3);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session()) as rec \gset
select throws_ok(
    format($$select recording_finalize.explain(%L, p_topic => 'billing.invoice-issued.v1')$$,
        :'rec'),
    'RF009', null, 'another service''s topic is refused');
select lives_ok(format($$select recording_finalize.explain(%L)$$, :'rec'), 'the default is the server''s topic');
-- After the owner changes the topic, the default follows it (a literal default would not).
update recording_finalize.settings set topic = 'pin.messenger.call-recording-available.v2';
select lives_ok(format($$select recording_finalize.explain(%L)$$, :'rec'), 'and follows a changed server topic');

select * from finish();
rollback;
