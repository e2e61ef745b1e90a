-- The one rule for a relay batch: 1..10000 rows, and no more than the server allows.

create or replace function recording_finalize_internal.check_relay_batch(p_limit integer)
returns void
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
    v_max integer;
begin
    if p_limit is null or p_limit not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: relay_batch_size must be 1..10000, got %s',
                p_limit),
            column = 'relay_batch_size';
    end if;
    select s.relay_batch_max into v_max from recording_finalize.settings as s;
    if p_limit > v_max then
        raise exception using
            errcode = 'RF010',
            message = format('policy_out_of_bounds: relay_batch_size is %s; the server''s bound '
                'is at most %s (recording_finalize.settings)', p_limit, v_max),
            hint = 'Lower RFR_RELAY_BATCH_SIZE, or have the owner raise '
                'recording_finalize.settings.relay_batch_max.',
            column = 'relay_batch_size';
    end if;
end
$$;

comment on function recording_finalize_internal.check_relay_batch(integer) is
'Internal. RF001 unless p_limit is 1..10000, RF010 above settings.relay_batch_max (COLUMN '
'relay_batch_size). Called by relay_claim for its batch and by set_policy for the driver''s '
'start-up check: the one place of this rule. Read-only.';

revoke all on function recording_finalize_internal.check_relay_batch(integer) from public;
