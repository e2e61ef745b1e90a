-- discover_stuck and a session with two active recordings (a call recorded as audio and video):
-- a slice that ends inside the session passes over none of them. The next call reads that
-- session again from its start; a slice of that one session only goes on after it.
begin;
select plan(5);

select tests.clean_slate();
update recording_finalize.discovery_sweep
set after_session_kind = null, after_session_id = null, sweeps = 0;
-- A service that records a call's audio and video apart: the reference schema's one active
-- recording per session is not its rule (the index stays, without the uniqueness).
drop index messenger.ix_recording_active;
create index ix_recording_active on messenger.call_recordings (session_kind, session_id)
where status in ('Pending', 'Recording', 'Uploading');

-- Session 1 with one stuck recording, session 2 with two (ended two hours ago).
select tests.make_recording('Direct',
    tests.make_session('Direct', interval '2 hours', p_id => tests.fixed_uuid('d15c0001', 1)),
    'Uploading') as single \gset
select tests.make_session('Direct', interval '2 hours', p_id => tests.fixed_uuid('d15c0001', 2))
    as both_session \gset
select tests.make_recording('Direct', :'both_session', 'Uploading', p_media_type => 'Audio')
    as audio \gset
select tests.make_recording('Direct', :'both_session', 'Uploading', p_media_type => 'Video')
    as video \gset

select is(recording_finalize.discover_stuck(10, 2), 2,
    'the first slice (session 1, one of session 2''s two): both opened');
select is(
    (select after_session_id from recording_finalize.discovery_sweep),
    tests.fixed_uuid('d15c0001', 1),
    'the sweep stands after session 1: session 2 may go on past the slice'
);
select is(recording_finalize.discover_stuck(10, 2), 1,
    'the next slice (session 2 whole): its other recording opened');
select is(recording_finalize.discover_stuck(10, 2), 0, 'past the end: nothing more');
select set_eq(
    $$select recording_id from messenger.recording_finalize_attempts$$,
    format($$values (%L::uuid), (%L::uuid), (%L::uuid)$$, :'single', :'audio', :'video'),
    'all three stuck recordings were found in one sweep'
);

select * from finish();
rollback;
