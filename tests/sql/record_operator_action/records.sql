-- record_operator_action (internal): one audit row per recording (one row naming no recording
-- for an action on the whole worker), the name and reason trimmed, the detail kept (an empty
-- object when NULL), the real login and the time; returns how many rows it wrote.
begin;
select plan(5);

select tests.clean_slate();
select gen_random_uuid() as a, gen_random_uuid() as b \gset

select is(
    recording_finalize_internal.record_operator_action(array[:'a', :'b']::uuid[], 'requeue',
        ' ann ', ' outage over ', '{"bulk": true}'),
    2, 'two recordings, two rows'
);
select set_eq(
    $$select recording_id, action_kind::text, operator_name, reason, detail, login_role,
        created_at
    from recording_finalize.operator_actions$$,
    format($$values (%L::uuid, 'requeue', 'ann', 'outage over', '{"bulk": true}'::jsonb,
            session_user::text, now()),
        (%L::uuid, 'requeue', 'ann', 'outage over', '{"bulk": true}'::jsonb,
            session_user::text, now())$$, :'a', :'b'),
    'each names the recording, the trimmed name and reason, the detail, the login, the time'
);
delete from recording_finalize.operator_actions;
select is(
    recording_finalize_internal.record_operator_action(null, 'pause', 'bob', 'why', null), 1,
    'an action on the whole worker is one row'
);
select results_eq(
    'select recording_id, detail from recording_finalize.operator_actions',
    $$values (null::uuid, '{}'::jsonb)$$,
    'naming no recording, with an empty detail for NULL'
);
select throws_ok(
    $$select recording_finalize_internal.record_operator_action(null, 'delete', 'bob', 'why')$$,
    '23514', null, 'an unknown action kind is refused by the table''s CHECK'
);

select * from finish();
rollback;
