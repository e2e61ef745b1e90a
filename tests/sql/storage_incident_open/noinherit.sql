-- A NOINHERIT login that SET ROLEs to its group is still only what it logged in as (DBA review
-- finding 3): a worker records source worker only, a service source recorders only, RF018 for
-- any other; a NOINHERIT operator keeps its operator rights. Without SET ROLE a NOINHERIT login
-- cannot call the function at all.
begin;
select plan(9);

select tests.clean_slate();
create role rfr_pgtap_sio_ni_worker login noinherit in role recording_finalize_worker;
create role rfr_pgtap_sio_ni_service login noinherit in role recording_finalize_service;
create role rfr_pgtap_sio_ni_operator login noinherit in role recording_finalize_operator;

set local session authorization rfr_pgtap_sio_ni_worker;
select throws_ok($$select * from recording_finalize.storage_incident_open('worker')$$,
    '42501', null, 'without SET ROLE the NOINHERIT worker has no EXECUTE');
set local role recording_finalize_worker;
select is((select created from recording_finalize.storage_incident_open('worker', 'seen')), true,
    'after SET ROLE it opens an incident of source worker');
select throws_ok(
    $$select * from recording_finalize.storage_incident_open('ops', 'fake',
        now() - interval '30 days')$$,
    'RF018', null, 'but not a back-dated one of source ops');
select throws_ok($$select * from recording_finalize.storage_incident_open('recorders', 'fake')$$,
    'RF018', null, 'nor one of source recorders');
reset role;
reset session authorization;

set local session authorization rfr_pgtap_sio_ni_service;
set local role recording_finalize_service;
select is((select created from recording_finalize.storage_incident_open('recorders')), true,
    'the NOINHERIT service opens an incident of source recorders');
select throws_ok($$select * from recording_finalize.storage_incident_close('worker')$$,
    'RF018', null, 'but may not close the worker''s');
reset role;
reset session authorization;

set local session authorization rfr_pgtap_sio_ni_operator;
set local role recording_finalize_operator;
select is((select created from recording_finalize.storage_incident_open('ops', 'paths')),
    true, 'a NOINHERIT operator opens an incident of any source');
select is((select closed_by from recording_finalize.storage_incident_close('worker')),
    'rfr_pgtap_sio_ni_operator', 'and closes the worker''s');
reset role;
reset session authorization;

select is(
    (select string_agg(source || ':' || opened_by, ', ' order by source)
        from recording_finalize.storage_incidents),
    'ops:rfr_pgtap_sio_ni_operator, recorders:rfr_pgtap_sio_ni_service, '
    'worker:rfr_pgtap_sio_ni_worker',
    'opened_by names each login, not the role it set'
);

select * from finish();
rollback;
