-- The upload grace (p_policy upload_grace_seconds) is bounded by the server (DBA review finding
-- 4): a worker cannot park a recording for centuries nor skip the storage-incident rule with a
-- grace of a microsecond; RF010 before any row is touched, RF001 for a grace that is not
-- positive. The bound follows the owner's settings.
begin;
select plan(7);

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
    format($$select * from tests.apply(%L, 'missing', p_upload_grace => interval '1000 years')$$,
        :'rec'),
    'RF001', null, 'a grace of centuries is beyond the policy''s own rule (1e9 seconds)'
);
select throws_ok(
    format($$select * from tests.apply(%L, 'missing', p_upload_grace => interval '1 millisecond')$$,
        :'rec'),
    'RF010', null, 'a grace below settings.upload_grace_min is refused'
);
select throws_ok(
    format($$select * from tests.apply(%L, 'missing', p_upload_grace => interval '0')$$, :'rec'),
    'RF001', null, 'a zero grace is refused by the policy''s own rule'
);
select is(tests.snapshot(), (select fingerprint from before), 'and nothing was touched');

select results_eq(
    format($$select result from tests.apply(%L, 'missing', p_upload_grace => interval '2 hours')$$,
        :'rec'),
    $$values ('deferred_by_incident')$$, 'a grace within the bounds is taken'
);
update recording_finalize.settings set upload_grace_max = '1 hour';
select tests.make_due(:'rec');
select claim_token as token2 from tests.claim() \gset
select throws_ok(
    format($$select * from tests.apply(%L, 'found', 'k', 1, 1, 'Ogg',
        p_upload_grace => interval '2 hours')$$, :'rec'),
    'RF010', null, 'the bound follows the owner''s settings (whatever the outcome)'
);

select * from finish();
rollback;
