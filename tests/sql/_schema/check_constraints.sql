-- The CHECK constraints of SPEC §2, probed on real rows: each bad value is refused by the
-- named constraint, each valid value is accepted. Every probe is rolled back.
begin;
select plan(48);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as rec \gset
select tests.make_due_row(:'rec') as row_id \gset
select tests.make_session('Direct', null) as session \gset

create temp table probes (sql text, expected text, description text);
insert into probes values
    -- Available carries its file metadata (INV: Available => file_id, size, duration, format,
    -- available_at).
    ($$update messenger.call_recordings set status = 'Available'$$,
        'call_recordings_available_complete_ck', 'Available without any file metadata'),
    ($$update messenger.call_recordings set status = 'Available', size_bytes = 1,
        duration_seconds = 1, format = 'Ogg', available_at = now()$$,
        'call_recordings_available_complete_ck', 'Available without file_id'),
    ($$update messenger.call_recordings set status = 'Available', file_id = 'k',
        duration_seconds = 1, format = 'Ogg', available_at = now()$$,
        'call_recordings_available_complete_ck', 'Available without size_bytes'),
    ($$update messenger.call_recordings set status = 'Available', file_id = 'k', size_bytes = 1,
        format = 'Ogg', available_at = now()$$,
        'call_recordings_available_complete_ck', 'Available without duration_seconds'),
    ($$update messenger.call_recordings set status = 'Available', file_id = 'k', size_bytes = 1,
        duration_seconds = 1, available_at = now()$$,
        'call_recordings_available_complete_ck', 'Available without format'),
    ($$update messenger.call_recordings set status = 'Available', file_id = 'k', size_bytes = 1,
        duration_seconds = 1, format = 'Ogg'$$,
        'call_recordings_available_complete_ck', 'Available without available_at'),
    ($$update messenger.call_recordings set status = 'Available', file_id = 'k', size_bytes = 0,
        duration_seconds = 0, format = 'Ogg', available_at = now()$$,
        null, 'Available with all its metadata (zero size and duration are valid)'),
    -- Failed says why and when.
    ($$update messenger.call_recordings set status = 'Failed', failed_at = now()$$,
        'call_recordings_failed_complete_ck', 'Failed without failure_reason'),
    ($$update messenger.call_recordings set status = 'Failed', failure_reason = 'Timeout'$$,
        'call_recordings_failed_complete_ck', 'Failed without failed_at'),
    ($$update messenger.call_recordings set status = 'Failed', failure_reason = 'Timeout',
        failed_at = now()$$,
        null, 'Failed with reason and time'),
    -- file_id is a storage reference, never a URL.
    ($$update messenger.call_recordings set file_id = 'https://bucket.example.com/k'$$,
        'call_recordings_file_id_not_url_ck', 'an https URL as file_id'),
    ($$update messenger.call_recordings set file_id = 's3://bucket/k'$$,
        'call_recordings_file_id_not_url_ck', 'an s3:// URL as file_id'),
    -- '' breaks both file_id_not_blank and file_id_not_url; PostgreSQL reports the first by name.
    ($$update messenger.call_recordings set file_id = ''$$,
        'call_recordings_file_id_not_blank_ck', 'an empty file_id'),
    -- Migration 0005: the rules the functions alone checked are the table's now (one source).
    ($$update messenger.call_recordings set file_id = '   '$$,
        'call_recordings_file_id_not_blank_ck', 'a blank (spaces only) file_id'),
    ($$update messenger.call_recordings set file_id = repeat('k', 1025)$$,
        'call_recordings_file_id_length_ck', 'a file_id of 1025 characters'),
    ($$update messenger.call_recordings set file_id = repeat('k', 1024)$$,
        null, 'a file_id of 1024 characters'),
    ($$update messenger.call_recordings set file_id = 'recordings/2026/11/30/abc.webm'$$,
        null, 'a storage key as file_id'),
    -- Sizes and durations are never negative.
    ($$update messenger.call_recordings set size_bytes = -1$$,
        'call_recordings_size_bytes_ck', 'a negative size_bytes'),
    ($$update messenger.call_recordings set duration_seconds = -1$$,
        'call_recordings_duration_seconds_ck', 'a negative duration_seconds'),
    ($$update messenger.call_recordings set version = 0$$,
        'call_recordings_version_ck', 'version 0'),
    -- Enumerations: exact PascalCase values.
    ($$update messenger.call_recordings set status = 'Done'$$,
        'call_recordings_status_ck', 'status Done (a finalize status, not a recording status)'),
    ($$update messenger.call_recordings set status = 'uploading'$$,
        'call_recordings_status_ck', 'status in lowercase'),
    ($$update messenger.call_recordings set session_kind = 'Group'$$,
        'call_recordings_session_kind_ck', 'session_kind Group'),
    ($$update messenger.call_recordings set media_type = 'Screen'$$,
        'call_recordings_media_type_ck', 'media_type Screen'),
    ($$update messenger.call_recordings set trigger = 'Scheduled'$$,
        'call_recordings_trigger_ck', 'trigger Scheduled'),
    ($$update messenger.call_recordings set format = 'webm'$$,
        'call_recordings_format_ck', 'format in lowercase'),
    ($$update messenger.call_recordings set failure_reason = 'Crash'$$,
        'call_recordings_failure_reason_ck', 'failure_reason Crash'),
    ($$update messenger.recording_finalize_attempts set status = 'Failed'$$,
        'recording_finalize_attempts_status_ck', 'finalize status Failed'),
    ($$update messenger.recording_finalize_attempts set session_kind = 'direct'$$,
        'recording_finalize_attempts_session_kind_ck', 'finalize session_kind in lowercase'),
    ($$update messenger.recording_finalize_attempts set attempts = -1$$,
        'recording_finalize_attempts_attempts_ck', 'negative attempts'),
    ($$update messenger.recording_finalize_attempts set last_error = repeat('e', 513)$$,
        '22001', 'a last_error longer than 512 characters'),
    ($$insert into messenger.realtime_outbox (kind, session_kind, session_id, reference_id)
        values ('RecordingStarted', 'Direct', gen_random_uuid(), gen_random_uuid())$$,
        'realtime_outbox_kind_ck', 'realtime kind RecordingStarted'),
    ($$insert into messenger.realtime_outbox (kind, session_kind, session_id, reference_id)
        values ('RecordingFailed', 'Group', gen_random_uuid(), gen_random_uuid())$$,
        'realtime_outbox_session_kind_ck', 'realtime session_kind Group'),
    ($$update messenger.call_sessions set ended_at = started_at - interval '1 second'$$,
        'call_sessions_ended_after_start_ck', 'a call session ending before it starts');

select is(
    tests.violated_constraint(p.sql || case when p.sql like 'update messenger.call_recordings%'
        then format(' where id = %L', :'rec') else '' end),
    p.expected,
    case when p.expected is null then 'accepted: ' else 'refused: ' end || p.description
)
from probes as p;

-- Every value of every enumeration is accepted.
select is(
    tests.violated_constraint(format(
        $$update messenger.call_recordings set %I = %L where id = %L$$, col, val, :'rec'
    )),
    null,
    format('accepted: %s = %s', col, val)
)
from (values
    ('status', 'Pending'), ('status', 'Recording'), ('status', 'Uploading'),
    ('session_kind', 'Conference'), ('media_type', 'Audio'), ('media_type', 'Video'),
    ('trigger', 'Manual'), ('trigger', 'Auto'),
    ('format', 'Webm'), ('format', 'Mp4'), ('format', 'Ogg'), ('format', 'M4a'),
    ('failure_reason', 'RecorderError'), ('failure_reason', 'UploadFailed')
) as v(col, val);

select * from finish();
rollback;
