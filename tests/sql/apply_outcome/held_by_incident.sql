-- apply_outcome(transient) while the worker's own storage incident (source worker) is open:
-- held_by_incident, the attempt given back (so an outage of any length quarantines nothing);
-- an incident of another source, or a closed one, holds nothing.
begin;
select plan(12);

select tests.clean_slate();
select tests.make_stuck(p_attempts => 4) as rec \gset
select tests.make_stuck(p_attempts => 7) as last_try \gset
create temp table recording_before as select * from messenger.call_recordings;
create temp table claimed as select * from tests.claim();
select id as incident from recording_finalize.storage_incident_open('worker', 'HeadBucket timeout')
\gset

create temp table applied as
select * from tests.apply(:'rec', 'transient', p_error => 'ConnectTimeoutError');

select results_eq(
    'select result, finalize_status, attempts from applied',
    $$values ('held_by_incident', 'Pending', 4)$$,
    'transient while the worker''s incident is open: held_by_incident, attempt 5 given back'
);
select is(
    (select detail from applied),
    format('Transient: ConnectTimeoutError (attempt given back: the worker''s storage incident '
        '%s is open)', :incident),
    'detail names the incident that held the attempt'
);
select results_eq(
    format(
        $$select status, attempts, next_attempt_at, claim_token, last_error, last_outcome
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    format(
        $$values ('Pending'::varchar, 4, now() + interval '15 minutes', null::uuid, %L::varchar,
            'transient'::varchar)$$,
        (select detail from applied)
    ),
    'stored: Pending, attempts 4, due on the claim''s backoff (backoff(5) = 15 min), token spent'
);
select is(
    (select result from tests.apply(:'last_try', 'transient')), 'held_by_incident',
    'even the last attempt (8 of 8) is held, not quarantined'
);
select results_eq(
    format($$select status, attempts, quarantine_reason from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'last_try'),
    $$values ('Pending'::varchar, 7, null::varchar)$$,
    'it stays Pending with attempt 8 given back'
);
select set_eq(
    'select * from messenger.call_recordings', 'select * from recording_before',
    'the recordings are untouched'
);
select is(
    (select count(*) from recording_finalize.outbox)
        + (select count(*) from messenger.integration_outbox)
        + (select count(*) from messenger.realtime_outbox),
    0::bigint,
    'no outbox row'
);

-- A long outage: ten cycles of transient answers with max attempts 8 never quarantine.
do $$
begin
    for i in 1..10 loop
        perform tests.make_due(f.recording_id) from messenger.recording_finalize_attempts as f;
        perform tests.apply(c.recording_id, 'transient') from tests.claim() as c;
    end loop;
end
$$;
select results_eq(
    'select status, attempts from messenger.recording_finalize_attempts order by attempts',
    $$values ('Pending'::varchar, 4), ('Pending', 7)$$,
    'ten held cycles later: both Pending, attempts where they were'
);

-- Only other verdicts: a 404 while the worker's incident is open is deferred, not held.
select tests.make_due(:'rec');
select claim_token as t2 from tests.claim() where recording_id = :'rec' \gset
select is(
    (select result from tests.apply(:'rec', 'missing')), 'deferred_by_incident',
    'missing while it is open: deferred_by_incident (the incident rule), not held'
);

-- Closed: the next transient answer counts again.
select * from recording_finalize.storage_incident_close('worker') \gset closed_
select tests.make_due(:'last_try');
select claim_token as t3 from tests.claim() where recording_id = :'last_try' \gset
select results_eq(
    format($$select result, attempts from tests.apply(%L, 'transient')$$, :'last_try'),
    $$values ('quarantined', 8)$$,
    'once the incident is closed, the 8th transient answer quarantines as usual'
);

-- An open incident of another source holds nothing.
select * from recording_finalize.storage_incident_open('recorders', 'PUT timeouts') \gset rec_
select tests.make_stuck(p_attempts => 2) as other \gset
select claim_token as t4 from tests.claim() where recording_id = :'other' \gset
select results_eq(
    format($$select result, attempts from tests.apply(%L, 'transient')$$, :'other'),
    $$values ('backoff', 3)$$,
    'an open recorders incident: normal backoff, attempt counted'
);
select * from recording_finalize.storage_incident_open('ops', 'S3 region down') \gset ops_
select tests.make_due(:'other');
select claim_token as t5 from tests.claim() where recording_id = :'other' \gset
select results_eq(
    format($$select result, attempts from tests.apply(%L, 'transient')$$, :'other'),
    $$values ('backoff', 4)$$,
    'nor does an operator''s incident of source ops'
);

select * from finish();
rollback;
