-- The one rule for a retention: at least a minute, and no fresher than the server allows.

create or replace function recording_finalize_internal.check_retention(p_older_than interval)
returns void
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
    v_min interval;
begin
    if p_older_than is null or p_older_than < interval '1 minute' then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: retention (prune p_older_than) must be at least '
                '1 minute, got %s', p_older_than),
            column = 'retention';
    end if;
    select s.retention_min into v_min from recording_finalize.settings as s;
    if p_older_than < v_min then
        raise exception using
            errcode = 'RF010',
            message = format('policy_out_of_bounds: retention is %s; the server''s bound '
                '(recording_finalize.settings.retention_min) is at least %s', p_older_than,
                v_min),
            hint = 'Prune older history only, or have the owner lower '
                'recording_finalize.settings.retention_min.',
            column = 'retention';
    end if;
end
$$;

comment on function recording_finalize_internal.check_retention(interval) is
'Internal. RF001 below 1 minute, RF010 below settings.retention_min (COLUMN retention). Called '
'by prune and by set_policy for the driver''s start-up check (RFR_RETENTION): the one place '
'of this rule. Read-only.';

revoke all on function recording_finalize_internal.check_retention(interval) from public;
