-- function_fingerprint (internal): stable for an unchanged function file, different after any
-- change of a definition, comment or grant, or an overload added; NULL for a file that defines
-- nothing; independent of the caller's search_path; not callable by the worker.
begin;
select plan(10);

create role rfr_pgtap_worker_login login in role recording_finalize_worker;
select recording_finalize_internal.function_fingerprint('recording_finalize.server_settings.sql')
    as before \gset

select matches(:'before'::text, '^[0-9a-f]{32}$', 'an md5 of the file''s definitions');
select is(
    recording_finalize_internal.function_fingerprint('recording_finalize.server_settings.sql'),
    :'before',
    'the same definition gives the same fingerprint'
);
set local search_path = messenger, recording_finalize, recording_finalize_internal, public;
select is(
    recording_finalize_internal.function_fingerprint('recording_finalize.server_settings.sql'),
    :'before',
    'whatever the caller''s search_path'
);
reset search_path;
select is(
    recording_finalize_internal.function_fingerprint('recording_finalize.no_such_function.sql'),
    null, 'a file that defines no existing function has none'
);
select is(
    recording_finalize_internal.function_fingerprint('messenger.server_settings.sql'), null,
    'the schema is part of the name'
);
select isnt(
    recording_finalize_internal.function_fingerprint('recording_finalize_internal.topic.sql'),
    :'before',
    'another file has another fingerprint'
);

comment on function recording_finalize.server_settings() is 'changed by hand';
select isnt(
    recording_finalize_internal.function_fingerprint('recording_finalize.server_settings.sql'),
    :'before',
    'a changed comment changes it'
);
select recording_finalize_internal.function_fingerprint('recording_finalize.server_settings.sql')
    as commented \gset
grant execute on function recording_finalize.server_settings() to public;
select isnt(
    recording_finalize_internal.function_fingerprint('recording_finalize.server_settings.sql'),
    :'commented',
    'a changed grant changes it'
);
select recording_finalize_internal.function_fingerprint('recording_finalize.server_settings.sql')
    as granted \gset
create or replace function recording_finalize.server_settings()
returns jsonb
language sql stable security definer set search_path = ''
as $$ select '{}'::jsonb $$;
select isnt(
    recording_finalize_internal.function_fingerprint('recording_finalize.server_settings.sql'),
    :'granted',
    'a changed body changes it'
);

set local role rfr_pgtap_worker_login;
select throws_ok(
    $$select recording_finalize_internal.function_fingerprint('recording_finalize.stats.sql')$$,
    '42501', null, 'the worker cannot call the internal function_fingerprint'
);
reset role;

select * from finish();
rollback;
