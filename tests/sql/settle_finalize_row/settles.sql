-- settle_finalize_row: the one way a finalize row ends - Done or Quarantined, claim token spent,
-- last_error replaced (cut to 512) or kept, an attempt counted on request, a Done row never
-- settled again, RF001 for any other status.
begin;
select plan(9);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
update messenger.recording_finalize_attempts
set claim_token = gen_random_uuid(), last_error = 'Transient: earlier', attempts = 2
where recording_id = :'rec';

select is(
    recording_finalize.settle_finalize_row(:'rec', 'Quarantined', repeat('e', 600)), 2,
    'quarantined; returns the attempts'
);
select results_eq(
    format($$select status, claim_token, length(last_error) from
        messenger.recording_finalize_attempts where recording_id = %L$$, :'rec'),
    $$values ('Quarantined'::varchar, null::uuid, 512)$$,
    'status set, token spent, last_error cut to the column''s 512 characters'
);
select is(
    recording_finalize.settle_finalize_row(:'rec', 'Done', p_count_attempt => true), 3,
    'a quarantined row may still be closed Done (the callback came); the attempt is counted'
);
select results_eq(
    format($$select status, length(last_error) from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'rec'),
    $$values ('Done'::varchar, 512)$$,
    'without a new error the last one is kept'
);
select is(
    recording_finalize.settle_finalize_row(:'rec', 'Quarantined', 'late'), null,
    'a Done row is never settled again (NULL: nothing settled)'
);
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'rec'),
    'Done',
    'it stays Done'
);
select is(
    recording_finalize.settle_finalize_row(gen_random_uuid(), 'Done'), null,
    'no row, nothing settled'
);
select throws_ok(
    format($$select recording_finalize.settle_finalize_row(%L, 'Pending')$$, :'rec'),
    'RF001', null, 'Pending is not a settlement'
);
select throws_ok(
    format($$select recording_finalize.settle_finalize_row(%L, null)$$, :'rec'),
    'RF001', null, 'nor is NULL'
);

select * from finish();
rollback;
