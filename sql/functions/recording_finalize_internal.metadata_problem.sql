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
        when p_file_id is null or p_size_bytes is null or p_duration_seconds is null
            or p_format is null
            then 'file_id, size_bytes, duration_seconds and format are all required'
        -- Blank: nothing but white space (tabs and line breaks too, not only spaces).
        when p_file_id !~ '[^[:space:]]' then 'file_id is blank'
        when pg_catalog.length(p_file_id) > 1024 then 'file_id is longer than 1024 characters'
        -- INV-REC-6: a stable storage reference, never a URL.
        when p_file_id ~ '^[A-Za-z][A-Za-z0-9+.-]*://'
            then 'file_id is a URL, not a storage reference'
        when p_size_bytes < 0 then 'size_bytes must be >= 0'
        when p_duration_seconds < 0 then 'duration_seconds must be >= 0'
        when p_format not in ('Webm', 'Mp4', 'Ogg', 'M4a')
            then 'format must be one of Webm, Mp4, Ogg, M4a'
    end
$$;

comment on function recording_finalize_internal.metadata_problem(text, bigint, integer, text) is
'Internal, pure. The rules a recording''s adopted file metadata obeys before it may become '
'Available (apply_outcome found, recording_ingest_completed): all four present; file_id not '
'blank (white space only), at most 1024 characters, not a URL; size and duration >= 0; format '
'Webm, Mp4, Ogg or M4a. Returns the first rule broken, in words, or NULL. The product checks '
'them itself: the service''s table may have other CHECKs, or none.';

revoke all on function recording_finalize_internal.metadata_problem(text, bigint, integer, text)
from public;
