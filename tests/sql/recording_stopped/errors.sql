-- recording_stopped: RF001 for a bad SLA, RF003 for an unknown recording; an SLA left NULL is
-- the stored policy's (the worker's), not a default of its own.
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
    format($$select recording_finalize.recording_stopped(%L)$$, gen_random_uuid()),
    'RF003', null, 'an unknown recording is refused'
);
select is(tests.snapshot(), (select fingerprint from before), 'nothing changed');

select recording_finalize.set_policy(p_sla_timeout => '10 minutes') is not null as ten \gset
select recording_finalize.recording_stopped(:'rec', null) as stopped \gset
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = :'rec'),
    now() + interval '10 minutes',
    'a NULL SLA is the stored policy''s: due 10 minutes on (the session still runs)'
);

select * from finish();
rollback;
