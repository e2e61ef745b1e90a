-- failed_recordings: the newest Failed recordings first (whose objects audit HEADs), bounded,
-- read-only; other statuses never listed.
begin;
select plan(7);

select tests.clean_slate();
-- failed_at is not a port of the adapter: the time the product's own row settled (Done) stands
-- for it, NULL for a recording the service failed itself (listed last).
select tests.make_recording('Direct', tests.make_session(), 'Failed') as older \gset
select tests.make_recording('Conference', tests.make_session('Conference'), 'Failed')
    as newer \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as by_service \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as ok_rec \gset
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as open_rec \gset
select bool_and(tests.make_due_row(r, 1, now(), 'Done') is not null) as ok
from unnest(array[:'older', :'newer', :'ok_rec']::uuid[]) as r \gset
update messenger.recording_finalize_attempts set updated_at = now() - interval '1 day'
where recording_id = :'older';
update messenger.recording_finalize_attempts set updated_at = now() - interval '1 hour'
where recording_id in (:'newer', :'ok_rec');
update messenger.call_recordings set failure_reason = 'UploadFailed' where id = :'newer';
create temp table before as select tests.snapshot() as fingerprint;

select results_eq(
    $$select recording_id, session_kind, failure_reason, failed_at
    from recording_finalize.failed_recordings()$$,
    format($$values (%L::uuid, 'Conference', 'UploadFailed', now() - interval '1 hour'),
        (%L::uuid, 'Direct', 'RecorderError', now() - interval '1 day'),
        (%L::uuid, 'Direct', 'RecorderError', null::timestamptz)$$,
        :'newer', :'older', :'by_service'),
    'Failed recordings only, newest settled first, with their reason and the time the '
        || 'product''s row settled (none for one the service failed itself, listed last)'
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
