-- outcome_decision's p_bucket_confirmed, the fact whether the cycle's HeadBucket answered, and
-- the worker's own incident as that cycle leaves it before it claims: true (HeadBucket answered)
-- takes an open worker incident of kind unreachable (HeadBucket went unanswered) as ended at
-- p_now, so a transient answer backs off and a 404 is deferred by the grace that starts then, and
-- one of kind transient (or recorded by hand, no kind) as open (healthy HEADs close it); false (HeadBucket did not answer) holds a transient answer, and a 404, even with no
-- incident recorded; NULL is the incidents as recorded (apply_outcome's case). Other sources are never
-- affected.
begin;
select plan(19);

select tests.clean_slate();
create function pg_temp.decide(p_outcome text, p_attempts integer, p_bucket boolean)
returns table (result text, finalize_status text, attempts integer, next_attempt_at timestamptz,
    last_error text, quarantine_reason text)
language sql as $$
    select d.* from recording_finalize_internal.outcome_decision(p_outcome, null, 'ReadTimeout',
        p_attempts, 8, now() - interval '2 hours', '30 minutes', '24 hours', now(), p_bucket)
        as d
$$;

-- No incident at all.
select results_eq('select result, attempts from pg_temp.decide(''transient'', 3, null)',
    $$values ('backoff', 3)$$, 'no incident, NULL: a transient answer backs off');
select results_eq('select result, attempts from pg_temp.decide(''transient'', 3, false)',
    $$values ('held_by_incident', 2)$$,
    'no incident, HeadBucket unanswered: held, as the cycle opens the worker''s incident first');
select matches((select last_error from pg_temp.decide('transient', 3, false)),
    'opened as HeadBucket did not answer', 'and last_error says which incident');
select results_eq(
    'select result, finalize_status, attempts, quarantine_reason '
    'from pg_temp.decide(''transient'', 8, false)',
    $$values ('held_by_incident', 'Pending', 7, null::text)$$,
    'HeadBucket unanswered at the last attempt: held, not quarantined');
select results_eq(
    'select result, finalize_status, attempts from pg_temp.decide(''missing'', 3, false)',
    $$values ('held_by_incident', 'Pending', 2)$$,
    'false: a 404 is not believed (read as transient, so held), never failed');

-- The worker's own incident, opened as HeadBucket went unanswered, left open.
insert into recording_finalize.storage_incidents (source, kind, started_at, reason)
values ('worker', 'unreachable', now() - interval '10 minutes',
    'the file storage cannot be reached (HeadBucket unanswered)');
select results_eq('select result, attempts from pg_temp.decide(''transient'', 3, null)',
    $$values ('held_by_incident', 2)$$, 'open worker incident, NULL: held (as recorded)');
select matches((select last_error from pg_temp.decide('transient', 3, false)),
    format('storage incident %s is open', (select id from recording_finalize.storage_incidents)),
    'false with the worker''s incident open: last_error names it');
select results_eq('select result, attempts from pg_temp.decide(''transient'', 3, true)',
    $$values ('backoff', 3)$$,
    'open worker incident, HeadBucket answered: backoff, as the cycle closes it first');
select results_eq(
    'select result, finalize_status, quarantine_reason from pg_temp.decide(''transient'', 8, true)',
    $$values ('quarantined', 'Quarantined', 'max_attempts')$$,
    'and at the maximum the row is quarantined');
select results_eq(
    'select result, attempts, next_attempt_at from pg_temp.decide(''missing'', 3, true)',
    $$values ('deferred_by_incident', 2, now() + interval '30 minutes')$$,
    'a 404 with the worker incident taken as ended now: deferred by the grace from now');
select matches((select last_error from pg_temp.decide('missing', 3, true)),
    '^StorageIncident: worker incident \d+ ended ', 'and last_error says it ended');
select is((select result from pg_temp.decide('found', 3, true)), 'reconciled',
    'a found verdict is reconciled whatever the bucket said');

-- The worker's incident opened for transient HEADs: HeadBucket answered throughout, so an
-- answer does not close it (healthy HEADs do). The kind decides, not the reason's words.
update recording_finalize.storage_incidents
set kind = 'transient', reason = 'HeadBucket: 6 of 8 HEADs transient';
select results_eq('select result, attempts from pg_temp.decide(''transient'', 3, true)',
    $$values ('held_by_incident', 2)$$,
    'open transient-HEADs incident, HeadBucket answered: still held');
select results_eq('select result, attempts from pg_temp.decide(''transient'', 3, null)',
    $$values ('held_by_incident', 2)$$, 'as recorded: held');
select matches((select last_error from pg_temp.decide('missing', 3, true)),
    '^StorageIncident: worker incident \d+ open since ',
    'and a 404 is deferred by it as open');
update recording_finalize.storage_incidents set kind = null, reason = null;
select results_eq('select result, attempts from pg_temp.decide(''transient'', 3, true)',
    $$values ('held_by_incident', 2)$$,
    'a worker incident without a kind (recorded by hand) is not taken for an unreachable one');

-- A worker incident that starts after the moment judged is no incident at that moment.
delete from recording_finalize.storage_incidents;
insert into recording_finalize.storage_incidents (source, kind, started_at)
values ('worker', 'unreachable', now() + interval '1 minute');
select results_eq('select result, finalize_status from pg_temp.decide(''missing'', 3, true)',
    $$values ('failed', 'Done')$$, 'true: a worker incident starting later defers no 404');

-- Another source's open incident is what it is.
delete from recording_finalize.storage_incidents;
insert into recording_finalize.storage_incidents (source, started_at)
values ('recorders', now() - interval '10 minutes');
select matches((select last_error from pg_temp.decide('missing', 3, true)),
    '^StorageIncident: recorders incident \d+ open since ',
    'an open recorders incident stays open for a 404 when HeadBucket answered');
select results_eq('select result, attempts from pg_temp.decide(''transient'', 3, true)',
    $$values ('backoff', 3)$$, 'and holds no transient answer');

select * from finish();
rollback;
