-- Who may record which incident: the worker only its own source, an operator any source.
begin;
select plan(6);

delete from messenger.storage_incidents;
create role rfr_pgtap_incident_worker login in role recording_finalize_worker;
create role rfr_pgtap_incident_operator login in role recording_finalize_operator;

set local session authorization rfr_pgtap_incident_worker;
select is((select created from recording_finalize.storage_incident_open('worker', 'seen')), true,
    'the worker opens an incident of source worker');
select throws_ok($$select * from recording_finalize.storage_incident_open('recorder')$$,
    'RF018', null, 'the worker may not open an incident of another source');
select throws_ok($$select * from recording_finalize.storage_incident_close('ops')$$,
    'RF018', null, 'nor close one');
select is((select count(*) from recording_finalize.storage_incident_list()), 1::bigint,
    'the worker may list incidents');
reset session authorization;

set local session authorization rfr_pgtap_incident_operator;
select is((select created from recording_finalize.storage_incident_open('recorder', 'paths')),
    true, 'an operator opens an incident of any source');
select is((select closed_by from recording_finalize.storage_incident_close('worker')),
    'rfr_pgtap_incident_operator', 'and closes the worker''s');
reset session authorization;

select * from finish();
rollback;
