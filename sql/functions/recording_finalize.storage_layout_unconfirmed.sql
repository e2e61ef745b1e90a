-- /readyz's question to the database: do the known uploads' answers say the bucket or key
-- template is wrong? The rule is key_layout_unconfirmed's, the one outcome_decision applies.

create or replace function recording_finalize.storage_layout_unconfirmed(
    p_known_found integer,
    p_known_missing integer,
    p_known_other integer
)
returns boolean
language sql
immutable
security definer
set search_path = pg_catalog, pg_temp
as $$
    select recording_finalize_internal.key_layout_unconfirmed(
        p_known_found, p_known_missing, p_known_other)
$$;

comment on function recording_finalize.storage_layout_unconfirmed(integer, integer, integer) is
'True when the HEADs of the known uploads (known_uploads) say the file storage is not the '
'recorders'': none found (p_known_found), at least key_layout_evidence() (2) and all of them '
'404 (p_known_missing; p_known_other: answered otherwise); the rule outcome_decision '
'applies to a cycle''s 404s (key_layout_unconfirmed). The worker''s /readyz answers 503 '
'then. Pure; no lock. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.storage_layout_unconfirmed(integer, integer, integer)
from public;
grant execute on function recording_finalize.storage_layout_unconfirmed(integer, integer, integer)
to recording_finalize_worker;
