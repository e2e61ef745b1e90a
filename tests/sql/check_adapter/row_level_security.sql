-- check_adapter: row-level security on a table beneath a view that hides rows from the
-- product's owner (the worker would silently find nothing there) is an error row naming the
-- table and the policy that would fix it; a policy showing the owner every row clears it.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_stuck() as active \gset
select n.nspowner::regrole::text as owner from pg_catalog.pg_namespace as n
where n.nspname = 'recording_finalize' \gset
-- The service's DBA turns RLS on, for its own tenants (inside this test's transaction only).
alter table messenger.call_recordings enable row level security;
alter table messenger.call_recordings force row level security;
create policy tenant_only on messenger.call_recordings
using (session_id::text = current_setting('app.tenant', true));

create temp table findings as select * from recording_finalize.check_adapter(false);
select is(
    (select count(*) from findings where severity = 'error'
        and port = 'recording_finalize_adapter.recordings'
        and problem like '%row-level security on messenger.call_recordings hides rows%'),
    1::bigint,
    'an error on the recordings port names the table whose policy hides rows'
);
select alike(
    (select fix from findings where port = 'recording_finalize_adapter.recordings'
        and severity = 'error'),
    'drop policy if exists recording_finalize_all_rows on messenger.call_recordings; '
        || 'create policy recording_finalize_all_rows on messenger.call_recordings as permissive '
        || 'for all to ' || :'owner' || ' using (true) with check (true);%',
    'the fix is the policy that shows the product''s owner every row'
);
select is(
    (select count(*) from findings where problem like '%messenger.call_sessions%'),
    0::bigint,
    'a table without RLS is not reported'
);
-- The fix as printed (its statements, up to the explanation in parentheses).
select pg_catalog.left(fix, pg_catalog.strpos(fix, 'with check (true);') + 17)
from recording_finalize.check_adapter(false)
where port = 'recording_finalize_adapter.recordings' and severity = 'error' \gexec
select is_empty(
    $$select problem from recording_finalize.check_adapter(false)
    where severity = 'error'$$,
    'with that policy the finding is gone'
);

select * from finish();
rollback;
