-- The finalize rows a worker still holds by claim token, locked without waiting.

create or replace function recording_finalize_internal.still_claimed(
    p_recording_ids uuid[],
    p_claim_tokens uuid[]
)
returns setof uuid
-- PL/pgSQL, not SQL: creating a SQL function would lock the table its body names (migrate takes
-- no lock on a table in the service's schema), and its plan is kept for the session.
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
    -- Only a row still Pending and claimed with that token: one another runner re-claimed, or
    -- that was settled meanwhile, is not this worker's any more. A row another transaction
    -- holds right now (the ingest callback closing it) is skipped, never waited for.
    return query
    select x.id
    from messenger.recording_finalize_attempts as x
    -- Multi-argument unnest is FROM-clause syntax: it cannot be schema-qualified.
    join unnest(p_recording_ids, p_claim_tokens) as c (recording_id, token)
        on x.recording_id = c.recording_id and x.claim_token = c.token
    where x.status = 'Pending'
    for no key update of x skip locked;
end
$$;
comment on function recording_finalize_internal.still_claimed(uuid[], uuid[]) is
'Internal. The ids of the finalize rows among p_recording_ids still Pending and claimed with '
'the matching p_claim_tokens, locked FOR NO KEY UPDATE SKIP LOCKED (a row being settled is '
'skipped, never waited for). The one rule of release_claims and record_apply_failure.';

revoke all on function recording_finalize_internal.still_claimed(uuid[], uuid[]) from public;
