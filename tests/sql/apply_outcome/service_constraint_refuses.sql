-- apply_outcome(found) with metadata the product accepts but the service's own table refuses (a
-- stricter CHECK, a shorter column) while the adapter's make_available port writes it:
-- quarantined invalid_metadata naming the constraint, no error, and the recording's half-made
-- transition undone whole. A CHECK that refuses another write (the realtime push) refuses every
-- row: raised (the cycle stops and gives the attempts back), never a quarantine.
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

-- A column the service made shorter than the product's 1024 characters (its DBA recreates the
-- adapter's recordings view around the change, as the owner).
select pg_catalog.pg_get_viewdef('recording_finalize_adapter.recordings'::regclass) as viewdef,
    (select n.nspowner::regrole::text from pg_catalog.pg_namespace as n
        where n.nspname = 'recording_finalize') as owner \gset
drop view recording_finalize_adapter.recordings;
alter table messenger.call_recordings alter column file_id type varchar(8);
select format('create view recording_finalize_adapter.recordings as %s', :'viewdef') \gexec
select format('alter view recording_finalize_adapter.recordings owner to %I', :'owner') \gexec
select claim_token as short_token from claimed where recording_id = :'short_col' \gset

select results_eq(
    format(
        $$select result, finalize_status, detail from recording_finalize.apply_outcome(%L, %L,
            'found', 'recordings/much-longer-than-eight', 10, 5, 'Ogg')$$,
        :'short_col', :'short_token'
    ),
    $$values ('quarantined', 'Quarantined',
        'InvalidMetadata: refused by the recordings table (a column length)')$$,
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

-- A CHECK on another of the service's tables refuses every push: raised, not a quarantine.
alter table messenger.realtime_outbox
add constraint realtime_outbox_pgtap_no_push_ck check (kind <> 'RecordingAvailable') not valid;
select throws_ok(
    format($$select * from tests.apply(%L, 'found', 'k', 10, 5, 'Ogg')$$, :'no_push'),
    '23514', null,
    'a refusal of the realtime push (another service table) is raised: it would refuse every row'
);
select results_eq(
    format($$select r.status, r.version, f.status, f.attempts, f.quarantine_reason
        from messenger.call_recordings as r
        join messenger.recording_finalize_attempts as f on f.recording_id = r.id
        where r.id = %L$$, :'no_push'),
    $$values ('Uploading'::varchar, 1, 'Pending'::varchar, 1, null::varchar)$$,
    'and nothing of it stays: the recording did not move, its row is not quarantined'
);

select * from finish();
rollback;
