-- operator_state: the quarantined rows counted by reason.
begin;
select plan(1);

select tests.clean_slate();
select tests.make_stuck(p_attempts => 8) as a \gset
select tests.make_stuck(p_attempts => 8) as b \gset
select tests.make_stuck() as c \gset
create temp table claimed as select * from tests.claim();
select * from recording_finalize.apply_outcome(:'c', tests.token(:'c'), 'invalid_metadata');
update messenger.recording_finalize_attempts set quarantine_reason = null where recording_id = :'b';
select is(
    (select quarantined_by_reason from recording_finalize.operator_state()),
    '{"crash_loop": 1, "invalid_metadata": 1, "unknown": 1}'::jsonb,
    'one count per reason; a row without a code is unknown'
);

select * from finish();
rollback;
