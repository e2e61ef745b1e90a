-- discover_stuck reads the active recordings a slice per call (p_scan), in ix_recording_active
-- order after where the previous call stopped, and starts over at the end: every stuck
-- recording is found within one sweep, whatever the slice, and a slice p_limit cut short is
-- read again. A full slice's last session is read again by the next call (it may go on past
-- the slice: two_recordings_in_one_session.sql).
begin;
select plan(8);

select tests.clean_slate();
update recording_finalize.discovery_sweep
set after_session_kind = null, after_session_id = null, sweeps = 0;

-- Six active recordings, in sessions whose ids fix their order: 1, 3, 4 and 6 are stuck (their
-- session ended two hours ago), 2 and 5 are still recording.
create temp table active as
select n, tests.fixed_uuid('d15c0000', n) as session_id,
    tests.make_recording('Direct',
        tests.make_session('Direct', case when n in (2, 5) then null else interval '2 hours' end,
            p_id => tests.fixed_uuid('d15c0000', n)),
        case when n in (2, 5) then 'Recording' else 'Uploading' end) as recording_id
from generate_series(1, 6) as n;

-- p_limit 1 cuts the first slice (sessions 1, 2, 3: 1 and 3 stuck): it is read again.
select is(recording_finalize.discover_stuck(1, 3), 1,
    'p_limit 1 opens one of the first slice''s two');
select is(
    (select after_session_id from recording_finalize.discovery_sweep), null,
    'a slice the limit cut short is read again'
);
select is(recording_finalize.discover_stuck(10, 3), 1,
    'read again: the other one');
select is(
    (select after_session_id from recording_finalize.discovery_sweep),
    tests.fixed_uuid('d15c0000', 2),
    'the sweep stands after the slice''s last session but one (that session may go on past '
        || 'the slice)'
);
select is(recording_finalize.discover_stuck(10, 3), 1,
    'the next slice (sessions 3, 4, 5): one stuck');
select is(recording_finalize.discover_stuck(10, 3), 1,
    'the last slice (sessions 5, 6), short: one stuck');
select is(
    (select (after_session_id is null, sweeps) from recording_finalize.discovery_sweep),
    (true, 1::bigint),
    'at the end the sweep starts over, counted'
);
select set_eq(
    $$select recording_id from messenger.recording_finalize_attempts$$,
    $$select recording_id from active where n in (1, 3, 4, 6)$$,
    'every stuck recording was found in one sweep, and only those'
);

select * from finish();
rollback;
