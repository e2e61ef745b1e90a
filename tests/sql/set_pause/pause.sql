-- set_pause / operator_state: the switch, its audit rows and what the cycle reads.
begin;
select plan(7);

delete from messenger.recording_finalize_pause;
delete from messenger.recording_finalize_operator_actions;
select results_eq(
    'select reconcile_paused, relay_paused from recording_finalize.operator_state()',
    'values (false, false)', 'nothing paused'
);
select results_eq(
    $$select part, paused, paused_by, reason from recording_finalize.set_pause('all', true, 'ann',
        'Kafka migration')$$,
    $$values ('reconcile', true, 'ann', 'Kafka migration'), ('relay', true, 'ann',
        'Kafka migration')$$,
    'pause all: both parts paused, with who and why'
);
select results_eq(
    $$select part, paused from recording_finalize.set_pause('relay', false, 'bob')$$,
    $$values ('reconcile', true), ('relay', false)$$,
    'resume relay: reconcile stays paused'
);
select results_eq(
    $$select reconcile_paused, relay_paused, pauses -> 0 ->> 'pausedBy'
    from recording_finalize.operator_state()$$,
    $$values (true, false, 'ann')$$, 'operator_state reads the switch'
);
select results_eq(
    $$select action_kind, operator_name, reason from messenger.recording_finalize_operator_actions
    order by id$$,
    $$values ('pause'::varchar, 'ann', 'Kafka migration'),
        ('resume'::varchar, 'bob', '(no reason given)')$$,
    'each switch is audited'
);
select throws_ok($$select * from recording_finalize.set_pause('claim', true, 'ann')$$, 'RF001',
    null, 'an unknown part is refused');
select throws_ok($$select * from recording_finalize.set_pause('all', true, '')$$, 'RF001',
    null, 'an operator is required');

select * from finish();
rollback;
