-- How many known uploads must answer 404 before a 404 says the key layout is wrong: the number
-- the worker HEADs (recording_finalize.known_uploads' default) and the one the rule asks for
-- (key_layout_unconfirmed), stated once.

create or replace function recording_finalize_internal.key_layout_evidence()
returns integer
language sql
immutable
-- No SET clause, so that it is inlined into key_layout_unconfirmed (see claim_decision).
as $$
    -- Two: a new system with only two uploads is protected too. Both must answer 404 and none
    -- otherwise, so a single binary gone missing (deleted by hand) proves nothing.
    select 2
$$;

comment on function recording_finalize_internal.key_layout_evidence() is
'Internal. The number of known uploads (recording_finalize.known_uploads, the newest Available '
'recordings) the worker HEADs when a cycle''s first 404 comes before any object was found, and '
'how many of them must answer 404 (none otherwise) for key_layout_unconfirmed to take the '
'bucket, prefix or key template as wrong. Pure.';

revoke all on function recording_finalize_internal.key_layout_evidence() from public;
