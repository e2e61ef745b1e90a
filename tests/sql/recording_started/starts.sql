-- recording_started inserts a Recording recording, once; no finalize row yet.
begin;
select plan(6);

select tests.clean_slate();
select tests.make_session('Direct', null) as session \gset
select gen_random_uuid() as rec \gset

select lives_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Video', 'Auto')$$,
        :'rec', :'session'
    ),
    'a recording starts in a running session'
);
select results_eq(
    format(
        $$select session_kind, session_id, media_type, trigger, status, started_at, ended_at,
            version, file_id
        from messenger.call_recordings where id = %L$$,
        :'rec'
    ),
    format(
        $$values ('Direct'::varchar, %L::uuid, 'Video'::varchar, 'Auto'::varchar,
            'Recording'::varchar, now(), null::timestamptz, 1, null::text)$$,
        :'session'
    ),
    'it is Recording, started now, version 1, no file yet'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts), 0::bigint,
    'no finalize row while recording'
);
select lives_ok(
    format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Video', 'Auto')$$,
        :'rec', :'session'
    ),
    'a repeated start of the same recording is accepted'
);
select is(
    (select count(*) from messenger.call_recordings), 1::bigint,
    'and is a no-op: still one recording'
);

select tests.make_session('Conference', null) as conference \gset
select recording_finalize.recording_started(gen_random_uuid(), 'Conference', :'conference', 'Audio',
    'Manual') is null as started \gset
select is(
    (select count(*) from messenger.call_recordings where session_kind = 'Conference'), 1::bigint,
    'a conference recording starts the same way'
);

select * from finish();
rollback;
