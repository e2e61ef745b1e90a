-- claim_due with nothing due: no row returned, no table touched, no event written.
begin;
select plan(5);

select tests.clean_slate();

-- Rows that exist but must not be claimed: not yet due, already Done, Quarantined (overdue).
select tests.make_stuck(p_next_attempt_at => now() + interval '5 minutes') as not_due \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as done_rec \gset
select tests.make_due_row(:'done_rec', 1, now() - interval '1 hour', 'Done') is not null as ok \gset
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as quarantined_rec \gset
select tests.make_due_row(:'quarantined_rec', 8, now() - interval '1 hour', 'Quarantined')
    is not null as ok \gset

create temp table before as select tests.snapshot() as fingerprint;

select is(
    (select count(*) from tests.claim()), 0::bigint,
    'nothing due: the claim returns no row'
);
select is(
    (select count(*) from recording_finalize.claim_due()), 0::bigint,
    'nothing due: the claim with the default policy returns no row either'
);
select is(
    tests.snapshot(), (select fingerprint from before),
    'nothing due: no row of any table changed'
);
select is(
    (select count(*) from messenger.integration_outbox), 0::bigint,
    'nothing due: no integration event enqueued'
);
select is(
    (select count(*) from messenger.realtime_outbox), 0::bigint,
    'nothing due: no realtime row written'
);

select * from finish();
rollback;
