-- The adapter's ports, declared once: the views and functions of schema
-- recording_finalize_adapter through which the product reaches the service's data, with the
-- columns or arguments the product uses of each. The reference adapter (sql/adapter/reference.sql)
-- and the driver's copy (driver/adapter.py, which migrate's contract check needs before this
-- file is applied) are compared with it by tests/py/test_vocabulary.py.

create or replace function recording_finalize_internal.adapter_ports()
returns table (
    port text,
    kind text,
    names text[],
    types text[],
    result_type text,
    optional boolean,
    meaning text
)
language sql
immutable
set search_path = pg_catalog, pg_temp
as $$
    values
        ('recordings', 'view',
            array['id', 'session_kind', 'session_id', 'status', 'file_id', 'size_bytes',
                'duration_seconds', 'format', 'failure_reason', 'media_type', 'trigger',
                'started_at', 'ended_at', 'available_at'],
            array['uuid', 'text', 'uuid', 'text', 'text', 'bigint', 'integer', 'text', 'text',
                'text', 'text', 'timestamp with time zone', 'timestamp with time zone',
                'timestamp with time zone'],
            null::text, false,
            'the recordings the product may see and lock (FOR NO KEY UPDATE SKIP LOCKED through '
            || 'the view); one left out is never transitioned or published'),
        ('sessions', 'view',
            array['kind', 'id', 'chat_id', 'deal_id', 'tenant_id', 'started_at', 'ended_at'],
            array['text', 'uuid', 'uuid', 'uuid', 'uuid', 'timestamp with time zone',
                'timestamp with time zone'],
            null, false,
            'the session owners (kind Direct or Conference); "ended" means ended_at is set'),
        ('service_events', 'view',
            array['recording_id', 'enqueued_at', 'published_at'],
            array['uuid', 'timestamp with time zone', 'timestamp with time zone'],
            null, false,
            'the service''s own call-recording-available events, in any state: a recording '
            || 'listed here gets no event from the product'),
        ('make_available', 'function',
            array['p_id', 'p_from_status', 'p_file_id', 'p_size_bytes', 'p_duration_seconds',
                'p_format', 'p_available_at'],
            array['uuid', 'text', 'text', 'bigint', 'integer', 'text',
                'timestamp with time zone'],
            'boolean', false,
            'the status-guarded move to Available with the file metadata; false when the '
            || 'recording is no longer in p_from_status (or not visible)'),
        ('make_failed', 'function',
            array['p_id', 'p_from_status', 'p_failure_reason', 'p_failed_at'],
            array['uuid', 'text', 'text', 'timestamp with time zone'],
            'boolean', false,
            'the status-guarded move to Failed; false as for make_available'),
        ('enqueue_realtime', 'function',
            array['p_kind', 'p_session_kind', 'p_session_id', 'p_reference_id', 'p_payload'],
            array['text', 'text', 'uuid', 'uuid', 'jsonb'],
            'void', false,
            'the service''s persist-then-push row (RecordingAvailable or RecordingFailed), '
            || 'written in the same transaction as the move'),
        -- The lifecycle ports: only the optional service-facing lifecycle functions
        -- (recording_started, recording_stopped, session_ended) call them; the worker never does.
        ('start_recording', 'function',
            array['p_id', 'p_session_kind', 'p_session_id', 'p_media_type', 'p_trigger',
                'p_started_at'],
            array['uuid', 'text', 'uuid', 'text', 'text', 'timestamp with time zone'],
            'void', true,
            'a new recording, Recording since p_started_at (recording_started)'),
        ('hold_session', 'function',
            array['p_kind', 'p_id'],
            array['text', 'uuid'],
            'void', true,
            'the session FOR SHARE, so that a concurrent end of it waits (recording_started)'),
        ('end_session', 'function',
            array['p_kind', 'p_id', 'p_at'],
            array['text', 'uuid', 'timestamp with time zone'],
            'timestamp with time zone', true,
            'the session ends at p_at unless it ended already; its end, NULL when there is no '
            || 'such session (session_ended)'),
        ('make_uploading', 'function',
            array['p_id', 'p_from_status', 'p_ended_at'],
            array['uuid', 'text', 'timestamp with time zone'],
            'boolean', true,
            'the status-guarded move to Uploading when the recording stopped '
            || '(recording_stopped, session_ended)')
$$;

comment on function recording_finalize_internal.adapter_ports() is
'Internal, pure. The ports of schema recording_finalize_adapter, one row each: port (the '
'object''s name), kind (view or function), names and types (a view''s columns, or a function''s '
'arguments in order, types as format_type writes them), result_type (a function''s result; '
'NULL for a view), optional (true: only the optional lifecycle functions use it and an adapter '
'may leave it out) and meaning. Extra columns and arguments in an adapter are allowed; these '
'keep their meaning.';

revoke all on function recording_finalize_internal.adapter_ports() from public;
