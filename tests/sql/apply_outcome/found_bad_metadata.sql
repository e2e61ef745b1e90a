-- apply_outcome(found) with metadata that metadata_problem refuses: never raised (no RF002 any
-- more), returned as quarantined invalid_metadata with the rule in words; the recording and the
-- outboxes untouched.
begin;
select plan(9);

select tests.clean_slate();
create temp table probes (
    n integer primary key, file_id text, size_bytes bigint, duration integer, fmt text,
    rule text, rec uuid
);
insert into probes (n, file_id, size_bytes, duration, fmt, rule) values
    (1, 'https://bucket.s3.amazonaws.com/recordings/x', 1, 1, 'Webm',
        'file_id is a URL, not a storage reference'),
    (2, 's3://call-recordings/recordings/x', 1, 1, 'Webm',
        'file_id is a URL, not a storage reference'),
    (3, '  ', 1, 1, 'Webm', 'file_id is blank'),
    (4, null, 1, 1, 'Webm', 'file_id is required'),
    (5, 'k', -5, 1, 'Webm', 'size_bytes must be >= 0'),
    (6, 'k', 1, -1, 'Webm', 'duration_seconds must be >= 0'),
    (7, 'k', 1, 1, 'Avi', 'format must be one of Webm, Mp4, Ogg, M4a'),
    (8, 'k', 1, 1, 'webm', 'format must be one of Webm, Mp4, Ogg, M4a');
update probes set rec = tests.make_stuck();
create temp table recordings_before as select * from messenger.call_recordings;
create temp table claimed as select * from tests.claim();

create temp table applied as
select p.n, a.*
from probes as p
cross join lateral tests.apply(p.rec, 'found', p.file_id, p.size_bytes, p.duration, p.fmt) as a;

select is(
    (select count(*) from claimed where action = 'reconcile'), 8::bigint,
    'eight rows claimed for a check'
);
select is_empty(
    $$select n from applied where (result, finalize_status, attempts)
        is distinct from ('quarantined', 'Quarantined', 1)$$,
    'every unusable set of metadata is returned as quarantined (Quarantined, attempt 1), '
    'none raised'
);
select is_empty(
    $$select a.n from applied as a join probes as p using (n)
    where a.detail is distinct from 'InvalidMetadata: ' || p.rule$$,
    'detail names the rule broken, in words (formats are case-sensitive PascalCase)'
);
select is_empty(
    $$select p.n from probes as p join messenger.recording_finalize_attempts as f
        on f.recording_id = p.rec
    where (f.status, f.quarantine_reason, f.last_error, f.last_outcome, f.claim_token)
        is distinct from ('Quarantined', 'invalid_metadata', 'InvalidMetadata: ' || p.rule,
            'found', null)$$,
    'each row is stored Quarantined, quarantine_reason invalid_metadata, last_error = detail, '
    'last_outcome found, its token spent'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recordings_before',
    'no recording moved: status, metadata and version unchanged'
);
select is(
    (select count(*) from recording_finalize.outbox)
        + (select count(*) from messenger.integration_outbox)
        + (select count(*) from messenger.realtime_outbox),
    0::bigint,
    'no outbox row'
);
select is(
    (select count(*) from recording_finalize.quarantined_rows()), 8::bigint,
    'all eight are listed for the runbook'
);

-- The boundary the other way: what the rules admit is reconciled.
select tests.make_stuck() as edge \gset
select claim_token as edge_token from tests.claim() where recording_id = :'edge' \gset
select results_eq(
    format(
        $$select result, detail from recording_finalize.apply_outcome(%L, %L, 'found', %L, 0, 0,
            'M4a')$$,
        :'edge', :'edge_token', repeat('k', 1024)
    ),
    $$values ('reconciled', null::text)$$,
    'a 1024-character file_id, size 0 and duration 0 are usable'
);
select is(
    (select file_id from messenger.call_recordings where id = :'edge'), repeat('k', 1024),
    'and adopted'
);

select * from finish();
rollback;
