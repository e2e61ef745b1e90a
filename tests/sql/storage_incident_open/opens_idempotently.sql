-- storage_incident_open: one open incident per source; opening again returns it unchanged.
begin;
select plan(13);

select tests.clean_slate();

create temp table first as
select * from recording_finalize.storage_incident_open('worker', 'EndpointConnectionError');
select results_eq('select source, started_at, ended_at, reason, created from first',
    $$values ('worker', now(), null::timestamptz, 'EndpointConnectionError', true)$$,
    'opens an incident of the source, now, with the reason');
select is((select opened_by from first), session_user::text, 'opened_by is the login role');

create temp table again as
select * from recording_finalize.storage_incident_open('worker', 'something else',
    now() - interval '1 hour');
select results_eq('select id, started_at, reason, created from again',
    'select id, started_at, reason, false from first',
    'opening again returns the open incident unchanged, created = false');
select is((select count(*) from recording_finalize.storage_incidents), 1::bigint,
    'still one incident');

select results_eq(
    $$select source, started_at, created from recording_finalize.storage_incident_open(
        'recorders', 'recorders time out on PUT', now() - interval '15 minutes')$$,
    $$values ('recorders', now() - interval '15 minutes', true)$$,
    'another source opens its own incident, back-dated with p_at');
select is(
    (select reason from recording_finalize.storage_incident_open('ops', 'see https://status/x')),
    'see <url>', 'URLs in the reason are masked');

select throws_ok(
    $$select * from recording_finalize.storage_incident_open('Worker!')$$,
    'RF016', null, 'a source that is not a short lowercase name is refused');
select throws_ok(
    $$select * from recording_finalize.storage_incident_open('ops2', null,
        now() + interval '1 minute')$$,
    'RF017', null, 'an incident cannot start in the future');
select throws_ok($$select * from recording_finalize.storage_incident_open(null)$$,
    'RF016', null, 'a NULL source is refused');
select throws_ok(
    format($$select * from recording_finalize.storage_incident_open(%L)$$, 'a' || repeat('b', 64)),
    'RF016', null, 'a source of 65 characters is refused');
select is(
    (select length(reason) from recording_finalize.storage_incident_open('long', repeat('r', 600))),
    512, 'a long reason is cut to 512 characters');
select is(
    (select reason from recording_finalize.storage_incident_open('blank', '   ')), null,
    'a blank reason is stored as NULL');
select throws_ok(
    $$insert into recording_finalize.storage_incidents (source, started_at)
    values ('worker', now())$$,
    '23505', null, 'the partial unique index allows one open incident per source');

select * from finish();
rollback;
