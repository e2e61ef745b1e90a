-- apply_outcome(found) with metadata the product accepts but the service's own table refuses (a
-- stricter CHECK, a shorter column): quarantined invalid_metadata naming the constraint, no
-- error, and the recording's half-made transition undone whole.
begin;
select plan(12);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select tests.make_stuck() as fits \gset
select tests.make_stuck() as short_col \gset
select tests.make_stuck() as no_push \gset
create temp table recordings_before as select * from messenger.call_recordings;
create temp table claimed as select * from tests.claim();

-- The service's DBA has a rule of their own (inside this test's transaction only).
alter table messenger.call_recordings
add constraint call_recordings_pgtap_file_id_len_ck check (length(file_id) <= 5);

create temp table applied as
select * from tests.apply(:'rec', 'found', 'recordings/too-long', 10, 5, 'Ogg');

select results_eq(
    'select result, finalize_status, attempts from applied',
    $$values ('quarantined', 'Quarantined', 1)$$,
    'the refused transition is returned as quarantined, not raised'
);
select is(
    (select detail from applied),
    'InvalidMetadata: refused by messenger.call_recordings (call_recordings_pgtap_file_id_len_ck)',
    'detail names the service''s constraint'
);
select results_eq(
    format(
        $$select status, quarantine_reason, last_error, last_outcome, claim_token
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    ),
    $$values ('Quarantined'::varchar, 'invalid_metadata'::varchar,
        'InvalidMetadata: refused by messenger.call_recordings '
        '(call_recordings_pgtap_file_id_len_ck)'::varchar, 'found'::varchar, null::uuid)$$,
    'the row is Quarantined invalid_metadata with that text, last_outcome found, token spent'
);
select set_eq(
    format('select * from messenger.call_recordings where id = %L', :'rec'),
    format('select * from recordings_before where id = %L', :'rec'),
    'the recording is as before: the transition was undone whole (status, metadata, version)'
);
select is(
    tests.event_count(:'rec') + tests.realtime_count(:'rec', 'RecordingAvailable'), 0::bigint,
    'no event and no realtime row'
);
select is(
    (select result from tests.apply(:'fits', 'found', 'k', 10, 5, 'Ogg')), 'reconciled',
    'metadata within the service''s rule is reconciled as usual'
);
alter table messenger.call_recordings drop constraint call_recordings_pgtap_file_id_len_ck;

-- A column the service made shorter than the product's 1024 characters.
alter table messenger.call_recordings alter column file_id type varchar(8);
select claim_token as short_token from claimed where recording_id = :'short_col' \gset

select results_eq(
    format(
        $$select result, finalize_status, detail from recording_finalize.apply_outcome(%L, %L,
            'found', 'recordings/much-longer-than-eight', 10, 5, 'Ogg',
            p_policy => tests.policy())$$,
        :'short_col', :'short_token'
    ),
    $$values ('quarantined', 'Quarantined',
        'InvalidMetadata: refused by messenger.call_recordings (a column length)')$$,
    'a value longer than the service''s column: quarantined invalid_metadata, no error'
);
select is(
    (select status from messenger.call_recordings where id = :'short_col'), 'Uploading',
    'and the recording did not move'
);
select is(
    (select quarantine_reason from messenger.recording_finalize_attempts
        where recording_id = :'short_col'),
    'invalid_metadata',
    'quarantine_reason invalid_metadata'
);
select is(
    tests.event_count(:'short_col'), 0::bigint,
    'no event'
);

-- A constraint on another of the service's tables is named with its table.
alter table messenger.realtime_outbox
add constraint realtime_outbox_pgtap_no_push_ck check (kind <> 'RecordingAvailable') not valid;
select results_eq(
    format($$select result, detail from tests.apply(%L, 'found', 'k', 10, 5, 'Ogg')$$,
        :'no_push'),
    $$values ('quarantined', 'InvalidMetadata: refused by messenger.realtime_outbox '
        '(realtime_outbox_pgtap_no_push_ck)')$$,
    'a refusal by another service table names that table and constraint'
);
select results_eq(
    format($$select status, version from messenger.call_recordings where id = %L$$, :'no_push'),
    $$values ('Uploading'::varchar, 1)$$,
    'and the transition is undone whole (no Available without its push)'
);

select * from finish();
rollback;
