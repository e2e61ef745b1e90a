-- outcome_decision over its input space without storage incidents: what each verdict does to a
-- claimed row (attempts count the claim), stated once for apply_outcome, preview_outcomes and
-- explain. next_attempt_at and last_error NULL mean: keep the row's.
begin;
select plan(4);

select tests.clean_slate();

create temp table cases (
    n integer primary key, outcome text, problem text, error text, attempts integer,
    max_attempts integer,
    e_result text, e_status text, e_attempts integer, e_next text, e_error text, e_reason text
);
insert into cases values
    -- found: usable metadata reconciles, whatever the attempt count.
    (1, 'found', null, 'ignored', 3, 8, 'reconciled', 'Done', 3, null, null, null),
    (2, 'found', null, null, 8, 8, 'reconciled', 'Done', 8, null, null, null),
    (3, 'found', null, null, 9, 8, 'reconciled', 'Done', 9, null, null, null),
    -- found with a metadata problem: quarantined invalid_metadata, the rule in words.
    (4, 'found', 'file_id is blank', null, 1, 8, 'quarantined', 'Quarantined', 1, null,
        'InvalidMetadata: file_id is blank', 'invalid_metadata'),
    -- ... and what the driver could not read of the object, in brackets after it.
    (20, 'found', 'duration_seconds is required', 'duration-seconds is not a whole number', 1,
        8, 'quarantined', 'Quarantined', 1, null,
        'InvalidMetadata: duration_seconds is required (duration-seconds is not a whole number)',
        'invalid_metadata'),
    (21, 'found', 'file_id is blank', '', 1, 8, 'quarantined', 'Quarantined', 1, null,
        'InvalidMetadata: file_id is blank', 'invalid_metadata'),
    -- invalid_metadata: the driver's reason; the metadata problem plays no part.
    (5, 'invalid_metadata', null, 'duration NaN', 2, 8, 'quarantined', 'Quarantined', 2, null,
        'InvalidMetadata: duration NaN', 'invalid_metadata'),
    (6, 'invalid_metadata', 'file_id is blank', null, 2, 8, 'quarantined', 'Quarantined', 2,
        null, 'InvalidMetadata: unspecified', 'invalid_metadata'),
    (7, 'invalid_metadata', null, '', 2, 8, 'quarantined', 'Quarantined', 2, null,
        'InvalidMetadata: unspecified', 'invalid_metadata'),
    -- missing without an incident: failed, the row Done; where the worker looked, if it says.
    (8, 'missing', null, 'bucket ''b'', key ''recordings/r''', 4, 8, 'failed', 'Done', 4, null,
        'Timeout: no object in file storage after the SLA (bucket ''b'', key ''recordings/r'')',
        null),
    (9, 'missing', 'file_id is blank', null, 8, 8, 'failed', 'Done', 8, null,
        'Timeout: no object in file storage after the SLA', null),
    -- transient: backoff below the maximum (the claim's schedule stands), quarantined at it.
    (10, 'transient', null, 'ReadTimeout', 1, 8, 'backoff', 'Pending', 1, null,
        'Transient: ReadTimeout', null),
    (11, 'transient', null, null, 7, 8, 'backoff', 'Pending', 7, null,
        'Transient: unspecified', null),
    (12, 'transient', null, 'SlowDown', 8, 8, 'quarantined', 'Quarantined', 8, null,
        'Transient: SlowDown', 'max_attempts'),
    (13, 'transient', null, '', 9, 8, 'quarantined', 'Quarantined', 9, null,
        'Transient: unspecified', 'max_attempts'),
    (14, 'transient', null, null, 1, 1, 'quarantined', 'Quarantined', 1, null,
        'Transient: unspecified', 'max_attempts'),
    -- config_error: released, the attempt given back (never below 0), due now.
    (15, 'config_error', null, 'NoSuchBucket', 5, 8, 'config_error_released', 'Pending', 4,
        'now', 'ConfigError: NoSuchBucket', null),
    (16, 'config_error', null, null, 8, 8, 'config_error_released', 'Pending', 7, 'now',
        'ConfigError: unspecified', null),
    (17, 'config_error', null, null, 0, 8, 'config_error_released', 'Pending', 0, 'now',
        'ConfigError: unspecified', null);

create temp table decided as
select c.n, d.*
from cases as c
cross join lateral recording_finalize_internal.outcome_decision(
    c.outcome, c.problem, c.error, c.attempts, c.max_attempts, now() - interval '2 hours',
    interval '30 minutes', interval '24 hours', now(), null
) as d;

select is((select count(*) from decided), 19::bigint, 'one decision per case');
select is_empty(
    $$select c.n from cases as c join decided as d using (n)
    where (d.result, d.finalize_status, d.attempts)
        is distinct from (c.e_result, c.e_status, c.e_attempts)$$,
    'result, finalize status and attempts as the contract says, in every case'
);
select is_empty(
    $$select c.n from cases as c join decided as d using (n)
    where d.next_attempt_at is distinct from case when c.e_next = 'now' then now() end
        or d.last_error is distinct from c.e_error$$,
    'next_attempt_at (now for config_error, else kept) and last_error in every case'
);
select is_empty(
    $$select c.n from cases as c join decided as d using (n)
    where d.quarantine_reason is distinct from c.e_reason$$,
    'quarantine_reason invalid_metadata or max_attempts exactly for the quarantines'
);

select * from finish();
rollback;
