-- The upload grace is bounded by the server (DBA review finding 4): a worker cannot park a
-- recording for centuries ('1000 years') nor skip the storage-incident rule ('1 microsecond');
-- RF010 before any row is touched. A deferral never reaches past now() + upload_grace_max.
begin;
select plan(6);

select tests.clean_slate();
delete from messenger.storage_incidents;
select tests.make_stuck('Direct', '2 hours', p_attempts => 2) as rec \gset
select claim_token as token from tests.claim() \gset
insert into messenger.storage_incidents (source, started_at, reason)
values ('worker', now() - interval '5 minutes', 'HeadBucket timeout');
create temp table before as select tests.snapshot() as fingerprint;

select throws_ok(
    format($$select * from recording_finalize.apply_outcome(%L, %L, 'missing',
        p_upload_grace => interval '1000 years')$$, :'rec', :'token'),
    'RF010', null, 'a grace above settings.upload_grace_max is refused'
);
select throws_ok(
    format($$select * from recording_finalize.apply_outcome(%L, %L, 'missing',
        p_upload_grace => interval '1 microsecond')$$, :'rec', :'token'),
    'RF010', null, 'a grace below settings.upload_grace_min is refused'
);
select is(tests.snapshot(), (select fingerprint from before), 'and nothing was touched');

-- An incident the owner recorded as ending in ten days (by hand): the deferral is capped.
update messenger.storage_incidents set ended_at = now() + interval '10 days', closed_by = 'owner';
select results_eq(
    format($$select result from recording_finalize.apply_outcome(%L, %L, 'missing',
        p_upload_grace => interval '30 minutes')$$, :'rec', :'token'),
    $$values ('deferred')$$, 'a grace within the bounds defers the 404'
);
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts where recording_id = :'rec'),
    now() + interval '24 hours', 'but at most until now() + upload_grace_max (24 hours)'
);
update recording_finalize.settings set upload_grace_max = '1 hour';
select throws_ok(
    format($$select * from recording_finalize.apply_outcome(%L, %L, 'found',
        p_upload_grace => interval '2 hours')$$, :'rec', :'token'),
    'RF010', null, 'the bound follows the owner''s settings'
);

select * from finish();
rollback;
