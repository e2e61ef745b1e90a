-- The indexes the design card names, and the uniqueness they enforce.
begin;
select plan(14);

select has_index(
    'messenger', 'recording_finalize_attempts', 'ux_rfa_recording', array['recording_id'],
    'ux_rfa_recording indexes recording_id'
);
select index_is_unique(
    'messenger', 'recording_finalize_attempts', 'ux_rfa_recording',
    'ux_rfa_recording is unique: one finalize row per recording'
);
select has_index(
    'messenger', 'recording_finalize_attempts', 'ix_rfa_due', array['status', 'next_attempt_at'],
    'ix_rfa_due indexes (status, next_attempt_at)'
);
select has_index(
    'messenger', 'call_recordings', 'ix_recording_active', array['session_kind', 'session_id'],
    'ix_recording_active indexes (session_kind, session_id)'
);
select index_is_unique(
    'messenger', 'call_recordings', 'ix_recording_active', 'ix_recording_active is unique'
);
select col_is_unique(
    'messenger', 'integration_outbox', array['topic', 'dedupe_key'],
    'the integration outbox is unique on (topic, dedupe_key)'
);

-- Behaviour.
select tests.clean_slate();
select tests.make_session('Direct', null) as session \gset
select tests.make_recording('Direct', :'session', 'Recording') as active \gset
select tests.make_due_row(:'active') as row_id \gset

select is(
    tests.violated_constraint(format(
        $$insert into messenger.call_recordings (id, session_kind, session_id, media_type,
            trigger, status)
        values (gen_random_uuid(), 'Direct', %L, 'Audio', 'Manual', %L)$$, :'session', s
    )),
    'ix_recording_active',
    format('a second non-terminal (%s) recording in the session is refused', s)
)
from unnest(array['Pending', 'Uploading']) as s;
select is(
    tests.violated_constraint(format(
        $$insert into messenger.call_recordings (id, session_kind, session_id, media_type,
            trigger, status, failure_reason, failed_at)
        values (gen_random_uuid(), 'Direct', %L, 'Audio', 'Manual', 'Failed', 'Timeout',
            now())$$,
        :'session'
    )),
    null,
    'a terminal recording may sit beside the active one (the index is partial)'
);
select is(
    tests.violated_constraint(format(
        $$insert into messenger.call_recordings (id, session_kind, session_id, media_type,
            trigger, status)
        values (gen_random_uuid(), 'Conference', %L, 'Audio', 'Manual', 'Recording')$$,
        :'session'
    )),
    null,
    'the same id under the other session kind is another session'
);
select is(
    tests.violated_constraint(format(
        $$insert into messenger.recording_finalize_attempts (recording_id, session_kind,
            session_id, next_attempt_at)
        values (%L, 'Direct', %L, now())$$,
        :'active', :'session'
    )),
    'ux_rfa_recording',
    'a second finalize row for the same recording is refused'
);
insert into messenger.integration_outbox (topic, message_key, event_type, dedupe_key, payload)
values ('t', 'k', 'e', 'rec-1', '{}');
select is(
    tests.violated_constraint($$insert into messenger.integration_outbox (topic, message_key,
        event_type, dedupe_key, payload) values ('t', 'k2', 'e', 'rec-1', '{"x": 1}')$$),
    'integration_outbox_topic_dedupe_uq',
    'the same event twice on a topic is refused'
);
select is(
    tests.violated_constraint($$insert into messenger.integration_outbox (topic, message_key,
        event_type, dedupe_key, payload) values ('t2', 'k', 'e', 'rec-1', '{}')$$),
    null,
    'the same dedupe key on another topic is accepted'
);
select is(
    tests.violated_constraint($$insert into messenger.realtime_outbox (kind, session_kind,
        session_id, reference_id)
        select kind, session_kind, session_id, reference_id from messenger.realtime_outbox
        union all select 'RecordingFailed', 'Direct', gen_random_uuid(),
            '00000000-0000-4000-8000-000000000001'
        union all select 'RecordingFailed', 'Direct', gen_random_uuid(),
            '00000000-0000-4000-8000-000000000001'$$),
    'realtime_outbox_recording_state_uq',
    'a recording''s state push is written once per kind'
);

select * from finish();
rollback;
