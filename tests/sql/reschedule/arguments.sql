-- reschedule's arguments (RF001): an operator (1..128 characters) and a reason (1..512) are
-- required, 1..1000 ids with no NULL among them, a known p_from_status and p_strict set. Checked
-- before any row is touched; the bound itself (1000 ids) is accepted.
begin;
select plan(16);

select tests.clean_slate();
select tests.make_stuck(p_attempts => 8) as rec \gset
update messenger.recording_finalize_attempts
set status = 'Quarantined', quarantine_reason = 'max_attempts' where recording_id = :'rec';
create temp table before as select tests.snapshot() as fingerprint;

create temp table bad_calls (args text, description text);
insert into bad_calls values
    ($$array[%L]::uuid[], 'Quarantined', null, 'why'$$, 'a missing operator'),
    ($$array[%L]::uuid[], 'Quarantined', '   ', 'why'$$, 'a blank operator'),
    ($$array[%L]::uuid[], 'Quarantined', repeat('o', 129), 'why'$$,
        'an operator of 129 characters'),
    ($$array[%L]::uuid[], 'Quarantined', 'ann', null$$, 'a missing reason'),
    ($$array[%L]::uuid[], 'Quarantined', 'ann', ' '$$, 'a blank reason'),
    ($$array[%L]::uuid[], 'Quarantined', 'ann', repeat('r', 513)$$,
        'a reason of 513 characters'),
    ($$array[%L]::uuid[], 'Done', 'ann', 'why'$$, 'p_from_status Done'),
    ($$array[%L]::uuid[], null, 'ann', 'why'$$, 'a missing p_from_status'),
    ($$array[%L]::uuid[], 'Quarantined', 'ann', 'why', null$$, 'a missing p_strict'),
    ($$array[%L, null]::uuid[], 'Quarantined', 'ann', 'why'$$, 'a NULL among the ids'),
    ($$array[null, %L]::uuid[], 'Quarantined', 'ann', 'why', false$$,
        'a NULL among the ids, not strict'),
    ($$array[]::uuid[] || %L::uuid || (select array_agg(gen_random_uuid())
        from generate_series(1, 1000)), 'Quarantined', 'ann', 'why', false$$,
        '1001 ids'),
    ($$array[]::uuid[], 'Quarantined', 'ann', coalesce(%L, 'why')$$, 'no id'),
    ($$null::uuid[], 'Quarantined', 'ann', coalesce(%L, 'why')$$, 'a NULL array');

select throws_ok(
    format('select * from recording_finalize.reschedule(' || b.args || ')', :'rec'),
    'RF001', null, 'refused: ' || b.description
)
from bad_calls as b;

select is(tests.snapshot(), (select fingerprint from before),
    'nothing was changed or audited by the refused calls');
select is(
    (select count(*) from recording_finalize.reschedule(
        array[:'rec']::uuid[] || (select array_agg(gen_random_uuid())
            from generate_series(1, 999)),
        'Quarantined', ' ann ', ' why ', false)),
    1::bigint,
    '1000 ids are accepted (the one with a row is requeued)'
);

select * from finish();
rollback;
