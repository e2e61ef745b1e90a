-- discover_stuck opens at most p_limit rows per call; the rest wait for the next call.
begin;
select plan(5);

select tests.clean_slate();
select count(tests.make_recording('Direct', tests.make_session('Direct', '2 hours'),
    'Uploading')) as made
from generate_series(1, 5) \gset

select is(recording_finalize.discover_stuck(2), 2, 'p_limit 2: two rows');
select is(
    (select count(*) from messenger.recording_finalize_attempts), 2::bigint,
    'and only two exist'
);
select is(recording_finalize.discover_stuck(2), 2, 'the next call: two more');
select is(recording_finalize.discover_stuck(2), 1, 'then the last one');
select is(
    (select count(distinct recording_id) from messenger.recording_finalize_attempts), 5::bigint,
    'every stuck recording got one row'
);

select * from finish();
rollback;
