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
set search_path = ''
as $$
    select
        exists (select from messenger.recording_finalize_pause as p where p.part = 'reconcile'),
        exists (select from messenger.recording_finalize_pause as p where p.part = 'relay'),
        coalesce(
            (select jsonb_agg(jsonb_build_object('part', p.part, 'pausedAt', p.paused_at,
                'pausedBy', p.paused_by, 'reason', p.reason) order by p.part)
                from messenger.recording_finalize_pause as p),
            '[]'
        ),
        -- Reads the Quarantined prefix of ix_rfa_due only: finished rows cost nothing.
        coalesce(
            (select jsonb_object_agg(q.reason, q.n)
                from (
                    select coalesce(f.quarantine_reason::text, 'unknown') as reason,
                        count(*) as n
                    from messenger.recording_finalize_attempts as f
                    where f.status = 'Quarantined'
                    group by 1
                ) as q),
            '{}'
        )
$$;

comment on function recording_finalize.operator_state() is
'Read once per cycle by every runner: reconcile_paused / relay_paused (the pause switch), the '
'pauses with who and why, and the Quarantined rows counted by quarantine_reason (unknown for '
'a row quarantined by hand). Read-only. Worker and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.operator_state() from public;
grant execute on function recording_finalize.operator_state()
to recording_finalize_worker, recording_finalize_operator;
