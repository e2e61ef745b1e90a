-- The file-metadata rules, stated once: why a set of adopted metadata is unusable, or NULL.

create or replace function recording_finalize_internal.metadata_problem(
    p_file_id text,
    p_size_bytes bigint,
    p_duration_seconds integer,
    p_format text
)
returns text
language sql
immutable
parallel safe
-- No SET clause, so that it is inlined where it is called (see claim_decision).
as $$
    select case
        when p_file_id is null then 'file_id is required'
        when p_size_bytes is null then 'size_bytes is required'
        when p_duration_seconds is null then 'duration_seconds is required'
        when p_format is null then 'format is required'
        -- Blank: nothing but white space (tabs and line breaks too, not only spaces).
        when p_file_id !~ '[^[:space:]]' then 'file_id is blank'
        when pg_catalog.length(p_file_id) > 1024 then 'file_id is longer than 1024 characters'
        -- A storage reference is copied into logs, events and headers by the service: control
        -- characters (C0, DEL, C1) have no place in one; other scripts' letters do.
        when p_file_id ~ '[\x01-\x1F\x7F-\x9F]' then 'file_id has control characters'
        -- INV-REC-6: a stable storage reference, never a URL.
        when p_file_id ~ '^[A-Za-z][A-Za-z0-9+.-]*://'
            then 'file_id is a URL, not a storage reference'
        when p_size_bytes < 0 then 'size_bytes must be >= 0'
        when p_duration_seconds < 0 then 'duration_seconds must be >= 0'
        -- Seven days: a call recording longer than that is a corrupt value, not a long call.
        when p_duration_seconds > 604800 then 'duration_seconds is more than 604800 (7 days)'
        when p_format not in ('Webm', 'Mp4', 'Ogg', 'M4a')
            then 'format must be one of Webm, Mp4, Ogg, M4a'
    end
$$;

comment on function recording_finalize_internal.metadata_problem(text, bigint, integer, text) is
'Internal, pure. The rules a recording''s adopted file metadata obeys before it may become '
'Available (apply_outcome found, recording_ingest_completed): all four present (the first '
'missing one is named); file_id not blank (white space only), at most 1024 characters, no '
'control characters, not a URL; size >= 0; duration from 0 to 604800 (7 days); format Webm, '
'Mp4, Ogg or M4a (case-sensitive). Returns the first rule broken, in words naming the field, '
'or NULL. The product checks them itself: the service''s table may have other CHECKs, or none.';

revoke all on function recording_finalize_internal.metadata_problem(text, bigint, integer, text)
from public;
