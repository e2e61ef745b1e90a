-- The worker's own storage incident (source worker), decided from what its S3 checks saw: the one
-- place of the rule. The driver reports facts (did HeadBucket answer, how many HEADs came back
-- transient) as they come, while the cycle runs, and carries out the answer.
--
-- Why it matters: while the worker's incident is open a transient verdict costs no attempt
-- (outcome_decision: held_by_incident), and while it is open and for the upload grace after its
-- end no 404 fails a recording whose upload window it overlaps (deferred_by_incident). So it must
-- open within seconds of the storage going out, not at the end of a cycle that may last minutes.

create or replace function recording_finalize.storage_health(
    p_bucket_answered boolean default null,
    p_transient integer default null,
    p_checked integer default null,
    p_cycle_end boolean default false,
    p_error text default null
)
returns table (
    action text,
    incident_id bigint,
    kind text,
    started_at timestamptz,
    ended_at timestamptz,
    decided boolean,
    hold boolean
)
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    -- A window of HEADs is judged once it holds this many of one kind, transient or not: fewer
    -- transient answers than this are a few slow objects, not an outage.
    c_judge constant integer := 5;
    v_row recording_finalize.storage_incidents%rowtype;
    v_new recording_finalize.storage_incidents%rowtype;
    v_error text := nullif(recording_finalize_internal.mask_urls(p_error, 200), '');
    v_open_kind text;
    v_reason text;
    v_close_note text;
begin
    if p_cycle_end is null
        or (p_transient is null) <> (p_checked is null)
        or p_transient < 0 or p_transient > p_checked then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: storage_health: p_transient and p_checked must '
                'both be given (0 <= p_transient <= p_checked) or both NULL, p_cycle_end true or '
                'false; got %s, %s, %s', coalesce(p_transient::text, 'NULL'),
                coalesce(p_checked::text, 'NULL'), coalesce(p_cycle_end::text, 'NULL'));
    end if;

    -- The worker's open incident, locked: an operator may close it meanwhile.
    select i.* into v_row from recording_finalize.storage_incidents as i
    where i.source = 'worker' and i.ended_at is null
    for update;

    -- HeadBucket: unanswered opens the incident, or makes the open one the HeadBucket's (its next
    -- answer ends it); answered ends the one it opened. An incident without a kind (recorded by
    -- hand) is left to whoever recorded it.
    if p_bucket_answered is false and v_row.id is null then
        v_open_kind := 'unreachable';
        v_reason := 'the file storage cannot be reached (HeadBucket unanswered'
            || coalesce(': ' || v_error, '') || ')';
    elsif p_bucket_answered is false and v_row.kind = 'transient' then
        update recording_finalize.storage_incidents as i
        set kind = 'unreachable',
            reason = left(coalesce(i.reason || ' | ', '') || 'HeadBucket unanswered', 512),
            updated_at = now()
        where i.id = v_row.id
        returning * into v_row;
    elsif p_bucket_answered and v_row.kind = 'unreachable' then
        v_close_note := 'HeadBucket answers again';
    end if;

    -- The HEADs of a window (where one begins: see the comment on the function).
    decided := coalesce(p_checked > 0 and (p_transient >= c_judge
        or p_checked - p_transient >= c_judge or p_cycle_end), false);
    if decided and p_transient >= c_judge and p_transient * 2 >= p_checked then
        -- Failing: enough transient answers, and at least half of the window's.
        if v_row.id is null or v_close_note is not null then
            v_open_kind := 'transient';
            v_reason := format('%s of %s HEADs transient', p_transient, p_checked)
                || coalesce(' (' || v_error || ')', '');
        end if;
    elsif decided and p_transient * 2 < p_checked and v_row.kind = 'transient' then
        -- Healthy: fewer than half transient. A short window at the cycle's end with fewer than
        -- 5 transient HEADs but half of them or more changes nothing either way.
        v_close_note := format('HEADs healthy again (%s of %s transient)', p_transient,
            p_checked);
    end if;

    action := case when v_row.id is null then 'none' else 'kept' end;
    if v_close_note is not null then
        update recording_finalize.storage_incidents as i
        set ended_at = now(),
            closed_by = session_user,
            reason = left(coalesce(i.reason || ' | ', '') || 'closed: ' || v_close_note, 512),
            updated_at = now()
        where i.id = v_row.id
        returning * into v_row;
        action := 'closed';
    end if;
    if v_open_kind is not null then
        insert into recording_finalize.storage_incidents (source, kind, started_at, reason)
        values ('worker', v_open_kind, now(), left(v_reason, 512))
        on conflict (source) where ended_at is null do nothing
        returning * into v_new;
        if v_new.id is not null then
            action := 'opened';
        else
            -- Opened meanwhile by another session: that one stands.
            select i.* into v_new from recording_finalize.storage_incidents as i
            where i.source = 'worker' and i.ended_at is null;
            action := 'kept';
        end if;
        v_row := v_new;
    end if;

    -- Undecided transient answers with no incident open may be the first of an outage: none of
    -- the window's verdicts is applied before the window is judged.
    hold := not decided and coalesce(p_transient, 0) > 0
        and (v_row.id is null or v_row.ended_at is not null);
    incident_id := v_row.id;
    kind := v_row.kind;
    started_at := v_row.started_at;
    ended_at := v_row.ended_at;
    return next;
end
$$;

comment on function recording_finalize.storage_health(boolean, integer, integer, boolean, text) is
'The worker''s storage incident (source worker, recording_finalize.storage_incidents), decided '
'from the facts of its S3 checks as they come, so that it opens while the cycle runs. '
'p_bucket_answered: the cycle''s HeadBucket answered (true), went unanswered (false), or not '
'asked with this call (NULL). false opens an incident of kind unreachable, or turns an open one '
'of kind transient into kind unreachable; true closes one of kind unreachable. p_transient of '
'p_checked: the HEADs of the current window that came back transient, of all its HEADs. A window '
'begins with the first transient HEAD after the last decided one while no worker incident is '
'open (healthy HEADs before it belong to none: the driver need not report them), and with the '
'first HEAD while one is open; it is decided (decided true: the driver begins a new one) when '
'it holds 5 transient HEADs, or 5 others, or at the cycle''s end (p_cycle_end) with at least '
'one. A decided window with at least 5 transient HEADs and at least half transient opens an '
'incident of kind transient (or keeps the open one); one with fewer than half transient closes '
'an open one of kind transient (a short one at the cycle''s end, fewer than 5 transient but '
'half or more, changes nothing). hold true: the window is undecided, holds a transient HEAD and no '
'worker incident is open: the driver applies none of its verdicts until it is decided (they '
'may be the first of an outage: no attempt is used and no 404 believed while an incident is '
'open, outcome_decision). An incident without a kind (recorded by hand as source worker) is '
'neither re-kinded nor closed here. p_error (URLs masked) goes into the reason. Returns action '
'(opened, closed, kept: open before and after, none), the worker''s incident it opened, closed '
'or found open (NULL columns: none), decided and hold. RF001 for bad counts. Locks the open '
'incident row. Worker API (SECURITY DEFINER).';

revoke all on function recording_finalize.storage_health(boolean, integer, integer, boolean, text)
from public;
grant execute on function recording_finalize.storage_health(
    boolean, integer, integer, boolean, text
) to recording_finalize_worker;
