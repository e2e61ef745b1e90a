-- The upload grace (RFR_UPLOAD_GRACE, the stored policy's upload_grace) is bounded by the server
-- (DBA review finding 4): a worker cannot park a recording for centuries nor skip the
-- storage-incident rule with a grace of a microsecond; set_policy refuses it (RF010) before any
-- row is touched, and apply_outcome defers a 404 by the grace it stores.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_stuck('Direct', '2 hours', p_attempts => 2) as rec \gset
select claim_token as token from tests.claim() \gset
insert into recording_finalize.storage_incidents (source, started_at, reason)
values ('worker', now() - interval '5 minutes', 'HeadBucket timeout');
create temp table before as select tests.snapshot() as fingerprint;

select throws_ok(
    format($$select * from tests.apply(%L, 'missing', p_upload_grace => interval '30 days')$$,
        :'rec'),
    'RF010', null, 'a grace above settings.upload_grace_max (24 hours) is refused'
);
select throws_ok(
    format($$select * from tests.apply(%L, 'missing', p_upload_grace => interval '1 millisecond')$$,
        :'rec'),
    'RF010', null, 'a grace below settings.upload_grace_min is refused'
);
select is(tests.snapshot(), (select fingerprint from before), 'and nothing was touched');

select results_eq(
    format($$select result from tests.apply(%L, 'missing', p_upload_grace => interval '2 hours')$$,
        :'rec'),
    $$values ('deferred_by_incident')$$, 'a grace within the bounds is taken'
);
select cmp_ok(
    (select f.next_attempt_at from messenger.recording_finalize_attempts as f
        where f.recording_id = :'rec'),
    '>', now() + interval '1 hour',
    'the 404 is not trusted until the grace after the incident'
);

select * from finish();
rollback;
