-- preview_outcomes: each claim action the next cycle would take (none for a row that is not
-- Pending or absent, quarantined, closed, republished, deferred_by_sla, reconcile) with the
-- result, status, attempts, due time and detail it reports - and that claim_due then does
-- exactly that for the same rows.
begin;
select plan(6);

select tests.clean_slate();
select tests.use_policy(3);
create temp table fx (n integer primary key, what text, rec uuid);
insert into fx (n, what) values
    (1, 'no finalize row'), (2, 'row Done'), (3, 'row Quarantined'), (4, 'recording gone'),
    (5, 'session gone'), (6, 'attempts at max'), (7, 'recording Failed'),
    (8, 'Available with its event'), (9, 'Available without its event'),
    (10, 'session not ended'), (11, 'session ended within the SLA'), (12, 'reconcile');
update fx set rec = case n
    when 1 then tests.make_recording('Direct', tests.make_session(), 'Uploading')
    when 10 then tests.make_recording('Direct', tests.make_session('Direct', null), 'Recording')
    when 11 then tests.make_recording('Conference',
        tests.make_session('Conference', '5 minutes'), 'Uploading')
    when 7 then tests.make_recording('Direct', tests.make_session(), 'Failed')
    when 8 then tests.make_recording('Direct', tests.make_session(), 'Available')
    when 9 then tests.make_recording('Direct', tests.make_session(), 'Available')
    when 5 then tests.make_recording('Direct', gen_random_uuid(), 'Uploading')
    else tests.make_recording('Direct', tests.make_session(), 'Uploading') end;
select count(tests.make_due_row(rec, case when n = 6 then 3 else 1 end, p_status => case n
    when 2 then 'Done' when 3 then 'Quarantined' else 'Pending' end)) as rows
from fx where n <> 1 \gset
delete from messenger.call_recordings where id = (select rec from fx where n = 4);
select count(recording_finalize_internal.enqueue_available(r,
    recording_finalize_internal.session_of(r.session_kind, r.session_id),
    'pin.messenger.call-recording-available.v1')) as enqueued
from fx, recording_finalize_internal.recording_row(fx.rec) as r where fx.n = 8 \gset
create temp table before as select tests.snapshot() as fingerprint;

create temp table verdicts as
select n, jsonb_build_object('recording_id', rec, 'outcome', 'found', 'file_id', 'k',
    'size_bytes', 1, 'duration_seconds', 1, 'format', 'Ogg') as v
from fx;
create temp table previewed as
select fx.n, p.*
from recording_finalize.preview_outcomes(
    (select jsonb_agg(v order by n) from verdicts)) as p
join fx on fx.rec = p.recording_id;
select is(tests.snapshot(), (select fingerprint from before), 'the preview wrote nothing');

select results_eq(
    'select n, claim_action, result, finalize_status, attempts, detail from previewed order by n',
    $$values
        (1, 'none', 'none', null, null, 'Uploading'),
        (2, 'none', 'none', 'Done', 1, 'Uploading'),
        (3, 'none', 'none', 'Quarantined', 1, 'Uploading'),
        (4, 'quarantined', 'quarantined', 'Quarantined', 1, 'RecordingNotFound'),
        (5, 'quarantined', 'quarantined', 'Quarantined', 1, 'SessionNotFound'),
        (6, 'quarantined', 'quarantined', 'Quarantined', 3, 'MaxAttemptsExceeded'),
        (7, 'closed', 'closed', 'Done', 2, 'Failed'),
        (8, 'closed', 'closed', 'Done', 2, 'Available'),
        (9, 'republished', 'republished', 'Done', 2, 'Available'),
        (10, 'deferred_by_sla', 'deferred_by_sla', 'Pending', 1, 'SessionNotEnded'),
        (11, 'deferred_by_sla', 'deferred_by_sla', 'Pending', 1, 'WithinSla'),
        (12, 'reconcile', 'reconciled', 'Done', 2, null)$$,
    'one row per verdict, in order: the claim action, the result, status, attempts, detail'
);
select results_eq(
    'select n, next_attempt_at from previewed where next_attempt_at is not null order by n',
    $$values (10, now() + interval '30 minutes'), (11, now() + interval '25 minutes')$$,
    'due times for the rows that stay Pending: session end (or now) + SLA'
);

-- The real cycle for the same rows: claim_due, then apply_outcome for what it hands out.
create temp table claimed as select * from recording_finalize.claim_due(100);
create temp table applied as
select c.recording_id, a.*
from claimed as c join verdicts as v on (v.v ->> 'recording_id')::uuid = c.recording_id
cross join lateral recording_finalize.apply_outcome(c.recording_id, c.claim_token,
    v.v ->> 'outcome', v.v ->> 'file_id', (v.v ->> 'size_bytes')::bigint,
    (v.v ->> 'duration_seconds')::integer, v.v ->> 'format', v.v ->> 'error') as a
where c.action = 'reconcile';
create temp table real_cycle as
select fx.n, coalesce(c.action, 'none') as claim_action,
    case when c.action = 'reconcile' then a.result else coalesce(c.action, 'none') end as result,
    f.status::text as finalize_status, f.attempts,
    case when f.status = 'Pending' then f.next_attempt_at end as next_attempt_at,
    case when c.action = 'reconcile' then a.detail else c.detail end as detail
from fx
left join claimed as c on c.recording_id = fx.rec
left join applied as a on a.recording_id = fx.rec
left join messenger.recording_finalize_attempts as f on f.recording_id = fx.rec;

select is_empty(
    $$select n from previewed as p join real_cycle as r using (n)
    where (p.claim_action, p.result, p.finalize_status, p.attempts, p.next_attempt_at)
        is distinct from (r.claim_action, r.result, r.finalize_status, r.attempts,
            r.next_attempt_at)$$,
    'claim_due and apply_outcome did what the preview said, row by row'
);
select is_empty(
    $$select n from previewed as p join real_cycle as r using (n)
    where p.claim_action <> 'none' and p.detail is distinct from r.detail$$,
    'with the same detail (the claim''s, or the verdict''s last_error)'
);
select is(
    (select count(*) from claimed), 9::bigint,
    'and claim_due took exactly the nine Pending rows (none of the three the preview left alone)'
);

select * from finish();
rollback;
