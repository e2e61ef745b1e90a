-- The enumeration CHECKs migration 0015 rewrote, in the form migration 0001 (0010 for the
-- quarantine reason) created them: `column in (...)`, stored as an array cast element by
-- element. Same names, same rule; applied over a freshly migrated, empty database.

alter table messenger.call_recordings
    drop constraint call_recordings_session_kind_ck,
    add constraint call_recordings_session_kind_ck check (session_kind in ('Direct', 'Conference'));
alter table messenger.call_recordings
    drop constraint call_recordings_media_type_ck,
    add constraint call_recordings_media_type_ck check (media_type in ('Audio', 'Video'));
alter table messenger.call_recordings
    drop constraint call_recordings_trigger_ck,
    add constraint call_recordings_trigger_ck check (trigger in ('Manual', 'Auto'));
alter table messenger.call_recordings
    drop constraint call_recordings_status_ck,
    add constraint call_recordings_status_ck check (status in ('Pending', 'Recording', 'Uploading', 'Available', 'Failed'));
alter table messenger.call_recordings
    drop constraint call_recordings_format_ck,
    add constraint call_recordings_format_ck check (format in ('Webm', 'Mp4', 'Ogg', 'M4a'));
alter table messenger.call_recordings
    drop constraint call_recordings_failure_reason_ck,
    add constraint call_recordings_failure_reason_ck check (failure_reason in ('Timeout', 'RecorderError', 'UploadFailed'));
alter table messenger.recording_finalize_attempts
    drop constraint recording_finalize_attempts_session_kind_ck,
    add constraint recording_finalize_attempts_session_kind_ck check (session_kind in ('Direct', 'Conference'));
alter table messenger.recording_finalize_attempts
    drop constraint recording_finalize_attempts_status_ck,
    add constraint recording_finalize_attempts_status_ck check (status in ('Pending', 'Done', 'Quarantined'));
alter table messenger.realtime_outbox
    drop constraint realtime_outbox_kind_ck,
    add constraint realtime_outbox_kind_ck check (kind in ('RecordingAvailable', 'RecordingFailed'));
alter table messenger.realtime_outbox
    drop constraint realtime_outbox_session_kind_ck,
    add constraint realtime_outbox_session_kind_ck check (session_kind in ('Direct', 'Conference'));
alter table messenger.recording_finalize_attempts
    drop constraint recording_finalize_attempts_quarantine_reason_ck,
    add constraint recording_finalize_attempts_quarantine_reason_ck check (quarantine_reason in ('max_attempts', 'crash_loop', 'invalid_metadata', 'recording_not_found', 'session_not_found')) not valid;
