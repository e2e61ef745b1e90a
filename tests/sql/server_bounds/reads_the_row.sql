-- server_bounds: the worker reads the 0014 bounds (defaults, then the owner's change) without
-- any privilege on the settings table.
begin;
select plan(3);

create role rfr_pgtap_bounds_worker login in role recording_finalize_worker;
set local session authorization rfr_pgtap_bounds_worker;
select results_eq(
    'select * from recording_finalize.server_bounds()',
    $$values (interval '1 day', interval '90 days', interval '1 second', interval '24 hours', 1)$$,
    'the defaults of migration 0014'
);
select throws_ok('select retention_min from recording_finalize.settings', '42501', null,
    'the table itself stays owner only');
reset session authorization;
update recording_finalize.settings set retention_min = '7 days', max_attempts_min = 3;
set local session authorization rfr_pgtap_bounds_worker;
select results_eq(
    'select retention_min, max_attempts_min from recording_finalize.server_bounds()',
    $$values (interval '7 days', 3)$$, 'the owner''s change is what the worker reads'
);
reset session authorization;

select * from finish();
rollback;
