-- recording_finalize_internal.policy: every key is optional and read into its field; the
-- defaults are the design card's (8 attempts, 30 min SLA, backoff 60 s x 2 up to 900 s, 10 %
-- jitter), the upload grace defaults to the SLA, the topic and the grace cap are the server's.
begin;
select plan(6);

select results_eq(
    $$select p.* from recording_finalize_internal.policy('{}') as p$$,
    $$values ('pin.messenger.call-recording-available.v1'::text, 8, interval '30 minutes',
        interval '1 minute', 2::double precision, interval '15 minutes', 0.1::double precision,
        interval '30 minutes', interval '24 hours')$$,
    'the empty policy: every default'
);
select results_eq(
    $$select p.* from recording_finalize_internal.policy('{
        "topic": "pin.messenger.call-recording-available.v1", "max_attempts": 3,
        "sla_timeout_seconds": 1.5, "backoff_base_seconds": 0.2, "backoff_factor": 1.5,
        "backoff_cap_seconds": 30, "backoff_jitter": 0.25, "upload_grace_seconds": 7200}') as p$$,
    $$values ('pin.messenger.call-recording-available.v1'::text, 3, interval '1.5 seconds',
        interval '200 milliseconds', 1.5::double precision, interval '30 seconds',
        0.25::double precision, interval '2 hours', interval '24 hours')$$,
    'every key is read into its field (durations in seconds, fractions kept)'
);
select is(
    (recording_finalize_internal.policy('{"sla_timeout_seconds": 120}')).upload_grace,
    interval '2 minutes',
    'the upload grace defaults to the SLA given'
);
update recording_finalize.settings
set topic = 'pin.messenger.call-recording-available.v2', upload_grace_max = '2 hours',
    sla_timeout_min = '100 milliseconds';
select results_eq(
    $$select p.topic, p.upload_grace_max from recording_finalize_internal.policy('{}') as p$$,
    $$values ('pin.messenger.call-recording-available.v2'::text, interval '2 hours')$$,
    'the topic and the grace cap follow the server''s settings'
);
select is(
    (recording_finalize_internal.policy('{"sla_timeout_seconds": 1.1234567,
        "upload_grace_seconds": 60}')).sla_timeout,
    interval '1.123457 seconds',
    'a duration is rounded to the microsecond an interval keeps'
);
select is(
    (recording_finalize_internal.policy('{"backoff_jitter": 1e-400}')).backoff_jitter,
    0::double precision,
    'a fraction finer than double precision holds is rounded, not a cast error'
);

select * from finish();
rollback;
