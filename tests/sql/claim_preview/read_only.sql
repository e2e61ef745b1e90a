-- claim_preview: says what claim_due will do with each due row, and changes nothing.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_stuck() as reconcile \gset
select tests.make_stuck(p_attempts => 8) as exhausted \gset
select tests.make_stuck(p_ended_ago => '5 minutes') as young \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as silent \gset
select tests.make_due_row(:'silent') is not null as ok \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as failed \gset
select tests.make_due_row(:'failed') is not null as ok \gset
select tests.make_stuck(p_next_attempt_at => now() + interval '1 hour') as later \gset

create temp table fingerprint as
select tests.snapshot() as s,
    (select md5(coalesce(string_agg(a::text, ','), ''))
        from messenger.recording_finalize_operator_actions as a) as a;
create temp table preview as select * from recording_finalize.claim_preview();
select is(tests.snapshot(), (select s from fingerprint), 'the preview wrote nothing');
select is((select count(*) from preview), 5::bigint, 'only the rows due now');

-- What the claim then really does is what the preview said.
create temp table claimed as select * from tests.claim();
select set_eq(
    'select recording_id, action, attempts, detail from preview',
    'select recording_id, action, attempts, detail from claimed',
    'the preview matches claim_due row by row'
);
select is((select count(*) from preview where recording_id = :'later'), 0::bigint,
    'a row backing off is not due');
select throws_ok('select * from recording_finalize.claim_preview(0)', 'RF001', null,
    'a bad limit is refused');

select * from finish();
rollback;
