-- recording_ingest_completed: RF003 for an unknown recording, RF002 for unusable metadata.
begin;
select plan(11);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table before as select tests.snapshot() as fingerprint;

select throws_ok(
    format(
        $$select recording_finalize.recording_ingest_completed(%L, 'recordings/x', 1, 1, 'Ogg')$$,
        gen_random_uuid()
    ),
    'RF003', null, 'an unknown recording is refused'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_ingest_completed(%L,
            'https://cdn.example.com/recordings/x?token=abc', 1, 1, 'Ogg')$$,
        :'rec'
    ),
    'RF002', null, 'a URL as file_id is refused: the binary reference is never a URL'
);
select throws_ok(
    format($$select recording_finalize.recording_ingest_completed(%L, '', 1, 1, 'Ogg')$$, :'rec'),
    'RF002', null, 'an empty file_id is refused'
);
select throws_ok(
    format($$select recording_finalize.recording_ingest_completed(%L, 'k', -1, 1, 'Ogg')$$, :'rec'),
    'RF002', null, 'a negative size is refused'
);
select throws_ok(
    format($$select recording_finalize.recording_ingest_completed(%L, 'k', 1, -1, 'Ogg')$$, :'rec'),
    'RF002', null, 'a negative duration is refused'
);
select throws_ok(
    format($$select recording_finalize.recording_ingest_completed(%L, 'k', 1, 1, 'Mp3')$$, :'rec'),
    'RF002', null, 'an unknown format is refused'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_ingest_completed(
            %L, repeat('k', 1025), 1, 1, 'Ogg')$$,
        :'rec'
    ),
    'RF002', null, 'a file_id longer than 1024 characters is refused'
);
select throws_ok(
    format(
        $$select recording_finalize.recording_ingest_completed(%L, 'k', 1, null, 'Ogg')$$,
        :'rec'
    ),
    'RF002', null, 'a missing duration is refused'
);
select throws_ok(
    format($$select recording_finalize.recording_ingest_completed(%L, E'\t', 1, 1, 'Ogg')$$,
        :'rec'),
    'RF002', null, 'a file_id of white space only is refused'
);
select matches(
    tests.error_of(format(
        $$select recording_finalize.recording_ingest_completed(%L, 's3://b/k', 1, 1, 'Ogg')$$,
        :'rec'
    )),
    '^RF002: invalid_file_metadata: recording .*: unusable file metadata: file_id is a URL',
    'the message says which field is wrong'
);
select is(tests.snapshot(), (select fingerprint from before), 'refused callbacks change nothing');

select * from finish();
rollback;
