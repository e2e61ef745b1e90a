-- prune works on the server's topic only and never below the server's retention floor: a worker
-- or operator login cannot delete another service's published events (DBA review finding 1),
-- and it deletes our markers older than settings.marker_retention, nobody else's (finding 9).
begin;
select plan(9);

select tests.clean_slate();
delete from messenger.integration_outbox_pruned;
-- Another service's published events, two hours old, in the shared outbox.
insert into messenger.integration_outbox (
    topic, message_key, event_type, dedupe_key, payload, published_at
)
values ('billing.invoice-issued.v1', 'k', 'invoice-issued', 'inv-1', '{}',
        now() - interval '40 days'),
       ('billing.invoice-issued.v1', 'k', 'invoice-issued', 'inv-2', '{}',
        now() - interval '40 days');

select throws_ok(
    $$select * from recording_finalize.prune('30 days', p_topic => 'billing.invoice-issued.v1')$$,
    'RF009', null, 'another topic is refused'
);
select throws_ok(
    $$select * from recording_finalize.prune('30 days', p_dry_run => true,
        p_topic => 'billing.invoice-issued.v1')$$,
    'RF009', null, 'also in a dry run'
);
select results_eq(
    $$select * from recording_finalize.prune('30 days')$$,
    'values (0::bigint, 0::bigint, 0::bigint)', 'the default (NULL) is the server''s topic'
);
select is(
    (select count(*) from messenger.integration_outbox where topic = 'billing.invoice-issued.v1'),
    2::bigint, 'the other service''s events are untouched'
);

-- The retention floor: 1 day by default; the owner may lower it (not below 1 minute).
select throws_ok($$select * from recording_finalize.prune('2 hours')$$, 'RF010', null,
    'fresher than settings.retention_min is refused');
update recording_finalize.settings set retention_min = '1 hour';
select lives_ok($$select * from recording_finalize.prune('2 hours')$$,
    'allowed once the owner lowers retention_min');

-- Markers: ours older than marker_retention go, others' and young ones stay.
insert into messenger.integration_outbox_pruned (topic, dedupe_key, published_at, pruned_at)
select s.topic, 'old-marker', now() - interval '100 days', now() - interval '91 days'
from recording_finalize.settings as s
union all
select s.topic, 'young-marker', now() - interval '10 days', now() - interval '9 days'
from recording_finalize.settings as s
union all
select 'billing.invoice-issued.v1', 'inv-0', now() - interval '100 days', now() - interval '91 days';
select lives_ok($$select * from recording_finalize.prune('30 days')$$, 'prune runs');
select is(
    (select array_agg(dedupe_key order by dedupe_key) from messenger.integration_outbox_pruned),
    array['inv-0', 'young-marker'], 'our marker past marker_retention went, the rest stayed'
);
-- The trigger marks only our topic: deleting another service's published rows leaves nothing.
delete from messenger.integration_outbox where topic = 'billing.invoice-issued.v1';
select is(
    (select count(*) from messenger.integration_outbox_pruned
        where topic = 'billing.invoice-issued.v1' and dedupe_key like 'inv-_' and dedupe_key <> 'inv-0'),
    0::bigint, 'another topic''s deleted rows leave no marker'
);

select * from finish();
rollback;
