-- quarantined_rows: the runbook listing - quarantined rows only, oldest first, limited.
begin;
select plan(6);

select tests.clean_slate();
select tests.make_stuck() as pending \gset
select tests.make_stuck(p_attempts => 8) as older \gset
select tests.make_stuck(p_attempts => 5) as newer \gset
update messenger.recording_finalize_attempts
set status = 'Quarantined', last_error = 'Transient: S3Timeout',
    updated_at = now() - interval '2 days'
where recording_id = :'older';
update messenger.recording_finalize_attempts
set status = 'Quarantined', last_error = 'InvalidMetadata: bad',
    updated_at = now() - interval '1 day'
where recording_id = :'newer';

select results_eq(
    $$select recording_id::text, attempts, last_error, quarantined_at
    from recording_finalize.quarantined_rows()$$,
    format(
        $$values (%L, 8, 'Transient: S3Timeout', now() - interval '2 days'),
            (%L, 5, 'InvalidMetadata: bad', now() - interval '1 day')$$,
        :'older', :'newer'
    ),
    'quarantined rows, oldest first, with attempts and last error'
);
select results_eq(
    'select recording_id::text from recording_finalize.quarantined_rows(1)',
    format('values (%L)', :'older'),
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
