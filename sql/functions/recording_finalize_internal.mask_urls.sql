-- Masks every URL in a free text before it is stored (last_error, reasons): never a URL at rest.

create or replace function recording_finalize_internal.mask_urls(p_text text, p_max integer)
returns text
language sql
immutable
parallel safe
-- No SET clause, so that it is inlined where it is called (see claim_decision).
as $$
    select pg_catalog.left(
        pg_catalog.regexp_replace(
            pg_catalog.btrim(p_text), '[A-Za-z][A-Za-z0-9+.-]*://[^[:space:]]*', '<url>', 'g'
        ),
        p_max
    )
$$;

comment on function recording_finalize_internal.mask_urls(text, integer) is
'Internal. p_text trimmed, every scheme://... replaced by <url>, cut to p_max characters: the one '
'URL mask of every free text the product stores (last_error, incident reasons). NULL stays NULL.';

revoke all on function recording_finalize_internal.mask_urls(text, integer) from public;
