-- operator_state: the quarantined rows counted by the quarantine_reason the quarantining
-- function wrote (the claim: crash_loop, max_attempts, recording_not_found, session_not_found;
-- apply_outcome: invalid_metadata); other rows are not counted.
begin;
select plan(2);

select tests.clean_slate();
select is(
    (select quarantined_by_reason from recording_finalize.operator_state()), '{}'::jsonb,
    'nothing quarantined: an empty object'
);
select tests.make_stuck(p_attempts => 8) as crash_a \gset
select tests.make_stuck(p_attempts => 8) as crash_b \gset
select tests.make_stuck(p_attempts => 8) as answered \gset
update messenger.recording_finalize_attempts set last_outcome = 'transient'
where recording_id = :'answered';
select tests.make_stuck() as bad_metadata \gset
select tests.make_due_row(tests.make_recording('Direct', gen_random_uuid(), 'Uploading'))
    is not null as no_session \gset
insert into messenger.recording_finalize_attempts (
    recording_id, session_kind, session_id, next_attempt_at
)
values (gen_random_uuid(), 'Direct', gen_random_uuid(), now() - interval '1 minute');
select tests.make_stuck() as pending \gset
select tests.make_stuck(p_status => 'Failed') as done \gset
create temp table claimed as select * from tests.claim();
select result as applied from tests.apply(:'bad_metadata', 'invalid_metadata',
    p_error => 'ffprobe: no duration') \gset

select is(
    (select quarantined_by_reason from recording_finalize.operator_state()),
    '{"crash_loop": 2, "max_attempts": 1, "invalid_metadata": 1, "recording_not_found": 1,
        "session_not_found": 1}'::jsonb,
    'one count per reason, as the claim and apply_outcome wrote them'
);
select * from finish();
rollback;
