-- recording_started tells a repeated start from another active recording by what is in the
-- table, not by the name of the constraint that was violated (the table is the service's: it
-- may name its keys as it likes). Here both keys are renamed, inside the transaction.
begin;
select plan(5);

select tests.clean_slate();
alter index messenger.ix_recording_active rename to svc_one_active_recording_per_session;
alter table messenger.call_recordings rename constraint call_recordings_pkey to svc_recording_pk;
select tests.make_session('Direct', null) as live \gset
select tests.make_session('Direct', null) as other \gset
select gen_random_uuid() as rec \gset
select recording_finalize.recording_started(:'rec', 'Direct', :'live', 'Audio', 'Manual')
    is null as started \gset

select throws_ok(
    format($$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        gen_random_uuid(), :'live'),
    'RF007', null, 'another active recording in the session is still RF007'
);
select matches(
    tests.error_of(format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        gen_random_uuid(), :'live')),
    'already has an active recording',
    'and still told apart as such'
);
select lives_ok(
    format($$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        :'rec', :'live'),
    'a repeated start is still a no-op'
);
select matches(
    tests.error_of(format(
        $$select recording_finalize.recording_started(%L, 'Direct', %L, 'Audio', 'Manual')$$,
        :'rec', :'other')),
    '^RF007: .*belongs to another session',
    'the same id in another session is still RF007 "belongs to another session"'
);
select is((select count(*) from messenger.call_recordings), 1::bigint, 'one recording');

select * from finish();
rollback;
