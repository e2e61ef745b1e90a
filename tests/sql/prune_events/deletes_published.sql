-- prune_events: deletes the product's published events older than the cutoff, oldest first, in
-- batches; never an unpublished one; a dry run counts and deletes nothing; RF001/RF010 for bad
-- arguments.
begin;
select plan(7);

select tests.clean_slate();
insert into recording_finalize.outbox (recording_id, topic, message_key, headers, payload,
    created_at, published_at)
select gen_random_uuid(), 't', 'k', '{}', '{}', now() - interval '60 days',
    case when i <= 3 then now() - interval '50 days' - i * interval '1 day'
        when i = 4 then now() - interval '1 day' end
from generate_series(1, 5) as i;
-- 1, 2, 3: published 51..53 days ago; 4: yesterday; 5: never published.

select is(recording_finalize.prune_events('30 days', 1000, true), 3::bigint,
    'the dry run counts the three published before the cutoff');
select is((select count(*) from recording_finalize.outbox), 5::bigint, 'and deletes nothing');
select is(recording_finalize.prune_events('30 days', 2, false), 2::bigint,
    'a batch deletes at most p_batch_size');
select is(recording_finalize.prune_events('30 days', 2, false), 1::bigint, 'then the rest');
select set_eq($$select published_at is null from recording_finalize.outbox$$,
    $$values (false), (true)$$,
    'yesterday''s event and the unpublished one stay');
select throws_ok($$select recording_finalize.prune_events('30 days', 0, false)$$, 'RF001', null,
    'a batch of 0');
select throws_ok($$select recording_finalize.prune_events('10 seconds', 10, false)$$, 'RF001',
    null, 'under a minute');

select * from finish();
rollback;
