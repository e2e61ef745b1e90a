-- explain: one document per recording, and what the worker will do next.
begin;
select plan(10);

select tests.clean_slate();
-- Backing off: attempt 2 ended transient, next attempt in the future.
select tests.make_stuck(p_attempts => 1) as rec \gset
create temp table claimed as select * from tests.claim();
select * from recording_finalize.apply_outcome(:'rec', tests.token(:'rec'), 'transient',
    p_error => 'ReadTimeoutError');
select recording_finalize.operator_retry(:'rec', 'ann', 'S3 is back') is not null as ok \gset
update messenger.recording_finalize_attempts set next_attempt_at = now() + interval '4 minutes'
where recording_id = :'rec';

create temp table doc as select recording_finalize.explain(:'rec') as d;
select is((select d -> 'recording' ->> 'status' from doc), 'Uploading', 'the recording');
select is((select (d -> 'finalize' ->> 'attempts')::int from doc), 2, 'the finalize row');
select is((select d -> 'finalize' ->> 'lastError' from doc), 'Transient: ReadTimeoutError',
    'its last error');
select is((select d -> 'next' ->> 'action' from doc), 'reconcile', 'next: reconcile');
select ok(
    (select d -> 'next' ->> 'text' from doc)
        ~ '^at .* \(in 240 s\): check the binary in S3 \(attempt 3 of 8\)$',
    'the sentence says when and what');
select is((select d -> 'operatorActions' -> 0 ->> 'operator' from doc), 'ann',
    'the audit trail shows who stepped in');
select ok((select d -> 'session' ->> 'slaDueAt' from doc) is not null, 'the session''s SLA');

-- An orphan: non-terminal, session ended past the SLA, no finalize row.
select tests.make_recording('Direct', tests.make_session()) as orphan \gset
select is((recording_finalize.explain(:'orphan') -> 'next' ->> 'orphan')::boolean, true,
    'an orphan is called one');

select throws_ok(
    format('select recording_finalize.explain(%L)', gen_random_uuid()),
    'RF021', null, 'an unknown id is refused'
);
select throws_ok(
    format('select recording_finalize.explain(%L, 0)', :'rec'),
    'RF001', null, 'bad settings are refused'
);

select * from finish();
rollback;
