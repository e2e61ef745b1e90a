-- The server's bounds of the upload grace (apply_outcome p_upload_grace, RFR_UPLOAD_GRACE).

create or replace function recording_finalize.check_upload_grace(p_upload_grace interval)
returns interval
language plpgsql
stable
set search_path = ''
as $$
declare
    v_min interval;
    v_max interval;
begin
    select s.upload_grace_min, s.upload_grace_max into v_min, v_max
    from recording_finalize.settings as s;
    if not found then
        raise exception using
            errcode = 'P0002',
            message = 'recording_finalize.settings has no row',
            hint = 'Restore its one row as the owner: insert into recording_finalize.settings '
                'default values (then set the topic and bounds).';
    end if;
    -- NULL and values <= 0 are left to upload_deferral's own rule (RF001).
    if p_upload_grace > interval '0' and p_upload_grace not between v_min and v_max then
        raise exception using
            errcode = 'RF010',
            message = format(
                'policy_out_of_bounds: p_upload_grace is %s; the server''s bound '
                '(recording_finalize.settings) is %s..%s', p_upload_grace, v_min, v_max
            ),
            hint = 'Bring RFR_UPLOAD_GRACE (unset: RFR_FINALIZE_SLA_TIMEOUT) within the bound, '
                'or have the owner change recording_finalize.settings.';
    end if;
    return v_max;
end
$$;

comment on function recording_finalize.check_upload_grace(interval) is
'Internal (no grant). Raises RF010 (policy_out_of_bounds) when p_upload_grace is > 0 and '
'outside [settings.upload_grace_min, settings.upload_grace_max]; NULL and values <= 0 are left '
'to upload_deferral (RF001). Returns upload_grace_max, the cap of a deferral (apply_outcome '
'defers a 404 at most until now() + it). Called first by apply_outcome. Read-only.';

revoke all on function recording_finalize.check_upload_grace(interval) from public;
