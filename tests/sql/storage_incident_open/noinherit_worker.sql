-- A NOINHERIT worker login that SET ROLEs to the worker role is still only a worker (DBA review
-- finding 3): it records incidents of source worker only, RF018 for any other, as the
-- inheriting worker login does. A NOINHERIT operator login keeps its operator rights.
begin;
select plan(6);

delete from messenger.storage_incidents;
create role rfr_pgtap_noinherit_worker login noinherit in role recording_finalize_worker;
create role rfr_pgtap_noinherit_operator login noinherit in role recording_finalize_operator;

set local session authorization rfr_pgtap_noinherit_worker;
set local role recording_finalize_worker;
select is((select created from recording_finalize.storage_incident_open('worker', 'seen')), true,
    'the NOINHERIT worker opens an incident of source worker');
select throws_ok(
    $$select * from recording_finalize.storage_incident_open('ops', 'fake',
        now() - interval '30 days')$$,
    'RF018', null, 'but not a back-dated one of source ops');
select throws_ok($$select * from recording_finalize.storage_incident_open('recorder', 'fake')$$,
    'RF018', null, 'nor one of source recorder');
select throws_ok($$select * from recording_finalize.storage_incident_close('ops')$$,
    'RF018', null, 'nor close the operators'' incident');
reset role;
reset session authorization;

set local session authorization rfr_pgtap_noinherit_operator;
set local role recording_finalize_operator;
select is((select created from recording_finalize.storage_incident_open('ops', 'paths')),
    true, 'a NOINHERIT operator opens an incident of any source');
select is((select closed_by from recording_finalize.storage_incident_close('ops')),
    'rfr_pgtap_noinherit_operator', 'and closes it');
reset role;
reset session authorization;

select * from finish();
rollback;
