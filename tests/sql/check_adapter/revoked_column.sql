-- check_adapter: a column of the service's table the product's owner may not read (here the
-- recordings' session_kind) is one error on the view that reads it, found by reading the view
-- whole - not a failure of a write port's rehearsal, which reads that view too.
begin;
select plan(2);

select tests.clean_slate();
select tests.make_stuck() as active \gset
select n.nspowner::regrole::text as owner from pg_catalog.pg_namespace as n
where n.nspname = 'recording_finalize' \gset
-- The service's DBA grants every column but one (inside this test's transaction only).
select format('revoke select on messenger.call_recordings from %I', :'owner') \gexec
select format('grant select (%s) on messenger.call_recordings to %I',
    string_agg(quote_ident(a.attname), ', '), :'owner')
from pg_catalog.pg_attribute as a
where a.attrelid = 'messenger.call_recordings'::regclass and a.attnum > 0
    and not a.attisdropped and a.attname <> 'session_kind' \gexec

create temp table findings as select * from recording_finalize.check_adapter();
select results_eq(
    $$select severity, port from findings where severity = 'error'$$,
    $$values ('error', 'recording_finalize_adapter.recordings')$$,
    'one error, on the recordings port: no write port blamed'
);
select alike(
    (select problem from findings where port = 'recording_finalize_adapter.recordings'),
    'reading it fails: 42501%call_recordings%',
    'the problem names the SQLSTATE and the table'
);

select * from finish();
rollback;
