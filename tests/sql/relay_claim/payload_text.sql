-- relay_claim returns the exact text to publish: valid JSON equal to the stored jsonb.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_session('Conference') as session \gset
select tests.make_recording('Conference', :'session', 'Uploading') as rec \gset
select recording_finalize.recording_ingest_completed(:'rec', 'recordings/p', 1, 1, 'Ogg')
    as ingested \gset

create temp table claimed as select * from recording_finalize.relay_claim();

select is(
    pg_typeof((select payload from claimed))::text, 'text',
    'the payload comes back as text'
);
select is(
    (select payload::jsonb from claimed),
    (select payload from recording_finalize.outbox),
    'the text parses as JSON equal to the stored payload'
);
select is(
    (select payload from claimed),
    (select payload::text from recording_finalize.outbox),
    'it is the canonical rendering of the stored jsonb'
);
select results_eq(
    'select id, message_key, headers from claimed',
    'select id, message_key, headers from recording_finalize.outbox',
    'id, message key and headers are the stored ones'
);
select is((select message_key from claimed), :'session'::text, 'the key is the session id');

select * from finish();
rollback;
