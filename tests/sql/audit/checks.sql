-- audit: each invariant check finds what was planted, and only that: orphans, Available
-- recordings without their event (within the lookback, no Pending row to enqueue it), Done rows
-- of recordings that are not terminal (within the lookback), events unpublished longer than a
-- polling interval, quarantined rows by reason. Read-only.
begin;
select plan(12);

select tests.clean_slate();
select results_eq(
    $$select check_name, reason, found, examples from recording_finalize.audit()$$,
    $$values ('available_without_event', null::text, 0::bigint, null::text[]),
        ('orphaned_recordings', null, 0, null),
        ('recordings_without_session', null, 0, null),
        ('done_not_terminal', null, 0, null),
        ('unpublished_overdue', null, 0, null),
        ('quarantined', null, 0, array[]::text[])$$,
    'an empty database: every check, nothing found'
);

-- Findings.
select tests.make_recording('Direct', tests.make_session(), 'Recording') as orphan \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as silent \gset
select tests.make_stuck() as done_active \gset
update messenger.recording_finalize_attempts set status = 'Done'
where recording_id = :'done_active';
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as late \gset
select recording_finalize.recording_ingest_completed(:'late', 'files/l', 1, 1, 'Ogg')
    as ingested \gset
update recording_finalize.outbox set created_at = now() - interval '5 minutes'
where recording_id = :'late';
select tests.make_stuck(p_attempts => 8) as q1 \gset
select tests.make_stuck(p_attempts => 8) as q2 \gset
create temp table claimed as select * from tests.claim();
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as q3 \gset
select tests.make_due_row(:'q3', 2, now(), 'Quarantined', now(), 'invalid_metadata')
    is not null as ok \gset
-- Not findings: an Available recording whose Pending row will enqueue its event, one that
-- became Available before the lookback, a Done row of an active recording settled before it,
-- an event younger than the polling interval.
select tests.make_stuck(p_status => 'Available', p_next_attempt_at => now() + interval '1 hour')
    as will_republish \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as old_silent \gset
update messenger.call_recordings set available_at = now() - interval '2 days'
where id = :'old_silent';
select tests.make_stuck() as old_done_active \gset
update messenger.recording_finalize_attempts set status = 'Done',
    updated_at = now() - interval '2 days'
where recording_id = :'old_done_active';
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as fresh \gset
select recording_finalize.recording_ingest_completed(:'fresh', 'files/f', 1, 1, 'Ogg')
    as ingested2 \gset

create temp table before as select tests.snapshot() as fingerprint;
create temp table found as
select check_name, coalesce(reason, '-') as reason, found, examples
from recording_finalize.audit(p_examples => 5);
select is(tests.snapshot(), (select fingerprint from before), 'audit wrote nothing');

select results_eq(
    $$select found, examples from found where check_name = 'orphaned_recordings'$$,
    format($$values (1::bigint, array[%L]::text[])$$, :'orphan'),
    'the orphan, with its id'
);
select results_eq(
    $$select found, examples from found where check_name = 'available_without_event'$$,
    format($$values (1::bigint, array[%L]::text[])$$, :'silent'),
    'the Available recording without its event (not the one a Pending row will enqueue, nor '
        || 'the one before the lookback)'
);
select results_eq(
    $$select found, examples from found where check_name = 'done_not_terminal'$$,
    format($$values (1::bigint, array[%L]::text[])$$, :'done_active'),
    'the Done row of a recording that is not terminal (within the lookback)'
);
select results_eq(
    $$select found, examples from found where check_name = 'unpublished_overdue'$$,
    format($$values (1::bigint, array[%L]::text[])$$, :'late'),
    'the event older than one polling interval'
);
select results_eq(
    $$select reason, found, examples from found where check_name = 'quarantined'
    order by reason$$,
    format($$values ('crash_loop', 2::bigint, (select array_agg(x order by x)
            from unnest(array[%L, %L]::text[]) as x)),
        ('invalid_metadata', 1::bigint, array[%L]::text[])$$, :'q1', :'q2', :'q3'),
    'quarantined rows, one line per reason, with their ids'
);
select is(
    (select found from recording_finalize.audit(p_polling_interval => '1 hour')
        where check_name = 'unpublished_overdue'),
    0::bigint, 'a longer polling interval tolerates the younger event'
);
select is(
    (select found from recording_finalize.audit(p_lookback => '3 days')
        where check_name = 'available_without_event'),
    2::bigint, 'a longer lookback reaches the older Available recording'
);
select is(
    (select examples from recording_finalize.audit(p_examples => 1)
        where check_name = 'quarantined' and reason = 'crash_loop'),
    (select array[min(x)] from unnest(array[:'q1', :'q2']::text[]) as x),
    'p_examples bounds the ids shown (lowest first), not the count'
);
select recording_finalize.set_policy(p_sla_timeout => '24 hours') is not null as day \gset
select is(
    (select found from recording_finalize.audit()
        where check_name = 'orphaned_recordings'),
    0::bigint, 'the policy''s SLA decides who is an orphan'
);
select throws_ok($$select * from recording_finalize.audit(p_examples => 101)$$,
    'RF001', null, 'too many examples are refused');

select * from finish();
rollback;
