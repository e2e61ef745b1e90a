-- A start that names an existing recording id with another session is refused (RF007), not
-- silently accepted (DBA review finding 10); the same session is still the no-op.
begin;
select plan(3);

select tests.clean_slate();
select tests.make_session('Direct', null) as s1, tests.make_session('Direct', null) as s2 \gset
select gen_random_uuid() as rec \gset
select recording_finalize.recording_started(:'rec', 'Direct', :'s1', 'Audio', 'Manual');
select lives_ok(
    format($$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        :'rec', :'s1'),
    'the same start again is a no-op'
);
select throws_ok(
    format($$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        :'rec', :'s2'),
    'RF007', null, 'the same id in another session is refused'
);
select is((select session_id from messenger.call_recordings where id = :'rec'), :'s1'::uuid,
    'the recording keeps its session');

select * from finish();
rollback;
