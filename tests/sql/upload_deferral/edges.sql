-- upload_deferral: every edge of the storage-incident rule, against a window that opened 2 h ago.
begin;
select plan(16);

select tests.clean_slate();
delete from messenger.storage_incidents;
select tests.make_stuck('Direct', '2 hours') as rec \gset
-- The window opens when the recording stopped / its session ended: 2 hours ago.
select now() - interval '2 hours' as wstart \gset

create function pg_temp.incident(p_started_ago interval, p_ended_ago interval,
    p_source text default 'worker')
returns bigint language sql as $$
    insert into messenger.storage_incidents (source, started_at, ended_at, closed_by)
    values (p_source, now() - p_started_ago, now() - p_ended_ago,
        case when p_ended_ago is not null then 'tests' end)
    returning id
$$;
create function pg_temp.verdict()
returns table (defer_until timestamptz, incident_id bigint, incident_open boolean)
language sql as $$
    select d.defer_until, d.incident_id, d.incident_open
    from recording_finalize.upload_deferral(
        (select id from messenger.call_recordings limit 1), interval '30 minutes'
    ) as d
$$;

-- No incident at all: the 404 stands, exactly as before incidents existed.
select is_empty('select * from pg_temp.verdict()', 'no incident: no deferral (Failed as today)');

-- Overlap at the window's start: began before the session ended, ended after it, 10 min ago.
select pg_temp.incident('3 hours', '10 minutes') as i1 \gset
select results_eq('select * from pg_temp.verdict()',
    format($$values (now() + interval '20 minutes', %s::bigint, false)$$, :i1),
    'an incident straddling the window start, ended 10 min ago: deferred to its end + grace');
delete from messenger.storage_incidents;

-- Ended before the window opened: not this recording's business.
select pg_temp.incident('3 hours', '02:00:01');
select is_empty('select * from pg_temp.verdict()',
    'an incident that ended 1 s before the window opened does not defer');
delete from messenger.storage_incidents;

-- Ended exactly when the window opened (with a grace long enough): it overlaps.
select pg_temp.incident('3 hours', '2 hours') as i2 \gset
select results_eq(
    $$select d.defer_until, d.incident_id from recording_finalize.upload_deferral(
        (select id from messenger.call_recordings limit 1), interval '3 hours') as d$$,
    format($$values (now() + interval '1 hour', %s::bigint)$$, :i2),
    'an incident that ended exactly at the window start overlaps it');
delete from messenger.storage_incidents;

-- Overlap at the window's end: began after the session ended (inside the window).
select pg_temp.incident('20 minutes', '5 minutes') as i3 \gset
select results_eq('select * from pg_temp.verdict()',
    format($$values (now() + interval '25 minutes', %s::bigint, false)$$, :i3),
    'an incident inside the window, ended 5 min ago: deferred to its end + grace');
delete from messenger.storage_incidents;

-- Open incident: deferred by the grace from now, whatever its start.
select pg_temp.incident('1 hour', null) as i4 \gset
select results_eq('select * from pg_temp.verdict()',
    format($$values (now() + interval '30 minutes', %s::bigint, true)$$, :i4),
    'an open incident defers by the grace from now');
select matches((select reason from recording_finalize.upload_deferral(:'rec', '30 minutes')),
    '^StorageIncident: worker incident [0-9]+ open since ',
    'the reason names the source, the incident and that it is open');
delete from messenger.storage_incidents;

-- Grace boundary: ended exactly one grace ago no longer defers; a second less still does.
select pg_temp.incident('1 hour', '30 minutes');
select is_empty('select * from pg_temp.verdict()',
    'an incident that ended exactly the grace ago does not defer');
delete from messenger.storage_incidents;
select pg_temp.incident('1 hour', '00:29:59') as i5 \gset
select results_eq('select * from pg_temp.verdict()',
    format($$values (now() + interval '1 second', %s::bigint, false)$$, :i5),
    'an incident that ended 1 s less than the grace ago defers for that second');
select matches((select reason from recording_finalize.upload_deferral(:'rec', '30 minutes')),
    '^StorageIncident: worker incident [0-9]+ ended .* within the upload grace of 00:30:00; '
    'a 404 is not trusted before ',
    'the reason of a closed incident says when the 404 becomes trusted');
delete from messenger.storage_incidents;

-- Several incidents: the one that defers longest decides; one outside the window is ignored.
select pg_temp.incident('5 hours', '4 hours', 'ops');
select pg_temp.incident('1 hour', '20 minutes', 'recorder');
select pg_temp.incident('15 minutes', '2 minutes') as i6 \gset
select results_eq('select * from pg_temp.verdict()',
    format($$values (now() + interval '28 minutes', %s::bigint, false)$$, :i6),
    'several incidents: the latest end + grace decides');
select pg_temp.incident('1 minute', null, 'recorder') as i7 \gset
select results_eq('select * from pg_temp.verdict()',
    format($$values (now() + interval '30 minutes', %s::bigint, true)$$, :i7),
    'several incidents, one open: the open one decides');
delete from messenger.storage_incidents;

-- An incident that starts after the moment judged does not count (p_as_of in the past).
select pg_temp.incident('10 minutes', null);
select is_empty(
    $$select * from recording_finalize.upload_deferral(
        (select id from messenger.call_recordings limit 1), '30 minutes',
        now() - interval '11 minutes')$$,
    'an incident that started after p_as_of does not defer');
delete from messenger.storage_incidents;

-- The grace must be positive.
select throws_ok(format($$select * from recording_finalize.upload_deferral(%L, '0')$$, :'rec'),
    'RF001', null, 'a zero grace is refused');
select throws_ok(format($$select * from recording_finalize.upload_deferral(%L, null)$$, :'rec'),
    'RF001', null, 'a null grace is refused');
select is(
    (select count(*) from messenger.call_recordings where status = 'Uploading'), 1::bigint,
    'the rule only reads: the recording is untouched');

select * from finish();
rollback;
