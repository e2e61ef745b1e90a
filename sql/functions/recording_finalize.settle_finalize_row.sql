-- The one way a finalize row ends: Done or Quarantined, its claim spent.

create or replace function recording_finalize.settle_finalize_row(
    p_recording_id uuid,
    p_status text,
    p_last_error text default null,
    p_count_attempt boolean default false
)
returns integer
language plpgsql
volatile
set search_path = ''
as $$
declare
    v_attempts integer;
begin
    if p_status is null or p_status not in ('Done', 'Quarantined') then
        raise exception using
            errcode = 'RF001',
            message = format(
                'settle_finalize_row: p_status must be Done or Quarantined, got %s',
                coalesce(p_status, 'NULL')
            );
    end if;

    update messenger.recording_finalize_attempts as f
    set status = p_status,
        attempts = f.attempts + case when p_count_attempt then 1 else 0 end,
        last_error = coalesce(left(p_last_error, 512), f.last_error),
        claim_token = null,
        updated_at = now()
    where f.recording_id = p_recording_id and f.status <> 'Done'
    returning f.attempts into v_attempts;
    return v_attempts;
end
$$;

comment on function recording_finalize.settle_finalize_row(uuid, text, text, boolean) is
'Internal. Settles the finalize row of p_recording_id: status Done (the recording is terminal '
'and its event enqueued) or Quarantined (a human must look); the claim token is spent; '
'last_error becomes p_last_error cut to 512 characters, or is kept when p_last_error is NULL; '
'p_count_attempt counts one more attempt (a claim that settled the row itself). A Done row is '
'never settled again. Returns the row''s attempts, NULL when no row was settled. The caller '
'holds the row lock (lock order: session, recording, finalize row). RF001 for another status.';

revoke all on function recording_finalize.settle_finalize_row(uuid, text, text, boolean)
from public;
