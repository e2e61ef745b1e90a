-- transition_available: the metadata rules are the table's CHECKs (one source, migration 0005);
-- each refusal is RF002 with the rule in words and the constraint in the hint, nothing moves.
begin;
select plan(12);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as rec \gset
create temp table before as select * from messenger.call_recordings;

create temp table probes (file_id text, size_bytes bigint, duration integer, fmt text,
    expected text);
insert into probes values
    (null, 1, 1, 'Ogg', 'file_id, size_bytes, duration_seconds and format are all required'),
    ('k', 1, 1, null, 'file_id, size_bytes, duration_seconds and format are all required'),
    ('', 1, 1, 'Ogg', 'file_id is blank'),
    ('   ', 1, 1, 'Ogg', 'file_id is blank'),
    ('https://bucket.example.com/k', 1, 1, 'Ogg', 'file_id is a URL or empty, not a storage reference'),
    (repeat('k', 1025), 1, 1, 'Ogg', 'file_id is longer than 1024 characters'),
    ('k', -1, 1, 'Ogg', 'size_bytes must be >= 0'),
    ('k', 1, -1, 'Ogg', 'duration_seconds must be >= 0'),
    ('k', 1, 1, 'webm', 'format must be one of Webm, Mp4, Ogg, M4a'),
    ('k', 1, 1, 'Matroska1', 'format must be one of Webm, Mp4, Ogg, M4a');

select is(
    tests.error_of(format(
        'select recording_finalize.transition_available(%L, %L, %s, %s, %L, null)',
        :'rec', p.file_id, p.size_bytes, p.duration, p.fmt
    )),
    format('RF002: recording %s: unusable file metadata: %s', :'rec', p.expected),
    format('RF002 "%s"', p.expected)
)
from probes as p;

select set_eq(
    'select * from messenger.call_recordings', 'select * from before',
    'no refused call moved the recording'
);
select lives_ok(
    format(
        $$select recording_finalize.transition_available(%L, %L, 0, 0, 'M4a', null)$$,
        :'rec', repeat('k', 1024)
    ),
    'a file_id of exactly 1024 characters, size 0 and duration 0 are accepted'
);

select * from finish();
rollback;
