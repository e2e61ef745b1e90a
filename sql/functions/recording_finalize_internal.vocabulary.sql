-- The state machine's words, declared once. Every other copy of them - the CHECKs of the finalize
-- table, the deciders (claim_decision, outcome_decision), apply_outcome and preview_outcomes, the
-- driver's constants and counting tables (driver/model.py, driver/cycle.py, driver/metrics.py,
-- driver/ops/) - is compared with this list by tests/py/test_vocabulary.py: a word added or
-- dropped in one place and not here fails that test, and the cycle stops on a word it does not
-- know instead of leaving a row uncounted.

create or replace function recording_finalize_internal.vocabulary()
returns table (kind text, word text, meaning text)
language sql
immutable
set search_path = pg_catalog, pg_temp
as $$
    values
        -- What the file-storage check says of one recording's object (apply_outcome's
        -- p_outcome, the finalize row's last_outcome).
        ('verdict', 'found', 'the object is there; its metadata comes with it'),
        ('verdict', 'missing', 'the storage answered 404 for the object'),
        ('verdict', 'transient', 'no answer that counts: a timeout, a connection error, a 5xx, '
            || 'throttling'),
        ('verdict', 'invalid_metadata', 'the object is there but its metadata is unusable'),
        ('verdict', 'config_error', 'the storage refuses the deployment (bucket, credentials, '
            || 'key): not the recording''s fault'),
        -- What apply_outcome did with a verdict (outcome_decision decides the first seven;
        -- stale, terminal and busy are the no-ops of a race, apply_outcome's own).
        ('apply_result', 'reconciled', 'recording Available, its event and realtime row '
            || 'written, finalize row Done'),
        ('apply_result', 'failed', 'recording Failed (Timeout), realtime row written, finalize '
            || 'row Done'),
        ('apply_result', 'deferred_by_incident', 'a 404 while a storage incident makes it '
            || 'untrustworthy: attempt given back, due after the incident and the upload grace'),
        ('apply_result', 'backoff', 'a transient answer: the backoff set at claim stands'),
        ('apply_result', 'held_by_incident', 'a transient answer while the worker''s own storage '
            || 'incident is open: attempt given back'),
        ('apply_result', 'quarantined', 'finalize row Quarantined with a quarantine reason: a '
            || 'person looks'),
        ('apply_result', 'config_error_released', 'a configuration error: attempt given back, '
            || 'due now'),
        ('apply_result', 'stale', 'the claim token no longer matches (another runner re-claimed '
            || 'or settled the row): nothing written'),
        ('apply_result', 'terminal', 'the recording was already Available or Failed: never '
            || 'rewritten, finalize row Done (an Available one gets its event if it has none)'),
        ('apply_result', 'busy', 'another transaction held the recording or its event key: '
            || 'attempt given back, due after the backoff base'),
        -- What claim_due did with a due finalize row (claim_decision decides the first five;
        -- busy is claim_due's own, for a republish whose event a service transaction writes).
        ('claim_action', 'reconcile', 'handed to the driver with a claim token: check the file '
            || 'storage, then apply_outcome'),
        ('claim_action', 'republished', 'the recording is Available without its event: the '
            || 'event is enqueued and the row Done'),
        ('claim_action', 'closed', 'the recording is Failed, or Available with its event (or '
            || 'without one while republishing is off or held: the service''s to publish): row '
            || 'Done'),
        ('claim_action', 'deferred_by_sla', 'the session has not ended, or ended less than the '
            || 'SLA ago: re-timed, no attempt counted'),
        ('claim_action', 'quarantined', 'no recording, no session, or attempts exhausted: row '
            || 'Quarantined'),
        ('claim_action', 'busy', 'a republish whose event a service transaction is writing: '
            || 'left Pending for the backoff base'),
        -- Why a finalize row is Quarantined (its quarantine_reason).
        ('quarantine_reason', 'max_attempts', 'the storage kept answering transient until the '
            || 'attempts ran out'),
        ('quarantine_reason', 'crash_loop', 'the attempts ran out with no verdict ever '
            || 'recorded: every claim went unanswered (the worker died or apply_outcome failed)'),
        ('quarantine_reason', 'invalid_metadata', 'the binary is there but its metadata is '
            || 'unusable, or the service''s table refuses it'),
        ('quarantine_reason', 'recording_not_found', 'the recordings port shows no such '
            || 'recording'),
        ('quarantine_reason', 'session_not_found', 'the sessions port shows no session for the '
            || 'recording'),
        -- The finalize row's own states (messenger.recording_finalize_attempts.status).
        ('finalize_status', 'Pending', 'scheduled: claimed when next_attempt_at has come'),
        ('finalize_status', 'Done', 'settled: the recording is terminal and, if Available, its '
            || 'event enqueued'),
        ('finalize_status', 'Quarantined', 'a person must look (requeue puts it back to '
            || 'Pending)')
$$;

comment on function recording_finalize_internal.vocabulary() is
'Internal, pure. The words of the state machine, each with its meaning, by kind: verdict (what '
'the file-storage check says: apply_outcome''s p_outcome, last_outcome), apply_result '
'(apply_outcome''s result), claim_action (claim_due''s action), quarantine_reason '
'(quarantine_reason of a Quarantined finalize row) and finalize_status (the finalize row''s '
'status). The one declaration: the CHECKs, the deciders and the driver''s copies are tested '
'against it.';

revoke all on function recording_finalize_internal.vocabulary() from public;
