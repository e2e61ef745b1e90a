-- audit: a stuck recording whose session the adapter's sessions view does not show (purged by
-- the service's retention) has no finalize row, and discovery, which finds stuck recordings
-- through their session's end, never opens one: nothing would ever say so. audit counts it once
-- it has been quiet for the SLA; one with a finalize row (the claim quarantines it:
-- session_not_found), a terminal one or a young one is not a finding.
begin;
select plan(4);

select tests.clean_slate();

-- Uploading, its last sign of life two hours ago, its session gone.
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as lost \gset
update messenger.call_recordings
set started_at = now() - interval '3 hours', ended_at = now() - interval '2 hours'
where id = :'lost';
delete from messenger.call_sessions
where id = (select session_id from messenger.call_recordings where id = :'lost');
-- Not findings: a recording of a session that has not been written yet (ten minutes old), one
-- of a purged session that has a finalize row, and a Failed one of a purged session.
select tests.make_recording('Direct', gen_random_uuid(), 'Recording') as young \gset
update messenger.call_recordings set started_at = now() - interval '10 minutes', ended_at = null
where id = :'young';
select tests.make_stuck() as with_row \gset
delete from messenger.call_sessions
where id = (select session_id from messenger.call_recordings where id = :'with_row');
select tests.make_recording('Direct', gen_random_uuid(), 'Failed') as failed \gset

select results_eq(
    $$select found, examples from recording_finalize.audit()
    where check_name = 'recordings_without_session'$$,
    format($$values (1::bigint, array[%L]::text[])$$, :'lost'),
    'the stuck recording of a purged session, with its id'
);
select is(
    (select found from recording_finalize.audit() where check_name = 'orphaned_recordings'),
    0::bigint, 'not an orphan: discovery would not open a row for it'
);
select is(recording_finalize.discover_stuck(), 0, 'discovery does not find it');
select recording_finalize.set_policy(p_sla_timeout => '24 hours') is not null as day \gset
select is(
    (select found from recording_finalize.audit()
        where check_name = 'recordings_without_session'),
    0::bigint, 'the policy''s SLA decides how long it must have been quiet'
);

select * from finish();
rollback;
