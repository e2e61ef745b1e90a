-- operator_requeue_quarantined: dry run writes nothing; a batch requeues and audits each row.
begin;
select plan(8);

select tests.clean_slate();
delete from messenger.recording_finalize_operator_actions;
select tests.make_stuck(p_attempts => 8) as a \gset
select tests.make_stuck(p_attempts => 8) as b \gset
select tests.make_stuck(p_attempts => 8) as c \gset
select tests.make_stuck() as bad_meta \gset
create temp table claimed as select * from tests.claim();
select * from recording_finalize.apply_outcome(:'bad_meta', tests.token(:'bad_meta'),
    'invalid_metadata', p_error => 'format');

create temp table fingerprint as select tests.snapshot() as s;
select is(
    (select count(*) from recording_finalize.operator_requeue_quarantined(
        'ann', 'outage over', p_dry_run => true)),
    4::bigint, 'the dry run lists the quarantined rows'
);
select is(tests.snapshot(), (select s from fingerprint), 'the dry run changed nothing');
select is((select count(*) from messenger.recording_finalize_operator_actions), 0::bigint,
    'and audited nothing');

select is(
    (select count(*) from recording_finalize.operator_requeue_quarantined(
        'ann', 'outage over', p_reason_code => 'crash_loop', p_limit => 2, p_dry_run => false)),
    2::bigint, 'one batch of at most p_limit rows of the reason asked for'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts
        where status = 'Pending' and attempts = 0),
    2::bigint, 'those rows are Pending with attempts 0'
);
select results_eq(
    $$select count(*), count(distinct recording_id), min(operator_name), min(reason)
    from messenger.recording_finalize_operator_actions where action_kind = 'requeue'$$,
    $$values (2::bigint, 2::bigint, 'ann', 'outage over')$$,
    'one audit row per requeued recording'
);
select is(
    (select quarantine_reason::text from messenger.recording_finalize_attempts
        where recording_id = :'bad_meta'),
    'invalid_metadata', 'a row of another reason stays quarantined'
);
select throws_ok(
    $$select * from recording_finalize.operator_requeue_quarantined('ann', 'x',
        p_reason_code => 'bogus')$$,
    'RF001', null, 'an unknown reason code is refused'
);

select * from finish();
rollback;
