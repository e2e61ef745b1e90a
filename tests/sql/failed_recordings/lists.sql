-- failed_recordings: the newest Failed recordings first (whose objects audit HEADs), bounded,
-- read-only; other statuses never listed.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Failed') as older \gset
select tests.make_recording('Conference', tests.make_session('Conference'), 'Failed')
    as newer \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as ok_rec \gset
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as open_rec \gset
update messenger.call_recordings set failed_at = now() - interval '1 day' where id = :'older';
update messenger.call_recordings set failure_reason = 'UploadFailed' where id = :'newer';
create temp table before as select tests.snapshot() as fingerprint;

select results_eq(
    $$select recording_id, session_kind, failure_reason, failed_at
    from recording_finalize.failed_recordings()$$,
    format($$values (%L::uuid, 'Conference', 'UploadFailed', now() - interval '1 hour'),
        (%L::uuid, 'Direct', 'RecorderError', now() - interval '1 day')$$, :'newer', :'older'),
    'Failed recordings only, newest first, with their reason and time'
);
select results_eq(
    'select session_id from recording_finalize.failed_recordings(1)',
    format('select session_id from messenger.call_recordings where id = %L', :'newer'),
    'each names its session'
);
select is((select count(*) from recording_finalize.failed_recordings(1)), 1::bigint,
    'p_limit bounds the list');
select is(tests.snapshot(), (select fingerprint from before), 'the listing wrote nothing');
select throws_ok('select * from recording_finalize.failed_recordings(0)', 'RF001', null,
    'a limit of 0 is refused');
select throws_ok('select * from recording_finalize.failed_recordings(10001)', 'RF001', null,
    'a limit above 10000 is refused');
select throws_ok('select * from recording_finalize.failed_recordings(null)', 'RF001', null,
    'a missing limit is refused');

select * from finish();
rollback;
