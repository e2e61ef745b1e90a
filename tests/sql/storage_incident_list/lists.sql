-- storage_incident_list: open first, then recently ended, newest first; old ones left out.
begin;
select plan(10);

select tests.clean_slate();
insert into recording_finalize.storage_incidents (source, started_at, ended_at, closed_by) values
    ('ops', now() - interval '30 days', now() - interval '29 days', 'x'),
    ('recorders', now() - interval '3 hours', now() - interval '2 hours', 'x'),
    ('ops', now() - interval '1 hour', now() - interval '50 minutes', 'x');
insert into recording_finalize.storage_incidents (source, started_at) values
    ('worker', now() - interval '5 hours');

select results_eq(
    'select source, is_open, duration_seconds from recording_finalize.storage_incident_list()',
    $$values ('worker', true, 18000::double precision), ('ops', false, 600::double precision),
        ('recorders', false, 3600::double precision)$$,
    'open first (even one that started before the others ended), then ended within 7 days '
    'newest first; durations in seconds');
select results_eq(
    $$select source from recording_finalize.storage_incident_list('1 hour', 10)$$,
    $$values ('worker'), ('ops')$$,
    'p_recent narrows the ended ones; open ones always show');
select throws_ok($$select * from recording_finalize.storage_incident_list('1 day', 0)$$,
    'RF001', null, 'p_limit 0 is refused');
select throws_ok($$select * from recording_finalize.storage_incident_list('-1 day', 5)$$,
    'RF001', null, 'a negative p_recent is refused');

select results_eq(
    $$select source from recording_finalize.storage_incident_list('7 days', 2)$$,
    $$values ('worker'), ('ops')$$,
    'p_limit keeps the first rows in that order');
select throws_ok($$select * from recording_finalize.storage_incident_list('1 day', 10001)$$,
    'RF001', null, 'p_limit above 10000 is refused');
select throws_ok($$select * from recording_finalize.storage_incident_list(null, 5)$$,
    'RF001', null, 'a NULL p_recent is refused');
select results_eq(
    $$select reason, opened_by, closed_by from recording_finalize.storage_incident_list()
    where is_open$$,
    format($$values (null::text, %L::text, null::text)$$, session_user),
    'the open one: no reason given, opened_by the login, not closed');

-- Who may list: the worker and the operators, not the service.
create role rfr_pgtap_sil_worker login in role recording_finalize_worker;
create role rfr_pgtap_sil_service login in role recording_finalize_service;
set local session authorization rfr_pgtap_sil_worker;
select is((select count(*) from recording_finalize.storage_incident_list()), 3::bigint,
    'the worker lists them');
reset session authorization;
set local session authorization rfr_pgtap_sil_service;
select throws_ok($$select * from recording_finalize.storage_incident_list()$$,
    '42501', null, 'the service may not');
reset session authorization;

select * from finish();
rollback;
