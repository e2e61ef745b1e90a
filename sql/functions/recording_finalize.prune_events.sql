-- Retention of the product's own outbox: one bounded batch of published events per call.

create or replace function recording_finalize.prune_events(
    p_older_than interval,
    p_batch_size integer default 1000,
    p_dry_run boolean default false
)
returns bigint
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
-- The delete takes only row locks it can get at once (SKIP LOCKED); nothing here waits.
set lock_timeout = '100ms'
as $$
declare
    v_cutoff timestamptz;
    v_deleted bigint;
begin
    perform recording_finalize_internal.check_retention(p_older_than);
    if p_batch_size is null or p_batch_size not between 1 and 10000 or p_dry_run is null then
        raise exception using
            errcode = 'RF001',
            message = format('invalid_parameter: prune_events: p_batch_size must be 1..10000 '
                'and p_dry_run set, got %s and %s', p_batch_size, p_dry_run);
    end if;
    -- An event is the product's proof that a recording has one: republish discovery looks back
    -- at most 30 days from an SLA ago, so no event younger than that goes, whatever the caller
    -- asks (else a recording of the window would get a second one).
    select least(now() - p_older_than, now() - interval '30 days' - s.sla_timeout_max)
    into v_cutoff
    from recording_finalize.settings as s;
    if p_dry_run then
        return (select count(*) from recording_finalize.outbox as o
            where o.published_at < v_cutoff);
    end if;
    -- Published before the cutoff, oldest first (outbox_published_idx). An unpublished event is
    -- never pruned, however old: it is still owed to Kafka.
    with gone as (
        delete from recording_finalize.outbox as o
        where o.id in (
            select x.id from recording_finalize.outbox as x
            where x.published_at < v_cutoff
            order by x.published_at
            limit p_batch_size
            for update skip locked
        )
        returning 1
    )
    select count(*) into v_deleted from gone;
    return v_deleted;
end
$$;

comment on function recording_finalize.prune_events(interval, integer, boolean) is
'Retention of the product''s own outbox (recording_finalize.outbox): deletes up to p_batch_size '
'(1..10000) events published more than p_older_than ago (at least settings.retention_min: '
'check_retention) and more than 30 days + settings.sla_timeout_max ago (republish '
'discovery''s longest look back: an event it could still need is kept), oldest first, and '
'returns how many; p_dry_run counts them all and deletes '
'nothing. Unpublished events are never deleted. A row another transaction holds is skipped. '
'RF001/RF010 for bad arguments. Worker and operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.prune_events(interval, integer, boolean) from public;
grant execute on function recording_finalize.prune_events(interval, integer, boolean)
to recording_finalize_worker, recording_finalize_operator;
