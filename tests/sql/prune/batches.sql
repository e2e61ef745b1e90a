-- prune works in bounded batches, oldest first: p_batch_size caps each kind per call, and the
-- driver calls it until every count is below the batch size.
begin;
select plan(5);

select tests.clean_slate();
create temp table recs as
select n, tests.make_recording('Direct', tests.make_session(), 'Available') as id
from generate_series(1, 5) as n;
select count(tests.make_due_row(id, 1, now(), 'Done')) as rows from recs \gset
-- Row n settled (40 + n) days ago: row 5 is the oldest.
update messenger.recording_finalize_attempts as f
set updated_at = now() - make_interval(days => 40 + r.n)
from recs as r where r.id = f.recording_id;
insert into recording_finalize.storage_incidents (source, started_at, ended_at)
select 'ops', now() - make_interval(days => 50 + n), now() - make_interval(days => 49 + n)
from generate_series(1, 3) as n;
insert into recording_finalize.relay_leases (outbox_id, lease_token, leased_until)
select n, gen_random_uuid(), now() - interval '1 hour' from generate_series(1, 3) as n;

select results_eq(
    $$select * from recording_finalize.prune('30 days', 2)$$,
    'values (2::bigint, 2::bigint, 2::bigint)',
    'p_batch_size 2: two of each kind'
);
select set_eq(
    'select recording_id from messenger.recording_finalize_attempts',
    'select id from recs where n <= 3',
    'the two oldest finalize rows went first'
);
select results_eq(
    $$select * from recording_finalize.prune('30 days', 2)$$,
    'values (2::bigint, 1::bigint, 1::bigint)',
    'the next batch takes what is left, up to 2'
);
select results_eq(
    $$select * from recording_finalize.prune('30 days', 2)$$,
    'values (1::bigint, 0::bigint, 0::bigint)',
    'then the last one'
);
select results_eq(
    $$select * from recording_finalize.prune('30 days', 2)$$,
    'values (0::bigint, 0::bigint, 0::bigint)',
    'then nothing: every count below the batch size ends the loop'
);

select * from finish();
rollback;
