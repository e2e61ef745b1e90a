-- set_pause: the switch (reconcile, relay or all), its audit rows, what it returns and what the
-- cycle reads (operator_state); pausing again or resuming a running part is idempotent.
begin;
select plan(10);

select tests.clean_slate();
select results_eq(
    'select reconcile_paused, relay_paused from recording_finalize.operator_state()',
    'values (false, false)', 'nothing paused'
);
select results_eq(
    $$select part, paused, paused_by, reason, paused_at from recording_finalize.set_pause('all',
        true, ' ann ', ' Kafka migration ')$$,
    $$values ('reconcile', true, 'ann', 'Kafka migration', now()),
        ('relay', true, 'ann', 'Kafka migration', now())$$,
    'pause all: both parts paused, with who, why and when (trimmed)'
);
select results_eq(
    $$select part, paused, paused_by from recording_finalize.set_pause('relay', false, 'bob',
        'Kafka is back')$$,
    $$values ('reconcile', true, 'ann'), ('relay', false, null)$$,
    'resume relay: reconcile stays paused; both parts are returned'
);
select results_eq(
    'select part::text, paused_by, reason from recording_finalize.pause',
    $$values ('reconcile', 'ann', 'Kafka migration')$$,
    'the switch is one row per paused part'
);
select results_eq(
    $$select reconcile_paused, relay_paused, pauses -> 0 ->> 'pausedBy'
    from recording_finalize.operator_state()$$,
    $$values (true, false, 'ann')$$, 'operator_state reads the switch'
);
select results_eq(
    $$select part, paused from recording_finalize.set_pause('relay', false, 'bob', 'again')$$,
    $$values ('reconcile', true), ('relay', false)$$,
    'resuming a running part changes nothing'
);
select results_eq(
    $$select part, paused from recording_finalize.set_pause('reconcile', false, 'bob',
        'done')$$,
    $$values ('reconcile', false), ('relay', false)$$,
    'resume reconcile: all running again'
);
select results_eq(
    $$select action_kind::text, operator_name, reason, detail ->> 'part'
    from recording_finalize.operator_actions order by id$$,
    $$values ('pause', 'ann', 'Kafka migration', 'all'),
        ('resume', 'bob', 'Kafka is back', 'relay'),
        ('resume', 'bob', 'again', 'relay'),
        ('resume', 'bob', 'done', 'reconcile')$$,
    'each switch is audited, the no-op resume included'
);
select is(
    (select count(*) from recording_finalize.operator_actions where recording_id is not null),
    0::bigint,
    'audit rows of the switch name no recording'
);
select is_empty('select * from recording_finalize.pause', 'no pause row is left');

select * from finish();
rollback;
