-- reschedule in strict mode (the single-id commands): RF005 for an id without a finalize row,
-- RF006 (requeue) or RF020 (retry) for a row in another status; the whole call is refused -
-- nothing changed, nothing audited, the valid ids of the call included.
begin;
select plan(12);

select tests.clean_slate();
select tests.make_stuck() as pending \gset
select tests.make_stuck(p_attempts => 8) as quarantined \gset
update messenger.recording_finalize_attempts
set status = 'Quarantined', quarantine_reason = 'max_attempts'
where recording_id = :'quarantined';
select tests.make_recording('Direct', tests.make_session(), 'Available') as done \gset
select tests.make_due_row(:'done', 1, now(), 'Done') is not null as ok \gset
create temp table before as select tests.snapshot() as fingerprint;

select throws_ok(
    format($$select * from recording_finalize.reschedule(array[%L]::uuid[], 'Quarantined',
        'ann', 'why')$$, gen_random_uuid()),
    'RF005', null, 'requeue of a recording without a finalize row'
);
select throws_ok(
    format($$select * from recording_finalize.reschedule(array[%L]::uuid[], 'Pending',
        'ann', 'why')$$, gen_random_uuid()),
    'RF005', null, 'retry of a recording without a finalize row'
);
select throws_ok(
    format($$select * from recording_finalize.reschedule(array[%L]::uuid[], 'Quarantined',
        'ann', 'why')$$, :'pending'),
    'RF006', null, 'requeue of a Pending row: it is already scheduled'
);
select throws_ok(
    format($$select * from recording_finalize.reschedule(array[%L]::uuid[], 'Quarantined',
        'ann', 'why')$$, :'done'),
    'RF006', null, 'requeue of a Done row: it is finished'
);
select throws_ok(
    format($$select * from recording_finalize.reschedule(array[%L]::uuid[], 'Pending',
        'ann', 'why')$$, :'quarantined'),
    'RF020', null, 'retry of a Quarantined row (requeue it)'
);
select throws_ok(
    format($$select * from recording_finalize.reschedule(array[%L]::uuid[], 'Pending',
        'ann', 'why')$$, :'done'),
    'RF020', null, 'retry of a Done row'
);
select matches(
    tests.error_of(format($$select * from recording_finalize.reschedule(array[%L]::uuid[],
        'Quarantined', 'ann', 'why')$$, :'done')),
    format('^RF006: not_quarantined: the finalize row of recording %s is Done, not Quarantined$',
        :'done'),
    'the message names the recording and its status'
);
select matches(
    tests.error_of(format($$select * from recording_finalize.reschedule(array[%L]::uuid[],
        'Quarantined', 'ann', 'why')$$, tests.fixed_uuid('00000000', 7))),
    format('^RF005: finalize_row_not_found: recording %s has no finalize row$',
        tests.fixed_uuid('00000000', 7)),
    'RF005 names the recording'
);
-- One bad id refuses the whole call: the valid Quarantined one is not requeued either.
select throws_ok(
    format($$select * from recording_finalize.reschedule(array[%L, %L]::uuid[],
        'Quarantined', 'ann', 'why')$$, :'quarantined', :'pending'),
    'RF006', null, 'a strict call with one row in another status is refused as a whole'
);
select throws_ok(
    format($$select * from recording_finalize.reschedule(array[%L, %L]::uuid[],
        'Quarantined', 'ann', 'why')$$, :'quarantined', gen_random_uuid()),
    'RF005', null, 'as is one with an id without a row'
);
select is(tests.snapshot(), (select fingerprint from before), 'nothing changed');
select is(
    (select count(*) from recording_finalize.operator_actions), 0::bigint,
    'nothing was audited'
);

select * from finish();
rollback;
