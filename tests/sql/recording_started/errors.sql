-- recording_started: RF001 bad kind, media type or trigger (checked by the function itself),
-- RF004 unknown session, RF007 ended session or another active recording (ix_recording_active).
begin;
select plan(13);

select tests.clean_slate();
select tests.make_session('Direct', null) as live \gset
select tests.make_session('Direct', interval '1 minute') as ended \gset
select gen_random_uuid() as first_rec \gset
select recording_finalize.recording_started(:'first_rec', 'Direct', :'live', 'Audio', 'Manual')
    is null as started \gset

select throws_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Group', %L, 'Audio', 'Manual')$$,
        gen_random_uuid(), :'live'
    ),
    'RF001', null, 'an unknown session kind is refused'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_started(%L, null, %L, 'Audio', 'Manual')$$,
        gen_random_uuid(), :'live'
    ),
    'RF001', null, 'a null session kind is refused'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        gen_random_uuid(), gen_random_uuid()
    ),
    'RF004', null, 'an unknown call session is refused'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Conference', %L, 'Audio', 'Manual')$$,
        gen_random_uuid(), :'live'
    ),
    'RF004', null, 'a call session id is not a conference session'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        gen_random_uuid(), :'ended'
    ),
    'RF007', null, 'a session that has ended cannot start a recording'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        gen_random_uuid(), :'live'
    ),
    'RF007', null, 'a second active recording in the same session is refused (ix_recording_active)'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Hologram', 'Manual')$$,
        gen_random_uuid(), tests.make_session('Direct', null)
    ),
    'RF001', null, 'an unknown media type is refused by the function (the table may lack a CHECK)'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, null, 'Manual')$$,
        gen_random_uuid(), tests.make_session('Direct', null)
    ),
    'RF001', null, 'a null media type is refused'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Video', 'Scheduled')$$,
        gen_random_uuid(), tests.make_session('Direct', null)
    ),
    'RF001', null, 'an unknown trigger is refused'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Video', null)$$,
        gen_random_uuid(), tests.make_session('Direct', null)
    ),
    'RF001', null, 'a null trigger is refused'
);
select matches(
    tests.error_of(format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Hologram', 'Manual')$$,
        gen_random_uuid(), tests.make_session('Direct', null))),
    'Hologram',
    'the message names the value refused'
);
select is(
    (select count(*) from messenger.call_recordings), 1::bigint,
    'none of the refused starts left a row'
);

-- Once the first recording is terminal, the session may record again.
update messenger.call_recordings
set status = 'Failed', failure_reason = 'RecorderError', failed_at = now()
where id = :'first_rec';
select lives_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        gen_random_uuid(), :'live'
    ),
    'a new recording may start after the previous one is terminal'
);

select * from finish();
rollback;
