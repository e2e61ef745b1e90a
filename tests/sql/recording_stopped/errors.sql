-- recording_stopped: RF001 for a bad SLA, RF003 for an unknown recording.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session('Direct', null), 'Recording') as rec \gset
create temp table before as select tests.snapshot() as fingerprint;

select throws_ok(
    format($$select recording_finalize.recording_stopped(%L, interval '0')$$, :'rec'),
    'RF001', null, 'a zero SLA is refused'
);
select throws_ok(
    format($$select recording_finalize.recording_stopped(%L, interval '-5 minutes')$$, :'rec'),
    'RF001', null, 'a negative SLA is refused'
);
select throws_ok(
    format($$select recording_finalize.recording_stopped(%L, null)$$, :'rec'),
    'RF001', null, 'a null SLA is refused'
);
select throws_ok(
    format($$select recording_finalize.recording_stopped(%L)$$, gen_random_uuid()),
    'RF003', null, 'an unknown recording is refused'
);
select is(tests.snapshot(), (select fingerprint from before), 'nothing changed');

select * from finish();
rollback;
