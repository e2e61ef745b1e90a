-- requeue: RF005 without a finalize row, RF006 for a row that is not Quarantined (strict, as
-- reschedule), RF001 for a blank reason or a NULL id; nothing changed.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_stuck() as pending \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as done \gset
select tests.make_due_row(:'done', 1, now(), 'Done') is not null as ok \gset
select tests.make_stuck(p_attempts => 8) as quarantined \gset
update messenger.recording_finalize_attempts
set status = 'Quarantined', quarantine_reason = 'max_attempts'
where recording_id = :'quarantined';
create temp table before as select tests.snapshot() as fingerprint;

select throws_ok(
    format('select * from recording_finalize.requeue(%L)', gen_random_uuid()),
    'RF005', null, 'a recording without a finalize row cannot be requeued'
);
select throws_ok(
    format('select * from recording_finalize.requeue(%L)', :'pending'),
    'RF006', null, 'a Pending row is already scheduled: refused'
);
select throws_ok(
    format('select * from recording_finalize.requeue(%L)', :'done'),
    'RF006', null, 'a Done row is finished: refused'
);
select matches(
    tests.error_of(format('select * from recording_finalize.requeue(%L)', :'done')),
    '^RF006: not_quarantined: the finalize row of recording .* is Done, not Quarantined$',
    'the message says the row''s status'
);
select throws_ok(
    format($$select * from recording_finalize.requeue(%L, '  ')$$, :'quarantined'),
    'RF001', null, 'a blank reason is refused'
);
select throws_ok(
    'select * from recording_finalize.requeue(null)',
    'RF001', null, 'a NULL id is refused, not silently skipped'
);
select is(tests.snapshot(), (select fingerprint from before), 'nothing changed');

select * from finish();
rollback;
