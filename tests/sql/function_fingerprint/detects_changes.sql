-- function_fingerprint: stable for an unchanged function, different after any change of its
-- body, comment or grants; NULL for a file that defines nothing; the caller's search_path
-- does not matter.
begin;
select plan(6);

select recording_finalize.function_fingerprint('recording_finalize.stats.sql') as before \gset

select is(
    recording_finalize.function_fingerprint('recording_finalize.stats.sql'), :'before',
    'the same definition gives the same fingerprint'
);
set local search_path = messenger, recording_finalize, public;
select is(
    recording_finalize.function_fingerprint('recording_finalize.stats.sql'), :'before',
    'whatever the caller''s search_path'
);
reset search_path;
select is(
    recording_finalize.function_fingerprint('recording_finalize.no_such_function.sql'), null,
    'a file that defines no existing function has none'
);

comment on function recording_finalize.stats(text) is 'changed by hand';
select isnt(
    recording_finalize.function_fingerprint('recording_finalize.stats.sql'), :'before',
    'a changed comment changes it'
);
select recording_finalize.function_fingerprint('recording_finalize.stats.sql') as commented \gset
grant execute on function recording_finalize.stats(text) to public;
select isnt(
    recording_finalize.function_fingerprint('recording_finalize.stats.sql'), :'commented',
    'a changed grant changes it'
);
select recording_finalize.function_fingerprint('recording_finalize.stats.sql') as granted \gset
create or replace function recording_finalize.stats(
    p_topic text default 'pin.messenger.call-recording-available.v1'
)
returns table (
    backlog bigint, due bigint, oldest_age_seconds double precision, quarantined bigint,
    publish_backlog bigint, oldest_unpublished_age_seconds double precision
)
language sql stable security definer set search_path = ''
as $$ select 0::bigint, 0::bigint, 0::double precision, 0::bigint, 0::bigint, 0::double precision $$;
select isnt(
    recording_finalize.function_fingerprint('recording_finalize.stats.sql'), :'granted',
    'a changed body changes it'
);

select * from finish();
rollback;
