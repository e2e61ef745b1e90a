-- failed_recordings: the newest Failed recordings first, bounded.
begin;
select plan(3);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Failed') as older \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as newer \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as ok_rec \gset
update messenger.call_recordings set failed_at = now() - interval '1 day' where id = :'older';

select results_eq('select recording_id::text from recording_finalize.failed_recordings()',
    format('values (%L), (%L)', :'newer', :'older'), 'Failed recordings, newest first');
select is((select count(*) from recording_finalize.failed_recordings(1)), 1::bigint,
    'p_limit bounds the list');
select throws_ok('select * from recording_finalize.failed_recordings(0)', 'RF001', null,
    'a bad limit is refused');

select * from finish();
rollback;
