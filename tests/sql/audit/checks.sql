-- audit: each invariant check finds what was planted, and only that.
begin;
select plan(8);

select tests.clean_slate();
delete from messenger.integration_outbox_pruned;
create temp table clean as
select check_name, coalesce(reason, '-') as reason, found from recording_finalize.audit();
select is((select sum(found) from clean), 0::numeric, 'an empty database is clean');

-- Planted: an orphan, an Available recording without event, a Done row of an active recording,
-- an overdue unpublished event, and two quarantined rows.
select tests.make_recording('Direct', tests.make_session()) as orphan \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as silent \gset
select tests.make_stuck() as done_active \gset
update messenger.recording_finalize_attempts set status = 'Done'
where recording_id = :'done_active';
select tests.make_recording('Direct', tests.make_session()) as late \gset
select messenger.recording_ingest_completed(:'late', 'files/l', 1, 1, 'Ogg');
update messenger.integration_outbox set created_at = now() - interval '5 minutes'
where dedupe_key = :'late';
select tests.make_stuck(p_attempts => 8) as q1 \gset
select tests.make_stuck(p_attempts => 8) as q2 \gset
create temp table claimed as select * from tests.claim();

create temp table found as
select check_name, coalesce(reason, '-') as reason, found, examples
from recording_finalize.audit(p_examples => 5);

select results_eq(
    $$select found, examples from found where check_name = 'orphaned_recordings'$$,
    format($$values (1::bigint, array[%L]::text[])$$, :'orphan'),
    'the orphan, with its id'
);
select results_eq(
    $$select found, examples from found where check_name = 'available_without_event'$$,
    format($$values (1::bigint, array[%L]::text[])$$, :'silent'),
    'the Available recording without its event'
);
select results_eq(
    $$select found, examples from found where check_name = 'done_not_terminal'$$,
    format($$values (1::bigint, array[%L]::text[])$$, :'done_active'),
    'the Done row of a recording that is not terminal'
);
select results_eq(
    $$select found, examples from found where check_name = 'unpublished_overdue'$$,
    format($$values (1::bigint, array[%L]::text[])$$, :'late'),
    'the event older than one polling interval'
);
select results_eq(
    $$select reason, found from found where check_name = 'quarantined'$$,
    $$values ('crash_loop', 2::bigint)$$,
    'quarantined rows by reason'
);
select is(
    (select found from recording_finalize.audit(p_polling_interval => '1 hour')
        where check_name = 'unpublished_overdue'),
    0::bigint, 'a longer polling interval tolerates the younger event'
);
select throws_ok(
    $$select * from recording_finalize.audit(p_examples => 101)$$,
    'RF001', null, 'bad arguments are refused'
);

select * from finish();
rollback;
