-- audit_repair: opens a due finalize row for each orphan, audited, and touches nothing else.
begin;
select plan(7);

select tests.clean_slate();
delete from messenger.recording_finalize_operator_actions;
select tests.make_recording('Direct', tests.make_session()) as orphan \gset
-- Not orphans: within the SLA, session running, already has a row, terminal.
select tests.make_recording('Direct', tests.make_session(p_ended_ago => '5 minutes')) as young \gset
select tests.make_recording('Conference', tests.make_session('Conference', null), 'Recording')
    as running \gset
select tests.make_stuck() as tracked \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as failed \gset
create temp table before as
select md5(string_agg(f::text, ',' order by f.id)) as rows
from messenger.recording_finalize_attempts as f;

create temp table repaired as select * from recording_finalize.audit_repair('ann');
select results_eq('select recording_id::text from repaired',
    format('values (%L)', :'orphan'), 'only the orphan is repaired');
select results_eq(
    format($$select status, attempts, next_attempt_at <= now()
        from messenger.recording_finalize_attempts where recording_id = %L$$, :'orphan'),
    $$values ('Pending'::varchar, 0, true)$$,
    'its row is Pending, attempts 0, due now'
);
select is(
    (select md5(string_agg(f::text, ',' order by f.id))
        from messenger.recording_finalize_attempts as f where f.recording_id <> :'orphan'),
    (select rows from before), 'the other finalize rows are untouched'
);
select results_eq(
    $$select recording_id::text, action_kind, operator_name
    from messenger.recording_finalize_operator_actions$$,
    format($$values (%L, 'repair'::varchar, 'ann')$$, :'orphan'),
    'one audit row for the repair'
);
select is((select count(*) from recording_finalize.audit_repair('ann')), 0::bigint,
    'a second repair finds nothing to do');
select throws_ok($$select * from recording_finalize.audit_repair('')$$, 'RF001', null,
    'an empty operator is refused');
select throws_ok($$select * from recording_finalize.audit_repair('ann', p_limit => 0)$$,
    'RF001', null, 'a bad limit is refused');

select * from finish();
rollback;
