-- The optional lifecycle functions: recording_started inserts a recording, session_ended sets a
-- session's end (UPDATE also lets recording_started hold the session FOR SHARE).
grant insert (id, session_kind, session_id, media_type, trigger, status, started_at)
on messenger.call_recordings to {{ role }};
grant select (created_at, updated_at, failed_at)
on messenger.call_recordings to {{ role }};
grant update (ended_at)
on messenger.call_sessions to {{ role }};
grant update (ended_at)
on messenger.conference_sessions to {{ role }};
