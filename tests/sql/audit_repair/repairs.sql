-- audit_repair: opens a finalize row (Pending, due now, opened_by repair) for each orphan, one
-- audit row each naming the operator and the real login, and touches nothing else; the
-- policy's SLA decides who is an orphan; p_limit bounds one call.
begin;
select plan(14);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Recording') as orphan \gset
select tests.make_recording('Conference', tests.make_session('Conference', '3 hours'), 'Pending')
    as orphan2 \gset
-- Not orphans: within the SLA, session running, already has a row, terminal, no session.
select tests.make_recording('Direct', tests.make_session(p_ended_ago => '5 minutes')) as young \gset
select tests.make_recording('Conference', tests.make_session('Conference', null), 'Recording')
    as running \gset
select tests.make_stuck() as tracked \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as failed \gset
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as sessionless \gset
delete from messenger.call_sessions
where id = (select session_id from messenger.call_recordings where id = :'sessionless');
create temp table before as
select md5(string_agg(f::text, ',' order by f.id)) as rows
from messenger.recording_finalize_attempts as f;
create role rfr_pgtap_repair_login login in role recording_finalize_operator;

set local session authorization rfr_pgtap_repair_login;
create temp table repaired as select * from recording_finalize.audit_repair(' ann ', 1);
reset session authorization;
select results_eq(
    format($$select count(*), bool_and(recording_id in (%L, %L)) from repaired$$,
        :'orphan', :'orphan2'),
    'values (1::bigint, true)',
    'p_limit 1: one orphan repaired per call'
);
set local session authorization rfr_pgtap_repair_login;
insert into repaired select * from recording_finalize.audit_repair('ann');
reset session authorization;
select set_eq(
    'select recording_id from repaired',
    format('values (%L::uuid), (%L::uuid)', :'orphan', :'orphan2'),
    'the next call repairs the other: only the orphans, none of the others'
);
select results_eq(
    format($$select status, attempts, next_attempt_at, opened_by, claim_token, session_kind,
        session_id
    from messenger.recording_finalize_attempts where recording_id = %L$$, :'orphan'),
    format($$select 'Pending'::varchar, 0, now(), 'repair'::varchar, null::uuid,
        session_kind, session_id from messenger.call_recordings where id = %L$$, :'orphan'),
    'its row: Pending, attempts 0, due now, opened by repair, the recording''s session'
);
select is(
    (select md5(string_agg(f::text, ',' order by f.id))
        from messenger.recording_finalize_attempts as f
        where f.recording_id not in (:'orphan', :'orphan2')),
    (select rows from before), 'the other finalize rows are untouched'
);
select is(
    (select count(*) from messenger.recording_finalize_attempts
        where recording_id in (:'young', :'running', :'failed', :'sessionless')),
    0::bigint,
    'no row for a young, running, terminal or sessionless recording'
);
select set_eq(
    $$select recording_id, action_kind::text, operator_name, login_role, detail ->> 'slaTimeout'
    from recording_finalize.operator_actions$$,
    format($$values (%L::uuid, 'repair', 'ann', 'rfr_pgtap_repair_login', '00:30:00'),
        (%L::uuid, 'repair', 'ann', 'rfr_pgtap_repair_login', '00:30:00')$$,
        :'orphan', :'orphan2'),
    'one audit row per repaired recording, the name trimmed, the login, the SLA used'
);
select matches(
    (select min(reason) from recording_finalize.operator_actions),
    '^audit --repair: orphaned recording',
    'the audit reason says what it was'
);
select is((select count(*) from recording_finalize.audit_repair('ann')), 0::bigint,
    'a further repair finds nothing to do');
select is((select count(*) from recording_finalize.operator_actions), 2::bigint,
    'and audits nothing');
select recording_finalize.set_policy(p_sla_timeout => '1 minute') is not null as minute \gset
select is(
    (select count(*) from recording_finalize.audit_repair('ann')),
    1::bigint,
    'a shorter SLA makes the young recording an orphan'
);
select throws_ok($$select * from recording_finalize.audit_repair('')$$, 'RF001', null,
    'an empty operator is refused');
select throws_ok($$select * from recording_finalize.audit_repair('ann', p_limit => 0)$$,
    'RF001', null, 'a limit of 0 is refused');
select throws_ok($$select * from recording_finalize.audit_repair('ann', p_limit => 10001)$$,
    'RF001', null, 'a limit above 10000 is refused');
select throws_ok($$select * from recording_finalize.audit_repair('ann', p_limit => null)$$,
    'RF001', null, 'a missing limit is refused');

select * from finish();
rollback;
