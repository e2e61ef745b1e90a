-- outcome_decision, the storage-incident rule for a 404 (ported from upload_deferral): every edge,
-- against an upload window that opened 2 hours ago and a grace of 30 minutes. Deferred means
-- deferred_by_incident, the attempt given back, due at incident end + grace, last_error naming
-- the incident.
begin;
select plan(21);

select tests.clean_slate();

create function pg_temp.incident(p_started_ago interval, p_ended_ago interval,
    p_source text default 'worker')
returns bigint language sql as $$
    insert into recording_finalize.storage_incidents (source, started_at, ended_at, closed_by)
    values (p_source, now() - p_started_ago, now() - p_ended_ago,
        case when p_ended_ago is not null then 'tests' end)
    returning id
$$;
-- The decision for a 404 at attempt 3, as apply_outcome asks it.
create function pg_temp.verdict(
    p_grace interval default '30 minutes',
    p_window_start timestamptz default now() - interval '2 hours',
    p_now timestamptz default now(),
    p_grace_max interval default '24 hours'
)
returns table (result text, attempts integer, next_attempt_at timestamptz, last_error text)
language sql as $$
    select d.result, d.attempts, d.next_attempt_at, d.last_error
    from recording_finalize_internal.outcome_decision('missing', null, null, 3, 8,
        p_window_start, p_grace, p_grace_max, p_now, null) as d
$$;

-- No incident at all: the 404 stands.
select results_eq('select result, attempts, next_attempt_at from pg_temp.verdict()',
    $$values ('failed', 3, null::timestamptz)$$,
    'no incident: failed, the attempt counted');

-- Overlap at the window's start: began before the session ended, ended after it, 10 min ago.
select pg_temp.incident('3 hours', '10 minutes') as i1 \gset
select results_eq('select result, attempts, next_attempt_at from pg_temp.verdict()',
    $$values ('deferred_by_incident', 2, now() + interval '20 minutes')$$,
    'an incident straddling the window start, ended 10 min ago: deferred to its end + grace, '
    'attempt given back');
select matches((select last_error from pg_temp.verdict()),
    format('^StorageIncident: worker incident %s ended ', :i1),
    'last_error names the source and the incident');
delete from recording_finalize.storage_incidents;

-- Ended before the window opened: not this recording's business.
select pg_temp.incident('3 hours', '02:00:01');
select is((select result from pg_temp.verdict('3 hours')), 'failed',
    'an incident that ended 1 s before the window opened does not defer (even within the grace)');
delete from recording_finalize.storage_incidents;

-- Ended exactly when the window opened (with a grace long enough): it overlaps.
select pg_temp.incident('3 hours', '2 hours');
select results_eq($$select result, next_attempt_at from pg_temp.verdict('3 hours')$$,
    $$values ('deferred_by_incident', now() + interval '1 hour')$$,
    'an incident that ended exactly at the window start overlaps it');
delete from recording_finalize.storage_incidents;

-- Overlap at the window's end: began after the session ended (inside the window).
select pg_temp.incident('20 minutes', '5 minutes');
select results_eq('select result, next_attempt_at from pg_temp.verdict()',
    $$values ('deferred_by_incident', now() + interval '25 minutes')$$,
    'an incident inside the window, ended 5 min ago: deferred to its end + grace');
delete from recording_finalize.storage_incidents;

-- Open incident: deferred by the grace from now, whatever its start (even before the window).
select pg_temp.incident('5 hours', null) as i4 \gset
select results_eq('select result, attempts, next_attempt_at from pg_temp.verdict()',
    $$values ('deferred_by_incident', 2, now() + interval '30 minutes')$$,
    'an open incident defers by the grace from now');
select is((select last_error from pg_temp.verdict()),
    format('StorageIncident: worker incident %s open since %s; a 404 is not trusted while '
        'storage is out, next check at %s', :i4,
        recording_finalize_internal.iso_utc(now() - interval '5 hours'),
        recording_finalize_internal.iso_utc(now() + interval '30 minutes')),
    'the reason names the source, the incident, that it is open and the next check');
delete from recording_finalize.storage_incidents;

-- Grace boundary: ended exactly one grace ago no longer defers; a second less still does.
select pg_temp.incident('1 hour', '30 minutes');
select is((select result from pg_temp.verdict()), 'failed',
    'an incident that ended exactly the grace ago does not defer');
delete from recording_finalize.storage_incidents;
select pg_temp.incident('1 hour', '00:29:59') as i5 \gset
select results_eq('select result, next_attempt_at from pg_temp.verdict()',
    $$values ('deferred_by_incident', now() + interval '1 second')$$,
    'an incident that ended 1 s less than the grace ago defers for that second');
select is((select last_error from pg_temp.verdict()),
    format('StorageIncident: worker incident %s ended %s, within the upload grace of 00:30:00; '
        'a 404 is not trusted before %s', :i5,
        recording_finalize_internal.iso_utc(now() - interval '00:29:59'),
        recording_finalize_internal.iso_utc(now() + interval '1 second')),
    'the reason of a closed incident says when the 404 becomes trusted');
delete from recording_finalize.storage_incidents;

-- Several incidents: the one that defers longest decides; one outside the window is ignored.
select pg_temp.incident('5 hours', '4 hours', 'ops');
select pg_temp.incident('1 hour', '20 minutes', 'recorders');
select pg_temp.incident('15 minutes', '2 minutes') as i6 \gset
select results_eq('select result, next_attempt_at from pg_temp.verdict()',
    $$values ('deferred_by_incident', now() + interval '28 minutes')$$,
    'several incidents: the latest end + grace decides');
select matches((select last_error from pg_temp.verdict()),
    format('^StorageIncident: worker incident %s ended', :i6),
    'and it is the one named');
select pg_temp.incident('1 minute', null, 'recorders') as i7 \gset
select results_eq('select result, next_attempt_at from pg_temp.verdict()',
    $$values ('deferred_by_incident', now() + interval '30 minutes')$$,
    'several incidents, one open: the open one decides');
select matches((select last_error from pg_temp.verdict()),
    format('^StorageIncident: recorders incident %s open since', :i7),
    'and it is the one named');
delete from recording_finalize.storage_incidents;

-- An incident that starts after the moment judged does not count (p_now in the past).
select pg_temp.incident('10 minutes', null);
select pg_temp.incident('9 minutes', '1 minute', 'ops');
select is(
    (select result from pg_temp.verdict(p_now => now() - interval '11 minutes')),
    'failed', 'incidents that started after p_now do not defer');
select is(
    (select result from pg_temp.verdict(p_now => now() - interval '10 minutes')),
    'deferred_by_incident', 'one that started exactly at p_now does');
delete from recording_finalize.storage_incidents;

-- No window (p_window_start NULL): every incident that ended within the grace counts.
select pg_temp.incident('3 days', '10 minutes');
select is((select result from pg_temp.verdict(p_window_start => null)),
    'deferred_by_incident', 'without a window start every recent incident counts');
delete from recording_finalize.storage_incidents;

-- The deferral never reaches past p_now + p_upload_grace_max.
select pg_temp.incident('1 hour', null);
select is(
    (select next_attempt_at from pg_temp.verdict('2 hours', p_grace_max => '45 minutes')),
    now() + interval '45 minutes', 'capped at now + upload_grace_max');
-- An attempt count of 0 stays 0.
select is(
    (select d.attempts from recording_finalize_internal.outcome_decision('missing', null, null,
        0, 8, now() - interval '2 hours', '30 minutes', '24 hours', now(), null) as d),
    0, 'an attempt is never given back below 0');
-- The rule is for 404s only: the other verdicts ignore an open incident (of a source other
-- than worker: see held_by_incident.sql for the worker's own).
delete from recording_finalize.storage_incidents;
select pg_temp.incident('1 hour', null, 'ops');
select results_eq(
    $$select o.outcome, d.result from (values (1, 'found'), (2, 'transient'),
        (3, 'invalid_metadata'), (4, 'config_error')) as o (n, outcome)
    cross join lateral recording_finalize_internal.outcome_decision(o.outcome, null, null, 3, 8,
        now() - interval '2 hours', '30 minutes', '24 hours', now(), null) as d
    order by o.n$$,
    $$values ('found', 'reconciled'), ('transient', 'backoff'),
        ('invalid_metadata', 'quarantined'), ('config_error', 'config_error_released')$$,
    'found, transient, invalid_metadata, config_error: unaffected by the incident rule'
);

select * from finish();
rollback;
