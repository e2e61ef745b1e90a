-- The discovery-index check judges the queries discovery runs, not a copy of them: the slice of
-- each discovery function is an internal function, and the check runs those same functions.
begin;
select plan(4);

create temp table src as
select p.proname::text as name, p.prosrc
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
where n.nspname = 'recording_finalize'
    and p.proname in ('discover_stuck', 'discover_unpublished', 'check_adapter');

select ok(
    (select prosrc like '%recording_finalize_internal.active_recordings_after(%'
        and prosrc not like '%from recording_finalize_adapter.recordings%'
        from src where name = 'discover_stuck'),
    'discover_stuck reads its slice through active_recordings_after, and nothing else'
);
select ok(
    (select prosrc like '%recording_finalize_internal.available_recordings_after(%'
        from src where name = 'discover_unpublished'),
    'discover_unpublished reads its slice through available_recordings_after'
);
select ok(
    (select prosrc like '%recording_finalize_internal.active_recordings_after(%'
        and prosrc like '%recording_finalize_internal.available_recordings_after(%'
        from src where name = 'check_adapter'),
    'check_adapter judges both'
);
select ok(
    (select prosrc not like '%order by r.session_kind%'
        and prosrc not like '%order by r.available_at%'
        from src where name = 'check_adapter'),
    'and restates neither scan'
);

select * from finish();
rollback;
