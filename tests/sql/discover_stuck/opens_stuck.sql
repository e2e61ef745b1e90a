-- discover_stuck opens a finalize row (Pending, untried, opened_by discovery, due at session end
-- + SLA) for each non-terminal recording whose session ended at least the SLA ago and that has
-- none - never for a terminal recording, a running session, a session within the SLA, a missing
-- session, or a recording whose row exists. The next claim takes the rows it opened.
begin;
select plan(10);

select tests.clean_slate();
create temp table fx (name text, recording_id uuid);
insert into fx values
    ('uploading', tests.make_recording('Direct', tests.make_session('Direct', '2 hours'),
        'Uploading')),
    ('recording_conference', tests.make_recording('Conference',
        tests.make_session('Conference', '3 hours'), 'Recording')),
    ('pending', tests.make_recording('Direct', tests.make_session('Direct', '1 hour'),
        'Pending')),
    ('on_the_dot', tests.make_recording('Direct', tests.make_session('Direct', '30 minutes'),
        'Uploading')),
    ('available', tests.make_recording('Direct', tests.make_session('Direct', '2 hours'),
        'Available')),
    ('failed', tests.make_recording('Conference', tests.make_session('Conference', '2 hours'),
        'Failed')),
    ('running', tests.make_recording('Direct', tests.make_session('Direct', null),
        'Recording')),
    ('within_sla', tests.make_recording('Direct', tests.make_session('Direct', '29 minutes'),
        'Uploading')),
    ('no_session', tests.make_recording('Direct', gen_random_uuid(), 'Uploading')),
    ('has_pending_row', tests.make_stuck(p_attempts => 2,
        p_next_attempt_at => now() + interval '5 minutes')),
    ('has_quarantined_row', tests.make_recording('Direct', tests.make_session('Direct',
        '2 hours'), 'Uploading'));
select tests.make_due_row(recording_id, 8, now() - interval '1 hour', 'Quarantined')
    is not null as ok
from fx where name = 'has_quarantined_row';
create temp table rows_before as select * from messenger.recording_finalize_attempts;
select md5(string_agg(t::text, ',' order by t.id)) as recordings_before
from messenger.call_recordings as t \gset

select is(
    recording_finalize.discover_stuck(100), 4,
    'it opens 4 rows'
);
select set_eq(
    $$select x.name from messenger.recording_finalize_attempts as f
    join fx as x using (recording_id) where f.opened_by = 'discovery'$$,
    $$values ('uploading'), ('recording_conference'), ('pending'), ('on_the_dot')$$,
    'for the stuck recordings only: Uploading, Recording, Pending, ended exactly one SLA ago'
);
select is_empty(
    $$select f.recording_id from messenger.recording_finalize_attempts as f
    join fx as x using (recording_id)
    join messenger.call_recordings as r on r.id = f.recording_id
    left join messenger.call_sessions as c on r.session_kind = 'Direct' and c.id = r.session_id
    left join messenger.conference_sessions as k
        on r.session_kind = 'Conference' and k.id = r.session_id
    where f.opened_by = 'discovery' and not (
        f.status = 'Pending' and f.attempts = 0 and f.claim_token is null
        and f.last_outcome is null and f.last_error is null
        and f.session_kind = r.session_kind and f.session_id = r.session_id
        and f.next_attempt_at = coalesce(c.ended_at, k.ended_at) + interval '30 minutes'
    )$$,
    'each is Pending, untried, with the recording''s session, due at session end + SLA'
);
select set_eq(
    $$select * from messenger.recording_finalize_attempts where opened_by <> 'discovery'$$,
    'select * from rows_before',
    'the rows that existed are untouched'
);
select is(
    (select md5(string_agg(t::text, ',' order by t.id)) from messenger.call_recordings as t),
    :'recordings_before',
    'no recording is touched'
);
select is(
    (select count(*) from messenger.integration_outbox)
        + (select count(*) from messenger.realtime_outbox),
    0::bigint,
    'no outbox row is written'
);
select is(
    recording_finalize.discover_stuck(100), 0,
    'a second call opens nothing: every stuck recording has its row'
);

-- A shorter SLA makes the recording within the old SLA stuck too.
select tests.use_policy(p_sla_timeout => '10 minutes');
select is(
    recording_finalize.discover_stuck(100), 1,
    'with a 10-minute SLA the session ended 29 minutes ago is stuck too'
);
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = (select recording_id from fx where name = 'within_sla')),
    now() - interval '29 minutes' + interval '10 minutes',
    'due at its session end + that SLA'
);

-- Due now: the next claim (with the same 10-minute SLA) hands them to the driver.
select set_eq(
    $$select x.name, c.action from tests.claim(p_sla_timeout => '10 minutes') as c
    join fx as x using (recording_id)$$,
    $$values ('uploading', 'reconcile'), ('recording_conference', 'reconcile'),
        ('pending', 'reconcile'), ('on_the_dot', 'reconcile'), ('within_sla', 'reconcile')$$,
    'the next claim takes every row discovery opened'
);

select * from finish();
rollback;
