-- Rule 2 of whether a 404 is believed (outcome_decision states all three), in a file of its own
-- so that the worker's /readyz judges the storage by the same rule as the apply path (through
-- recording_finalize.storage_layout_unconfirmed).

create or replace function recording_finalize_internal.key_layout_unconfirmed(
    p_objects_found integer,
    p_known_missing integer,
    p_known_other integer
)
returns boolean
language sql
immutable
-- No SET clause, so that it is inlined into outcome_decision (see claim_decision).
as $$
    -- Nothing found by the cycle, and the known uploads looked at (key_layout_evidence of them),
    -- every one of them, answered 404: the bucket, prefix or key template is not the recorders'.
    -- Fewer (a new system), or one that answered otherwise, and the bucket alone stands.
    select coalesce(p_objects_found, 0) = 0
        and coalesce(p_known_missing, 0) >= recording_finalize_internal.key_layout_evidence()
        and coalesce(p_known_other, 0) = 0
$$;

comment on function recording_finalize_internal.key_layout_unconfirmed(
    integer, integer, integer
) is
'True when the file storage has shown it does not hold what it should: the cycle found no object '
'(p_objects_found: its HEADs and the known uploads) while at least key_layout_evidence() (2) '
'known uploads (known_uploads), and all of them, answered 404 (p_known_missing; '
'p_known_other: those that answered otherwise). outcome_decision then takes a 404 as a '
'configuration error (KeyLayoutUnconfirmed), never a Failed recording. NULL counts: not looked. '
'Pure.';

revoke all on function recording_finalize_internal.key_layout_unconfirmed(
    integer, integer, integer
) from public;
