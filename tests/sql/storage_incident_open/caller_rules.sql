-- Who may record which incident, by membership of the login (session_user): the worker only
-- source worker, the service only source recorders, operators and the owner any source; RF018
-- otherwise (deny by default). Login roles are created inside the transaction.
begin;
select plan(16);

select tests.clean_slate();
create role rfr_pgtap_sio_worker login in role recording_finalize_worker;
create role rfr_pgtap_sio_service login in role recording_finalize_service;
create role rfr_pgtap_sio_operator login in role recording_finalize_operator;
create role rfr_pgtap_sio_owner_member login in role rfr_schema_owner;
create role rfr_pgtap_sio_stranger login;
grant usage on schema recording_finalize to rfr_pgtap_sio_stranger;
grant execute on function recording_finalize.storage_incident_open(text, text, timestamptz)
to rfr_pgtap_sio_stranger;

set local session authorization rfr_pgtap_sio_worker;
select is((select created from recording_finalize.storage_incident_open('worker', 'seen')), true,
    'the worker opens an incident of source worker');
select throws_ok($$select * from recording_finalize.storage_incident_open('recorders')$$,
    'RF018', null, 'the worker may not open one of source recorders');
select throws_ok($$select * from recording_finalize.storage_incident_open('ops')$$,
    'RF018', null, 'nor of any other source');
select throws_ok($$select * from recording_finalize.storage_incident_close('ops')$$,
    'RF018', null, 'nor close one of another source (even when none is open)');
select is((select opened_by from recording_finalize.storage_incident_close('worker')),
    'rfr_pgtap_sio_worker', 'it closes its own; opened_by is its login');
reset session authorization;

set local session authorization rfr_pgtap_sio_service;
select is((select created from recording_finalize.storage_incident_open('recorders', 'PUT 503')),
    true, 'the service opens an incident of source recorders');
select throws_ok($$select * from recording_finalize.storage_incident_open('worker')$$,
    'RF018', null, 'the service may not open one of source worker');
select throws_ok($$select * from recording_finalize.storage_incident_open('ops')$$,
    'RF018', null, 'nor of any other source');
select is((select closed_by from recording_finalize.storage_incident_close('recorders')),
    'rfr_pgtap_sio_service', 'it closes its own');
reset session authorization;

set local session authorization rfr_pgtap_sio_operator;
select is((select created from recording_finalize.storage_incident_open('ops', 'region down')),
    true, 'an operator opens an incident of any source');
select is((select created from recording_finalize.storage_incident_open('worker')), true,
    'including the worker''s');
select is((select closed_by from recording_finalize.storage_incident_close('worker')),
    'rfr_pgtap_sio_operator', 'and closes it');
reset session authorization;

set local session authorization rfr_schema_owner;
select is((select created from recording_finalize.storage_incident_open('recorders')), true,
    'the owner records any source');
reset session authorization;
set local session authorization rfr_pgtap_sio_owner_member;
select is((select source from recording_finalize.storage_incident_close('ops')), 'ops',
    'so does a login that is a member of the owner');
reset session authorization;

-- Deny by default: the EXECUTE privilege alone gives no source.
set local session authorization rfr_pgtap_sio_stranger;
select throws_ok($$select * from recording_finalize.storage_incident_open('worker')$$,
    'RF018', null, 'a login with EXECUTE but no membership may not record source worker');
select throws_ok($$select * from recording_finalize.storage_incident_open('strangers')$$,
    'RF018', null, 'nor a source of its own');
reset session authorization;

select * from finish();
rollback;
