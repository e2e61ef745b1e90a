-- explain's next is decided by recording_finalize_internal.claim_decision, as the worker will
-- decide it at the moment the row is due, with the caller's policy: each action (reconcile,
-- deferred_by_sla, republished, closed, quarantined with its reason code), none for a Done or
-- Quarantined row, and for a recording without a row: discover when it is an orphan the next
-- cycle's discovery opens a row for, none otherwise.
begin;
select plan(19);

select tests.clean_slate();
select tests.make_stuck() as reconcile_rec \gset
select tests.make_recording('Direct', tests.make_session('Direct', null), 'Recording')
    as not_ended \gset
select tests.make_due_row(:'not_ended') is not null as ok \gset
select tests.make_stuck(p_ended_ago => '5 minutes') as within_sla \gset
select tests.make_stuck(p_status => 'Available') as republish_rec \gset
select tests.make_stuck() as closed_available \gset
select recording_finalize.recording_ingest_completed(:'closed_available', 'recordings/c', 1, 1,
    'Ogg') as ingested \gset
update messenger.recording_finalize_attempts set status = 'Pending'
where recording_id = :'closed_available';
select tests.make_stuck(p_status => 'Failed') as closed_failed \gset
select tests.make_stuck(p_attempts => 8) as crash_loop \gset
select tests.make_stuck(p_attempts => 8) as max_attempts \gset
update messenger.recording_finalize_attempts set last_outcome = 'transient'
where recording_id = :'max_attempts';
select tests.make_stuck() as no_recording \gset
delete from messenger.call_recordings where id = :'no_recording';
select tests.make_stuck() as no_session \gset
delete from messenger.call_sessions
where id = (select session_id from messenger.call_recordings where id = :'no_session');
-- Due in 15 minutes; its session ended 20 minutes ago: within the SLA now, past it then.
select tests.make_stuck(p_ended_ago => '20 minutes',
    p_next_attempt_at => now() + interval '15 minutes') as later \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as done \gset
select tests.make_due_row(:'done', 1, now(), 'Done') is not null as ok \gset
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as quarantined \gset
select tests.make_due_row(:'quarantined', 8, now(), 'Quarantined', now(), 'invalid_metadata')
    is not null as ok \gset
select tests.make_recording('Direct', tests.make_session(), 'Recording') as orphan \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as terminal \gset
select tests.make_recording('Direct', tests.make_session('Direct', '5 minutes'), 'Recording')
    as young \gset

create temp table expected (rec uuid, action text, detail text, reason text);
insert into expected values
    (:'reconcile_rec', 'reconcile', 'Uploading', null),
    (:'not_ended', 'deferred_by_sla', 'SessionNotEnded', null),
    (:'within_sla', 'deferred_by_sla', 'WithinSla', null),
    (:'republish_rec', 'republished', 'Available', null),
    (:'closed_available', 'closed', 'Available', null),
    (:'closed_failed', 'closed', 'Failed', null),
    (:'crash_loop', 'quarantined', 'MaxAttemptsExceeded', 'crash_loop'),
    (:'max_attempts', 'quarantined', 'MaxAttemptsExceeded', 'max_attempts'),
    (:'no_recording', 'quarantined', 'RecordingNotFound', 'recording_not_found'),
    (:'no_session', 'quarantined', 'SessionNotFound', 'session_not_found'),
    (:'later', 'reconcile', 'Uploading', null);

create temp table docs as
select e.rec, recording_finalize.explain(e.rec) as d from expected as e;

-- 11: each Pending row's next, as the claim would decide it.
select is(
    (select array[d -> 'next' ->> 'action', d -> 'next' ->> 'detail',
        d -> 'next' ->> 'quarantineReason'] from docs where rec = e.rec),
    array[e.action, e.detail, e.reason],
    format('next for a %s row: %s', e.detail, e.action)
)
from expected as e;

-- 1: the same answer claim_decision gives for the row's state at the moment it is due.
select set_eq(
    $$select rec, d -> 'next' ->> 'action' as action, d -> 'next' ->> 'detail' as detail
    from docs$$,
    $$select f.recording_id, c.action, c.detail
    from messenger.recording_finalize_attempts as f
    left join messenger.call_recordings as r on r.id = f.recording_id
    left join lateral (select (recording_finalize_internal.session_of(
        f.session_kind, f.session_id)).*) as s on true
    cross join lateral recording_finalize_internal.claim_decision(
        r.status,
        r.status = 'Available' and (
            exists (select from recording_finalize.outbox as o where o.recording_id = r.id)
            or exists (select from messenger.integration_outbox as o
                where o.topic = 'pin.messenger.call-recording-available.v1'
                    and o.dedupe_key = r.id::text)),
        s.id is not null, s.ended_at, f.attempts, f.last_outcome, 8, interval '30 minutes',
        greatest(f.next_attempt_at, now())) as c
    where f.recording_id in (select rec from expected)$$,
    'explain''s next is claim_decision''s decision'
);

-- 2: the row due later is decided at its due time.
select results_eq(
    format($$select (d -> 'next' ->> 'due')::boolean, (d -> 'next' ->> 'at')::timestamptz
        from docs where rec = %L$$, :'later'),
    $$values (false, now() + interval '15 minutes')$$,
    'a row due in 15 minutes is decided for then: past the SLA by then, so reconcile'
);
select recording_finalize.set_policy(p_max_attempts => 20) is not null as twenty \gset
select is(
    (recording_finalize.explain(:'crash_loop') -> 'next' ->> 'action'),
    'reconcile',
    'with the stored policy: 20 attempts allow the exhausted-at-8 row another check'
);

-- 2: rows that are not Pending.
select results_eq(
    format($$select recording_finalize.explain(%L) -> 'next' ->> 'action',
        recording_finalize.explain(%L) -> 'next' ->> 'text'$$, :'done', :'done'),
    $$values ('none', 'nothing: the finalize row is Done')$$,
    'a Done row: nothing'
);
select results_eq(
    format($$select recording_finalize.explain(%L) -> 'next' ->> 'action',
        recording_finalize.explain(%L) -> 'next' ->> 'text'$$, :'quarantined', :'quarantined'),
    $$values ('none', 'nothing until an operator requeues it: quarantined (invalid_metadata)')$$,
    'a Quarantined row: nothing until a requeue, with its reason'
);

-- 3: recordings without a finalize row.
select results_eq(
    format($$select d -> 'next' ->> 'action', (d -> 'next' ->> 'orphan')::boolean, d -> 'finalize'
        from recording_finalize.explain(%L) as d$$, :'orphan'),
    $$values ('discover', true, 'null'::jsonb)$$,
    'an orphan (session ended past the SLA, no row): discover'
);
select results_eq(
    format($$select d -> 'next' ->> 'action', (d -> 'next' ->> 'orphan')::boolean,
        d -> 'next' ->> 'text' from recording_finalize.explain(%L) as d$$, :'terminal'),
    $$values ('none', false, 'nothing: the recording is Failed and has no finalize row')$$,
    'a terminal recording without a row: nothing'
);
select results_eq(
    format($$select d -> 'next' ->> 'action', (d -> 'next' ->> 'orphan')::boolean
        from recording_finalize.explain(%L) as d$$, :'young'),
    $$values ('none', false)$$,
    'a recording whose session ended within the SLA: not an orphan yet'
);

select * from finish();
rollback;
