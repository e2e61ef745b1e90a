-- apply_outcome(missing): no binary after the SLA - Failed/Timeout, RecordingFailed, no event.
begin;
select plan(9);

select tests.clean_slate();
select tests.make_stuck('Conference') as rec \gset
select claim_token as token from tests.claim() \gset

create temp table applied as
select * from tests.apply(:'rec', 'missing');

select results_eq(
    'select result, finalize_status, attempts, detail from applied',
    $$values ('failed', 'Done', 1, 'Timeout: no object in file storage after the SLA')$$,
    'missing: failed, row Done, detail says why'
);
select results_eq(
    format(
        $$select status, failure_reason, failed_at, version, file_id
        from messenger.call_recordings where id = %L$$,
        :'rec'
    ),
    $$values ('Failed'::varchar, 'Timeout'::varchar, now(), 2, null::text)$$,
    'the recording is Failed with FailureReason Timeout, failed_at now, version bumped'
);
select results_eq(
    format(
        $$select status, claim_token, last_error, last_outcome, quarantine_reason
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Done'::varchar, null::uuid,
        'Timeout: no object in file storage after the SLA'::varchar, 'missing'::varchar,
        null::varchar)$$,
    'the finalize row is Done (terminal), says why, last_outcome missing'
);
select is(
    tests.realtime_count(:'rec', 'RecordingFailed'), 1::bigint,
    'a realtime RecordingFailed row is written'
);
select results_eq(
    'select kind, session_kind, session_id, reference_id from messenger.realtime_outbox',
    format(
        $$select 'RecordingFailed'::varchar, session_kind, session_id, id
        from messenger.call_recordings where id = %L$$,
        :'rec'
    ),
    'the RecordingFailed row is routed to the recording''s session'
);
select is(
    (select payload ->> 'reason' from messenger.realtime_outbox), 'Timeout',
    'the realtime payload carries the reason'
);
select is(
    (select count(*) from recording_finalize.outbox)
        + (select count(*) from messenger.integration_outbox), 0::bigint,
    'a failure has no integration event'
);
select is(
    tests.realtime_count(:'rec', 'RecordingAvailable'), 0::bigint,
    'no RecordingAvailable row'
);
select is(
    (select count(*) from tests.claim()), 0::bigint,
    'the failed recording is never claimed again'
);

select * from finish();
rollback;
