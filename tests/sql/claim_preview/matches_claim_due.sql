-- claim_preview equals claim_due: for a mix of every kind of due row, the preview's action,
-- attempts, detail and quarantine reason are what the claim then does, recording by recording.
begin;
select plan(5);

select tests.clean_slate();
-- Its outbox keeps what it delivered: service_events remembers past every recording below.
select tests.make_remembering_service() is not null as remembering \gset
create temp table mix (name text, recording_id uuid);
insert into mix values
    ('reconcile', tests.make_stuck()),
    ('conference_recording', tests.make_stuck('Conference', p_status => 'Recording',
        p_attempts => 3)),
    ('last_attempt', tests.make_stuck(p_attempts => 7)),
    ('crash_loop', tests.make_stuck(p_attempts => 8)),
    ('max_attempts', tests.make_stuck(p_attempts => 9)),
    ('within_sla', tests.make_stuck(p_ended_ago => '10 minutes')),
    ('on_the_dot', tests.make_stuck(p_ended_ago => '30 minutes')),
    ('running', tests.make_stuck(p_ended_ago => null, p_attempts => 2)),
    ('republish', tests.make_stuck(p_status => 'Available')),
    ('published', tests.make_stuck(p_status => 'Available')),
    ('failed', tests.make_stuck('Conference', p_status => 'Failed', p_attempts => 4)),
    ('no_session', tests.make_recording('Direct', gen_random_uuid(), 'Uploading')),
    ('no_recording', gen_random_uuid());
update messenger.recording_finalize_attempts set last_outcome = 'transient'
where recording_id = (select recording_id from mix where name = 'max_attempts');
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
select 'pin.messenger.call-recording-available.v1', 'k', 'call-recording-available',
    recording_id::text, '{}'
from mix where name = 'published';
select tests.make_due_row(recording_id) is not null as ok from mix where name = 'no_session';
insert into messenger.recording_finalize_attempts (
    recording_id, session_kind, session_id, next_attempt_at
)
select recording_id, 'Direct', gen_random_uuid(), now() - interval '1 minute'
from mix where name = 'no_recording';

create temp table preview as
select * from recording_finalize.claim_preview();
create temp table claimed as select * from tests.claim();
create temp table after_claim as
select f.recording_id, f.quarantine_reason::text as quarantine_reason
from messenger.recording_finalize_attempts as f;

select is((select count(*) from preview), 13::bigint, 'the preview reports all 13 due rows');
select set_eq(
    'select action from preview',
    $$values ('reconcile'), ('quarantined'), ('deferred_by_sla'), ('republished'),
        ('closed')$$,
    'the mix covers every action a preview can report'
);
select set_eq(
    $$select m.name, p.action, p.attempts, p.detail from preview as p
    join mix as m using (recording_id)$$,
    $$select m.name, c.action, c.attempts, c.detail from claimed as c
    join mix as m using (recording_id)$$,
    'per recording: the action, attempts and detail the claim returned'
);
select set_eq(
    $$select m.name, p.quarantine_reason from preview as p join mix as m using (recording_id)$$,
    $$select m.name, a.quarantine_reason from after_claim as a join mix as m using (recording_id)$$,
    'per recording: the quarantine reason the claim wrote (NULL where it quarantined nothing)'
);
select results_eq(
    $$select m.name, p.action, p.quarantine_reason from preview as p
    join mix as m using (recording_id) where p.action = 'quarantined' order by m.name$$,
    $$values ('crash_loop', 'quarantined', 'crash_loop'),
        ('max_attempts', 'quarantined', 'max_attempts'),
        ('no_recording', 'quarantined', 'recording_not_found'),
        ('no_session', 'quarantined', 'session_not_found')$$,
    'the four quarantines, each with its own reason'
);

select * from finish();
rollback;
