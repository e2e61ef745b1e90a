-- check_adapter: a privilege the product's owner lacks beneath a view (here SELECT on one of the
-- service's tables the sessions view reads) is an error row naming the port, the SQLSTATE and
-- the table, before any row is touched - not a failure of the worker at run time.
begin;
select plan(3);

select tests.clean_slate();
select tests.make_stuck() as active \gset
select n.nspowner::regrole::text as owner from pg_catalog.pg_namespace as n
where n.nspname = 'recording_finalize' \gset
-- The service's DBA takes the privilege away (inside this test's transaction only).
select format('revoke select on messenger.conference_sessions from %I', :'owner') \gexec

create temp table findings as select * from recording_finalize.check_adapter();
select results_eq(
    $$select severity, port from findings where severity = 'error'$$,
    $$values ('error', 'recording_finalize_adapter.sessions')$$,
    'one error, on the sessions port'
);
select alike(
    (select problem from findings where port = 'recording_finalize_adapter.sessions'),
    '%42501%conference_sessions%',
    'the problem names the SQLSTATE and the table'
);
select alike(
    (select fix from findings where port = 'recording_finalize_adapter.sessions'),
    '%grant%',
    'and the fix says to grant it'
);

select * from finish();
rollback;
