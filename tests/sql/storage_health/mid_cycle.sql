-- An outage that starts inside a cycle, as the worker reports it: HeadBucket answered at the
-- cycle's start, then HEADs come back transient. The window is held until decided, the incident
-- opens while the cycle runs, and the verdicts held meanwhile (a 404 of the same window included)
-- cost no attempt and fail nothing; once it closes, no 404 is believed before its end + the upload
-- grace.
begin;
select plan(13);

select tests.clean_slate();
create temp table rows_ as
select n, tests.make_stuck(p_attempts => 2) as rec from generate_series(1, 7) as n;
create temp table claimed as select * from tests.claim();
select tests.use_policy(p_upload_grace => '10 minutes');
-- The verdict as the cycle applies it: HeadBucket confirmed the bucket at its start.
create function pg_temp.apply(p_n integer, p_outcome text)
returns table (result text, attempts integer)
language sql as $$
    select a.result, a.attempts from rows_ as r
    cross join lateral recording_finalize.apply_outcome(p_recording_id => r.rec,
        p_claim_token => tests.token(r.rec), p_outcome => p_outcome,
        p_error => case p_outcome when 'transient' then 'ConnectError' end,
        p_bucket_confirmed => true, p_objects_found => 1) as a
    where r.n = p_n
$$;

select is((select action from recording_finalize.storage_health(p_bucket_answered => true)),
    'none', 'the cycle starts with the bucket answering and no incident');

-- First batch: a 404 and three transient answers; the window begins at the first transient.
select results_eq(
    $$select h.action, h.decided, h.hold from recording_finalize.storage_health(p_transient => 3,
        p_checked => 3) as h$$,
    $$values ('none', false, true)$$, 'three transient HEADs: undecided, the batch is held');
-- Second batch: two more transient answers and a 404.
select results_eq(
    $$select h.action, h.kind, h.decided, h.hold from recording_finalize.storage_health(
        p_transient => 5, p_checked => 6) as h$$,
    $$values ('opened', 'transient', true, false)$$,
    'five of six transient: the incident opens before either batch is applied');

-- Both batches applied now.
select results_eq(
    $$select n, (pg_temp.apply(n, 'transient')).* from rows_ where n between 1 and 5
    order by n$$,
    $$values (1, 'held_by_incident', 2), (2, 'held_by_incident', 2), (3, 'held_by_incident', 2),
        (4, 'held_by_incident', 2), (5, 'held_by_incident', 2)$$,
    'every transient answer of the window gives its attempt back (2 before the claim, 2 after)');
select results_eq('select * from pg_temp.apply(6, ''missing'')',
    $$values ('deferred_by_incident', 2)$$,
    'a 404 of the same window is not believed: deferred, attempt given back');
select matches(
    (select last_error::text from messenger.recording_finalize_attempts as f
    join rows_ as r on r.rec = f.recording_id where r.n = 6),
    '^StorageIncident: worker incident \d+ open since ', 'last_error names the open incident');

-- The storage answers again: five healthy HEADs close it.
select is(
    (select action from recording_finalize.storage_health(p_transient => 0, p_checked => 5)),
    'closed', 'healthy again: closed');
select results_eq('select * from pg_temp.apply(7, ''missing'')',
    $$values ('deferred_by_incident', 2)$$,
    'a 404 right after the incident ended: still deferred (the upload grace)');
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts as f
    join rows_ as r on r.rec = f.recording_id where r.n = 7),
    (select ended_at + interval '10 minutes' from recording_finalize.storage_incidents),
    'due again at the incident''s end + the grace');

-- Time passes (the incident moved back, rows 6 and 7 claimed again): within the grace a 404 is
-- still not believed, after it, it is.
select tests.make_due(rec) from rows_ where n in (6, 7);
select count(*) from tests.claim();
select tests.use_policy(p_upload_grace => '10 minutes');
update recording_finalize.storage_incidents
set started_at = now() - interval '1 hour', ended_at = now() - interval '9 minutes';
select is((select result from pg_temp.apply(6, 'missing')), 'deferred_by_incident',
    'ended 9 minutes ago, grace 10: deferred');
update recording_finalize.storage_incidents set ended_at = now() - interval '11 minutes';
select is((select result from pg_temp.apply(7, 'missing')), 'failed',
    'ended 11 minutes ago: the 404 is believed');

-- The attempts the outage left: the claim's, given back, for every row it held.
select results_eq(
    $$select count(*)::integer from messenger.recording_finalize_attempts as f
    join rows_ as r on r.rec = f.recording_id where f.attempts = 2 and f.status = 'Pending'$$,
    $$values (6)$$, 'six rows Pending with the attempts they had before the claim');
select is_empty(
    $$select from messenger.recording_finalize_attempts where status = 'Quarantined'$$,
    'nothing quarantined');

select * from finish();
rollback;
