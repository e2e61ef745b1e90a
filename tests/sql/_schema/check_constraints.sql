-- The CHECK constraints of the product's tables, each probed on real rows (each bad value refused
-- by the named constraint, each valid value accepted; every probe is rolled back). Which CHECKs
-- exist, and their text, is pinned by sql/schema.sql. The service's CHECKs are the service's.
begin;
select plan(79);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
insert into recording_finalize.storage_incidents (source, started_at)
values ('worker', now() - interval '1 hour');
insert into recording_finalize.operator_actions (action_kind, operator_name, reason)
values ('pause', 'ann', 'why');
insert into recording_finalize.pause (part, paused_by, reason) values ('relay', 'ann', 'why');
insert into recording_finalize.outbox (recording_id, topic, message_key, headers, payload)
values (:'rec', 't', 'k', '{"event-id": "e"}', '{"recordingId": "r"}');

create temp table probes (sql text, expected text, description text);
insert into probes values
    -- The finalize row.
    ($$update messenger.recording_finalize_attempts set status = 'Failed'$$,
        'recording_finalize_attempts_status_ck', 'finalize status Failed'),
    ($$update messenger.recording_finalize_attempts set status = 'pending'$$,
        'recording_finalize_attempts_status_ck', 'finalize status in lowercase'),
    ($$update messenger.recording_finalize_attempts set session_kind = 'direct'$$,
        'recording_finalize_attempts_session_kind_ck', 'finalize session_kind in lowercase'),
    ($$update messenger.recording_finalize_attempts set attempts = -1$$,
        'recording_finalize_attempts_attempts_ck', 'negative attempts'),
    ($$update messenger.recording_finalize_attempts set last_outcome = 'reconciled'$$,
        'recording_finalize_attempts_last_outcome_ck', 'last_outcome reconciled (a result)'),
    ($$update messenger.recording_finalize_attempts set status = 'Quarantined',
        quarantine_reason = 'bored'$$,
        'recording_finalize_attempts_quarantine_reason_ck', 'an unknown quarantine reason'),
    ($$update messenger.recording_finalize_attempts set status = 'Quarantined'$$,
        'recording_finalize_attempts_quarantined_has_reason_ck', 'Quarantined without a reason'),
    ($$update messenger.recording_finalize_attempts set quarantine_reason = 'max_attempts'$$,
        'recording_finalize_attempts_quarantined_has_reason_ck', 'a Pending row with a reason'),
    ($$update messenger.recording_finalize_attempts set status = 'Done',
        quarantine_reason = 'crash_loop'$$,
        'recording_finalize_attempts_quarantined_has_reason_ck', 'a Done row with a reason'),
    ($$update messenger.recording_finalize_attempts set opened_by = 'operator'$$,
        'recording_finalize_attempts_opened_by_ck', 'opened_by operator'),
    ($$update messenger.recording_finalize_attempts set last_error = repeat('e', 513)$$,
        '22001', 'a last_error longer than 512 characters'),
    ($$update messenger.recording_finalize_attempts set last_error = repeat('e', 512)$$,
        null, 'a last_error of 512 characters'),
    ($$update messenger.recording_finalize_attempts set attempts = 0, status = 'Done'$$,
        null, 'a Done row without a reason'),
    -- The settings.
    ($$insert into recording_finalize.settings (singleton) values (false)$$,
        'settings_singleton_ck', 'a second settings row (the key can only be true)'),
    ($$insert into recording_finalize.settings default values$$,
        'settings_pkey', 'a second true settings row'),
    ($$insert into recording_finalize.discovery_sweep (singleton) values (false)$$,
        'discovery_sweep_singleton_ck', 'a second discovery_sweep row'),
    ($$update recording_finalize.discovery_sweep set after_session_kind = 'Direct'$$,
        'discovery_sweep_position_ck', 'a sweep position of a kind without a session'),
    ($$update recording_finalize.settings set topic = 'bad topic'$$,
        'settings_topic_ck', 'a topic with a space'),
    ($$update recording_finalize.settings set topic = '..'$$,
        'settings_topic_ck', 'the topic ..'),
    ($$update recording_finalize.settings set topic = repeat('t', 250)$$,
        'settings_topic_ck', 'a topic of 250 characters'),
    ($$update recording_finalize.settings set topic = repeat('t', 249)$$,
        null, 'a topic of 249 characters'),
    ($$update recording_finalize.settings set max_attempts_min = 0$$,
        'settings_max_attempts_ck', 'max_attempts_min 0'),
    ($$update recording_finalize.settings set max_attempts_min = 5, max_attempts_max = 4$$,
        'settings_max_attempts_ck', 'an empty max_attempts range'),
    ($$update recording_finalize.settings set sla_timeout_min = '0'$$,
        'settings_sla_timeout_ck', 'sla_timeout_min 0'),
    ($$update recording_finalize.settings set sla_timeout_min = '1 hour',
        sla_timeout_max = '1 minute'$$,
        'settings_sla_timeout_ck', 'an empty SLA range'),
    ($$update recording_finalize.settings set backoff_base_min = '0'$$,
        'settings_backoff_base_ck', 'backoff_base_min 0'),
    ($$update recording_finalize.settings set backoff_base_min = '2 hours'$$,
        'settings_backoff_base_ck', 'an empty backoff base range'),
    ($$update recording_finalize.settings set backoff_factor_max = 0.5$$,
        'settings_backoff_factor_max_ck', 'a backoff factor bound below 1'),
    ($$update recording_finalize.settings set backoff_factor_max = 'Infinity'$$,
        'settings_backoff_factor_max_ck', 'an infinite backoff factor bound'),
    ($$update recording_finalize.settings set backoff_cap_max = '10 milliseconds'$$,
        'settings_backoff_cap_max_ck', 'a backoff cap bound below the smallest base'),
    ($$update recording_finalize.settings set backoff_jitter_max = 1$$,
        'settings_backoff_jitter_max_ck', 'a jitter bound of 1'),
    ($$update recording_finalize.settings set backoff_jitter_max = -0.1$$,
        'settings_backoff_jitter_max_ck', 'a negative jitter bound'),
    ($$update recording_finalize.settings set upload_grace_min = '0'$$,
        'settings_upload_grace_ck', 'upload_grace_min 0'),
    ($$update recording_finalize.settings set upload_grace_max = '100 milliseconds'$$,
        'settings_upload_grace_ck', 'an empty upload grace range'),
    ($$update recording_finalize.settings set relay_lease_max = '0'$$,
        'settings_relay_lease_max_ck', 'a zero relay lease bound'),
    ($$update recording_finalize.settings set relay_batch_max = 0$$,
        'settings_relay_batch_max_ck', 'a relay batch bound of 0'),
    ($$update recording_finalize.settings set relay_batch_max = 10001$$,
        'settings_relay_batch_max_ck', 'a relay batch bound above 10000'),
    ($$update recording_finalize.settings set retention_min = '59 seconds'$$,
        'settings_retention_min_ck', 'a retention floor below 1 minute'),
    ($$update recording_finalize.settings set retention_min = '1 minute', max_attempts_min = 3,
        relay_batch_max = 1$$,
        null, 'the owner''s tighter settings'),
    -- Storage incidents.
    ($$update recording_finalize.storage_incidents set source = 'Worker'$$,
        'storage_incidents_source_ck', 'a source in uppercase'),
    ($$update recording_finalize.storage_incidents set source = '1ops'$$,
        'storage_incidents_source_ck', 'a source starting with a digit'),
    ($$update recording_finalize.storage_incidents set source = 'ops team'$$,
        'storage_incidents_source_ck', 'a source with a space'),
    ($$update recording_finalize.storage_incidents set source = 'ops.eu-1_b'$$,
        null, 'a source with dots, dashes and underscores'),
    ($$update recording_finalize.storage_incidents set ended_at = started_at - interval '1 s'$$,
        'storage_incidents_ended_after_start_ck', 'an incident ending before it started'),
    ($$update recording_finalize.storage_incidents set ended_at = started_at$$,
        null, 'an incident ending as it started'),
    -- The audit trail.
    ($$update recording_finalize.operator_actions set action_kind = 'delete'$$,
        'operator_actions_action_kind_ck', 'action kind delete'),
    ($$update recording_finalize.operator_actions set operator_name = '  '$$,
        'operator_actions_operator_name_ck', 'a blank operator name'),
    ($$update recording_finalize.operator_actions set operator_name = repeat('n', 129)$$,
        'operator_actions_operator_name_ck', 'an operator name of 129 characters'),
    ($$update recording_finalize.operator_actions set reason = ''$$,
        'operator_actions_reason_ck', 'an empty reason'),
    ($$update recording_finalize.operator_actions set reason = '   '$$,
        'operator_actions_reason_ck', 'a blank (spaces only) reason'),
    ($$update recording_finalize.operator_actions set reason = repeat('r', 513)$$,
        'operator_actions_reason_ck', 'a reason of 513 characters'),
    ($$update recording_finalize.operator_actions set operator_name = repeat('n', 128),
        reason = repeat('r', 512)$$,
        null, 'an operator name of 128 and a reason of 512 characters'),
    -- The product's own outbox.
    ($$update recording_finalize.outbox set headers = '[]'$$,
        'outbox_headers_ck', 'event headers that are not an object'),
    ($$update recording_finalize.outbox set payload = '"text"'$$,
        'outbox_payload_ck', 'an event payload that is not an object'),
    ($$update recording_finalize.outbox set headers = '{}', payload = '{}'$$,
        null, 'empty objects as headers and payload'),
    ($$insert into recording_finalize.outbox (recording_id, topic, message_key, headers, payload)
        select recording_id, topic, message_key, headers, payload from recording_finalize.outbox$$,
        'outbox_recording_uq', 'a second event of the product for one recording'),
    ($$update recording_finalize.outbox set headers = null$$,
        '23502', 'an event without headers'),
    -- The pause switch.
    ($$update recording_finalize.pause set part = 'all'$$,
        'pause_part_ck', 'pause part all (a request, not a part)'),
    ($$update recording_finalize.pause set part = 'reconcile'$$,
        null, 'pause part reconcile'),
    -- migrate's bookkeeping.
    ($$update recording_finalize_migrations.file_checksums set kind = 'seed'$$,
        'file_checksums_kind_ck', 'a checksum of kind seed'),
    ($$update recording_finalize_migrations.file_checksums set sha256 = upper(sha256)$$,
        'file_checksums_sha256_ck', 'a sha256 in uppercase hex'),
    ($$update recording_finalize_migrations.file_checksums set definition_md5 = null
        where kind = 'function'$$,
        'file_checksums_definition_ck', 'a function file without its fingerprint'),
    ($$update recording_finalize_migrations.file_checksums set definition_md5 = md5('x')
        where kind = 'migration'$$,
        'file_checksums_definition_ck', 'a migration with a fingerprint'),
    ($$insert into recording_finalize_migrations.migrate_state (singleton, schema_version,
        package_version) values (false, 'x', 'y')$$,
        'migrate_state_singleton_ck', 'a second migrate_state row');

select is(
    tests.violated_constraint(p.sql),
    p.expected,
    case when p.expected is null then 'accepted: ' else 'refused: ' end || p.description
)
from probes as p;

-- Every value of every enumeration of the finalize row is accepted.
select is(
    tests.violated_constraint(format(
        $$update messenger.recording_finalize_attempts set %s where recording_id = %L$$,
        v.assignment, :'rec'
    )),
    null,
    format('accepted: %s', v.assignment)
)
from (values
    ('status = ''Done'''), ('session_kind = ''Conference'''),
    ('status = ''Quarantined'', quarantine_reason = ''max_attempts'''),
    ('status = ''Quarantined'', quarantine_reason = ''crash_loop'''),
    ('status = ''Quarantined'', quarantine_reason = ''invalid_metadata'''),
    ('status = ''Quarantined'', quarantine_reason = ''recording_not_found'''),
    ('status = ''Quarantined'', quarantine_reason = ''session_not_found'''),
    ('last_outcome = ''found'''), ('last_outcome = ''missing'''),
    ('last_outcome = ''transient'''), ('last_outcome = ''invalid_metadata'''),
    ('last_outcome = ''config_error'''),
    ('opened_by = ''discovery'''), ('opened_by = ''repair'''), ('opened_by = ''ingest''')
) as v(assignment);

select * from finish();
rollback;
