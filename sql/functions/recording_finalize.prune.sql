-- Retention: deletes one bounded batch of finished rows older than p_older_than per call.

create or replace function recording_finalize.prune(
    p_older_than interval,
    p_batch_size integer default 1000,
    p_dry_run boolean default false,
    p_topic text default 'pin.messenger.call-recording-available.v1'
)
returns table (outbox bigint, realtime bigint, finalize bigint)
language plpgsql
volatile
security definer
set search_path = ''
-- The deletes only take row locks they can get at once (SKIP LOCKED); a table lock that cannot
-- be had quickly ends this batch instead of queueing in front of the worker.
set lock_timeout = '2s'
as $$
#variable_conflict use_column
declare
    v_cutoff timestamptz;
begin
    if p_older_than is null or p_older_than < interval '1 minute' then
        raise exception using
            errcode = 'RF001',
            message = format('prune: p_older_than must be at least 1 minute, got %s',
                p_older_than);
    end if;
    if p_batch_size is null or p_batch_size not between 1 and 10000 then
        raise exception using
            errcode = 'RF001',
            message = format('prune: p_batch_size must be 1..10000, got %s', p_batch_size);
    end if;
    v_cutoff := now() - p_older_than;

    if p_dry_run then
        return query select
            (select count(*) from messenger.integration_outbox as o
                where o.topic = p_topic and o.published_at < v_cutoff),
            (select count(*) from messenger.realtime_outbox as t
                where t.dispatched_at < v_cutoff),
            (select count(*) from messenger.recording_finalize_attempts as f
                where f.status = 'Done' and f.next_attempt_at < v_cutoff
                    and f.updated_at < v_cutoff
                    and exists (select from messenger.call_recordings as r
                        where r.id = f.recording_id and r.status in ('Available', 'Failed')));
        return;
    end if;

    -- Published rows of our topic; the statement trigger keeps a marker of each
    -- (messenger.integration_outbox_pruned), so "enqueue once" outlives the row.
    with gone as (
        delete from messenger.integration_outbox as o
        where o.id in (
            select x.id from messenger.integration_outbox as x
            where x.topic = p_topic and x.published_at < v_cutoff
            order by x.id
            limit p_batch_size
            for update skip locked
        )
        returning 1
    )
    select count(*) into outbox from gone;

    with gone as (
        delete from messenger.realtime_outbox as t
        where t.id in (
            select x.id from messenger.realtime_outbox as x
            where x.dispatched_at < v_cutoff
            order by x.id
            limit p_batch_size
            for update skip locked
        )
        returning 1
    )
    select count(*) into realtime from gone;

    -- Done rows of terminal recordings only (a Done row of a non-terminal recording is an audit
    -- finding, kept for the human). The status prefix of ix_rfa_due finds them.
    with gone as (
        delete from messenger.recording_finalize_attempts as f
        where f.id in (
            select x.id from messenger.recording_finalize_attempts as x
            where x.status = 'Done' and x.next_attempt_at < v_cutoff
                and x.updated_at < v_cutoff
                and exists (select from messenger.call_recordings as r
                    where r.id = x.recording_id and r.status in ('Available', 'Failed'))
            order by x.next_attempt_at
            limit p_batch_size
            for update skip locked
        )
        returning 1
    )
    select count(*) into finalize from gone;
    return next;
end
$$;

comment on function recording_finalize.prune(interval, integer, boolean, text) is
'Retention, one batch per call (the driver calls it until every count is below p_batch_size, '
'each call its own transaction): deletes up to p_batch_size (1..10000) each of published '
'integration-outbox rows of p_topic published before now() - p_older_than (>= 1 minute), '
'dispatched realtime rows dispatched before it, and Done finalize rows of terminal recordings '
'last updated (and due) before it. FOR UPDATE SKIP LOCKED and lock_timeout 2s: never waits on '
'the worker or the ingest callback. A deleted published event leaves a marker in '
'messenger.integration_outbox_pruned (trigger), so enqueue_available never sends it again. '
'p_dry_run: counts what would go, deletes nothing. RF001 for bad arguments. Worker and '
'operator API (SECURITY DEFINER).';

revoke all on function recording_finalize.prune(interval, integer, boolean, text) from public;
grant execute on function recording_finalize.prune(interval, integer, boolean, text)
to recording_finalize_worker, recording_finalize_operator;
