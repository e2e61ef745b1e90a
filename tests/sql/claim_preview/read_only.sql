-- claim_preview: says what claim_due would do with each due row, and changes nothing; only the
-- rows due now, in claim order, up to p_limit.
begin;
select plan(7);

select tests.clean_slate();
select tests.make_stuck(p_next_attempt_at => now() - interval '3 minutes') as reconcile \gset
select tests.make_stuck(p_attempts => 8, p_next_attempt_at => now() - interval '2 minutes')
    as exhausted \gset
select tests.make_stuck(p_ended_ago => '5 minutes',
    p_next_attempt_at => now() - interval '1 minute') as young \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as silent \gset
select tests.make_due_row(:'silent', 0, now() - interval '30 seconds') is not null as ok \gset
select tests.make_stuck(p_next_attempt_at => now() + interval '1 hour') as later \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as done \gset
select tests.make_due_row(:'done', 1, now() - interval '1 hour', 'Done') is not null as ok \gset

create temp table fingerprint as select tests.snapshot() as s;
create temp table preview as
select * from recording_finalize.claim_preview();
select is(tests.snapshot(), (select s from fingerprint), 'the preview wrote nothing');
select results_eq(
    'select recording_id, action from preview',
    format($$values (%L::uuid, 'reconcile'), (%L::uuid, 'quarantined'),
        (%L::uuid, 'deferred_by_sla'), (%L::uuid, 'republished')$$,
        :'reconcile', :'exhausted', :'young', :'silent'),
    'the rows due now, in next_attempt_at order, with the claim''s actions'
);
select is((select count(*) from preview where recording_id in (:'later', :'done')), 0::bigint,
    'a row backing off and a Done row are not in it');
select is(
    (select count(*) from recording_finalize.claim_preview(2)), 2::bigint,
    'p_limit bounds it'
);
select results_eq(
    'select recording_id from recording_finalize.claim_preview(2)',
    format('values (%L::uuid), (%L::uuid)', :'reconcile', :'exhausted'),
    'the first rows in claim order'
);
select is(
    (select count(*) from recording_finalize.claim_preview()),
    4::bigint,
    'called again, it says the same: nothing was counted'
);
select is(tests.snapshot(), (select s from fingerprint), 'still nothing written');

select * from finish();
rollback;
