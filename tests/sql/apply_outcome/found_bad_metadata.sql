-- apply_outcome(found) with unusable metadata raises RF002 and changes nothing.
begin;
select plan(11);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select claim_token as token from tests.claim() \gset
create temp table before as select tests.snapshot() as fingerprint;

select throws_ok(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found',
            'https://bucket.s3.amazonaws.com/recordings/x', 1, 1, 'Webm')$$,
        :'rec', :'token'
    ),
    'RF002', null, 'an https URL as file_id is refused'
);
select throws_ok(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found',
            's3://call-recordings/recordings/x', 1, 1, 'Webm')$$,
        :'rec', :'token'
    ),
    'RF002', null, 'an s3:// URL as file_id is refused'
);
select throws_ok(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found', '  ', 1, 1, 'Webm')$$,
        :'rec', :'token'
    ),
    'RF002', null, 'a blank file_id is refused'
);
select throws_ok(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found', null, 1, 1, 'Webm')$$,
        :'rec', :'token'
    ),
    'RF002', null, 'a missing file_id is refused'
);
select throws_ok(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found', 'k', -5, 1, 'Webm')$$,
        :'rec', :'token'
    ),
    'RF002', null, 'a negative size is refused'
);
select throws_ok(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found', 'k', 1, -1, 'Webm')$$,
        :'rec', :'token'
    ),
    'RF002', null, 'a negative duration is refused'
);
select throws_ok(
    format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found', 'k', 1, 1, 'Avi')$$,
        :'rec', :'token'
    ),
    'RF002', null, 'an unknown format is refused'
);
select matches(
    tests.error_of(format(
        $$select * from recording_finalize.apply_outcome(%L, %L, 'found', 'k', 1, 1, 'webm')$$,
        :'rec', :'token'
    )),
    '^RF002: .*format must be one of Webm, Mp4, Ogg, M4a',
    'the message says what is wrong (formats are case-sensitive PascalCase)'
);
select is(
    tests.snapshot(), (select fingerprint from before),
    'nothing changed: recording, finalize row, outboxes'
);
select is(
    tests.token(:'rec'), :'token'::uuid,
    'the claim still stands, so the driver can report invalid_metadata with the same token'
);
select is(
    (select result from recording_finalize.apply_outcome(:'rec', :'token', 'invalid_metadata')),
    'quarantined',
    'which quarantines the row'
);

select * from finish();
rollback;
