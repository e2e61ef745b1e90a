-- requeue: RF005 without a finalize row, RF006 for a row that is not Quarantined.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_stuck() as pending \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as done \gset
select tests.make_due_row(:'done', 1, now(), 'Done') is not null as ok \gset
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
    '^RF006: requeue: the finalize row of recording .* is Done, not Quarantined$',
    'the message says the row''s status'
);
select is(tests.snapshot(), (select fingerprint from before), 'nothing changed');

select * from finish();
rollback;
