-- Derives the quarantine reason code of a finalize row from the last_error that quarantined it.

create or replace function messenger.recording_finalize_attempts_quarantine_reason()
returns trigger
language plpgsql
volatile
set search_path = ''
as $$
begin
    -- The functions that quarantine a row write last_error with a fixed class prefix:
    -- claim_due MaxAttemptsExceeded / RecordingNotFound / SessionNotFound, apply_outcome
    -- Transient (attempts exhausted) / InvalidMetadata / RecordingNotFound.
    -- crash_loop: exhausted while no apply_outcome recorded any outcome since the row was opened
    -- or last requeued (OLD.last_error is still empty, or still the quarantine message a requeue
    -- kept): every attempt was claimed and never answered - the worker died on this row.
    new.quarantine_reason := case
        when new.last_error like 'MaxAttemptsExceeded%'
            and (old.last_error is null or old.last_error !~ '^(Transient|ConfigError):')
            then 'crash_loop'
        when new.last_error like 'MaxAttemptsExceeded%' or new.last_error like 'Transient%'
            then 'max_attempts'
        when new.last_error like 'InvalidMetadata%' then 'invalid_metadata'
        when new.last_error like 'RecordingNotFound%' then 'recording_not_found'
        when new.last_error like 'SessionNotFound%' then 'session_not_found'
    end;
    return new;
end
$$;

comment on function messenger.recording_finalize_attempts_quarantine_reason() is
'BEFORE UPDATE trigger of messenger.recording_finalize_attempts, fired only when a row becomes '
'Quarantined: sets quarantine_reason from the last_error prefix the quarantining function wrote '
'- MaxAttemptsExceeded/Transient -> max_attempts, InvalidMetadata -> invalid_metadata, '
'RecordingNotFound -> recording_not_found, SessionNotFound -> session_not_found; '
'MaxAttemptsExceeded while no apply_outcome recorded an outcome since the row was opened or '
'requeued (old last_error empty or still a quarantine message) -> crash_loop; anything else '
'(an UPDATE by hand) -> null. Raises nothing.';

revoke all on function messenger.recording_finalize_attempts_quarantine_reason() from public;
