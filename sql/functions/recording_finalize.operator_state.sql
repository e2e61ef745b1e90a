-- What the cycle reads once per cycle: the pause switch and the quarantined rows by reason.

create or replace function recording_finalize.operator_state()
returns table (
    reconcile_paused boolean,
    relay_paused boolean,
    pauses jsonb,
    quarantined_by_reason jsonb
)
language sql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
    select
        exists (select from recording_finalize.pause as p where p.part = 'reconcile'),
        exists (select from recording_finalize.pause as p where p.part = 'relay'),
        coalesce(
            (select jsonb_agg(jsonb_build_object('part', p.part, 'pausedAt', p.paused_at,
                'pausedBy', p.paused_by, 'login', p.login_role, 'reason', p.reason)
                order by p.part)
                from recording_finalize.pause as p),
            '[]'
        ),
        -- Reads the quarantined rows' partial index only: finished rows cost nothing.
        coalesce(
            (select jsonb_object_agg(q.reason, q.n)
                from (
                    select f.quarantine_reason::text as reason, count(*) as n
                    from messenger.recording_finalize_attempts as f
                    where f.status = 'Quarantined'
                    group by 1
                ) as q),
            '{}'
        )
$$;

comment on function recording_finalize.operator_state() is
'The pause switch (reconcile_paused, relay_paused, and each pause with who, when and why) and '
'the quarantined rows counted by quarantine_reason: one read per cycle for every runner, and for '
'status. Read-only. Worker and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.operator_state() from public;
grant execute on function recording_finalize.operator_state()
to recording_finalize_worker, recording_finalize_operator;
