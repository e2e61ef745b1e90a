-- session_ended: an SLA left out is the stored policy's (the worker's), so the finalize row is
-- due when the worker's claim would take it; one given explicitly wins.
begin;
select plan(2);

select tests.clean_slate();
select recording_finalize.set_policy(p_sla_timeout => '10 minutes') is not null as ten \gset
select tests.make_session('Direct', null) as ses \gset
select tests.make_recording('Direct', :'ses', 'Recording') as rec \gset
select recording_finalize.session_ended('Direct', :'ses') as ended \gset
select is(
    (select f.next_attempt_at - s.ended_at
        from messenger.recording_finalize_attempts as f
        join messenger.call_sessions as s on s.id = f.session_id
        where f.recording_id = :'rec'),
    interval '10 minutes',
    'due at the session''s end + the stored SLA'
);

select tests.make_session('Direct', null) as ses2 \gset
select tests.make_recording('Direct', :'ses2', 'Recording') as rec2 \gset
select recording_finalize.session_ended('Direct', :'ses2', interval '1 hour') as ended2 \gset
select is(
    (select f.next_attempt_at - s.ended_at
        from messenger.recording_finalize_attempts as f
        join messenger.call_sessions as s on s.id = f.session_id
        where f.recording_id = :'rec2'),
    interval '1 hour',
    'an SLA given explicitly wins'
);

select * from finish();
rollback;
