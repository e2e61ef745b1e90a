-- quarantined_rows: the runbook listing - Quarantined rows only, oldest first, with attempts,
-- last error and quarantine reason, limited; read-only.
begin;
select plan(8);

select tests.clean_slate();
select tests.make_stuck() as pending \gset
select tests.make_stuck(p_attempts => 8) as older \gset
select tests.make_stuck(p_attempts => 5) as newer \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as done \gset
select tests.make_due_row(:'done', 1, now(), 'Done') is not null as ok \gset
update messenger.recording_finalize_attempts
set status = 'Quarantined', quarantine_reason = 'max_attempts',
    last_error = 'MaxAttemptsExceeded: 8 attempts', updated_at = now() - interval '2 days'
where recording_id = :'older';
update messenger.recording_finalize_attempts
set status = 'Quarantined', quarantine_reason = 'invalid_metadata',
    last_error = 'InvalidMetadata: bad', updated_at = now() - interval '1 day'
where recording_id = :'newer';
create temp table before as select tests.snapshot() as fingerprint;

select results_eq(
    $$select recording_id, attempts, last_error, quarantine_reason, quarantined_at
    from recording_finalize.quarantined_rows()$$,
    format(
        $$values (%L::uuid, 8, 'MaxAttemptsExceeded: 8 attempts', 'max_attempts',
                now() - interval '2 days'),
            (%L::uuid, 5, 'InvalidMetadata: bad', 'invalid_metadata', now() - interval '1 day')$$,
        :'older', :'newer'
    ),
    'quarantined rows only, oldest first, with attempts, last error and reason'
);
select is(tests.snapshot(), (select fingerprint from before), 'the listing wrote nothing');
select results_eq(
    'select recording_id from recording_finalize.quarantined_rows(1)',
    format('values (%L::uuid)', :'older'),
    'p_limit bounds the listing'
);
select results_eq(
    'select session_kind, session_id from recording_finalize.quarantined_rows(1)',
    format(
        $$select session_kind::text, session_id from messenger.recording_finalize_attempts
        where recording_id = %L$$,
        :'older'
    ),
    'each row names its session'
);
-- Equal times are ordered by recording id: a stable order for the bulk requeue's pages (30
-- rows written in descending id order, read without the index that would sort them anyway).
insert into messenger.recording_finalize_attempts (recording_id, session_kind, session_id,
    status, attempts, next_attempt_at, quarantine_reason, updated_at)
select tests.fixed_uuid('0000000a', 100 - n), 'Direct', gen_random_uuid(), 'Quarantined', 8,
    now(), 'max_attempts', now() - interval '3 days'
from generate_series(1, 30) as n;
set local enable_indexscan = off;
set local enable_indexonlyscan = off;
set local enable_bitmapscan = off;
select results_eq(
    'select recording_id from recording_finalize.quarantined_rows(30)',
    $$select tests.fixed_uuid('0000000a', 100 - n) from generate_series(30, 1, -1) as n$$,
    'rows quarantined at the same time come in recording-id order'
);
reset enable_indexscan;
reset enable_indexonlyscan;
reset enable_bitmapscan;
select throws_ok(
    'select * from recording_finalize.quarantined_rows(0)', 'RF001', null,
    'limit 0 is refused'
);
select throws_ok(
    'select * from recording_finalize.quarantined_rows(10001)', 'RF001', null,
    'a limit above 10000 is refused'
);
select throws_ok(
    'select * from recording_finalize.quarantined_rows(null)', 'RF001', null,
    'a null limit is refused'
);

select * from finish();
rollback;
