-- metadata_problem: every rule adopted file metadata obeys before a recording may become
-- Available, in words naming the field, the first rule broken first; NULL handling per argument. The product
-- checks them itself (the service's table may have other CHECKs, or none); what they admit, the
-- service's reference table admits too.
begin;
select plan(5);

select tests.clean_slate();
create temp table probes (n integer primary key, file_id text, size_bytes bigint,
    duration integer, fmt text, expected text);
insert into probes values
    -- All four are required; the first NULL is named (before any other rule).
    (1, null, 1, 1, 'Ogg', 'file_id is required'),
    (2, 'k', null, 1, 'Ogg', 'size_bytes is required'),
    (3, 'k', 1, null, 'Ogg', 'duration_seconds is required'),
    (4, 'k', 1, 1, null, 'format is required'),
    (5, null, -1, -1, 'bogus', 'file_id is required'),
    (27, 'k', null, null, null, 'size_bytes is required'),
    (6, '', 1, 1, 'Ogg', 'file_id is blank'),
    (7, '   ', 1, 1, 'Ogg', 'file_id is blank'),
    (26, E'\t\r\n ', 1, 1, 'Ogg', 'file_id is blank'),
    (8, repeat('k', 1025), 1, 1, 'Ogg', 'file_id is longer than 1024 characters'),
    -- INV-REC-6: a storage reference, never a URL (any scheme://).
    (9, 'https://bucket.example.com/k', 1, 1, 'Ogg', 'file_id is a URL, not a storage reference'),
    (10, 's3://bucket/k', 1, 1, 'Ogg', 'file_id is a URL, not a storage reference'),
    (11, 'git+ssh://h/k', 1, 1, 'Ogg', 'file_id is a URL, not a storage reference'),
    (12, 'k', -1, 1, 'Ogg', 'size_bytes must be >= 0'),
    (13, 'k', 1, -1, 'Ogg', 'duration_seconds must be >= 0'),
    (14, 'k', 1, 1, 'webm', 'format must be one of Webm, Mp4, Ogg, M4a'),
    (15, 'k', 1, 1, 'Matroska1', 'format must be one of Webm, Mp4, Ogg, M4a'),
    (16, 'k', 1, 1, '', 'format must be one of Webm, Mp4, Ogg, M4a'),
    (28, 'k', 1, 1, 'W' || chr(233) || 'bm', 'format must be one of Webm, Mp4, Ogg, M4a'),
    -- No control characters (C0, DEL, C1); other scripts are a storage reference's right.
    (29, E'rec\tk', 1, 1, 'Ogg', 'file_id has control characters'),
    (30, 'rec' || chr(127), 1, 1, 'Ogg', 'file_id has control characters'),
    (31, 'rec' || chr(133), 1, 1, 'Ogg', 'file_id has control characters'),
    (32, 'rec' || chr(1), 1, 1, 'Ogg', 'file_id has control characters'),
    (33, 'https://cdn' || chr(233), 1, 1, 'Ogg', 'file_id is a URL, not a storage reference'),
    -- Seven days at most: longer is a corrupt value, not a long call.
    (34, 'k', 1, 604801, 'Ogg', 'duration_seconds is more than 604800 (7 days)'),
    (35, 'k', 1, 2147483647, 'Ogg', 'duration_seconds is more than 604800 (7 days)'),
    -- Rule order: the first rule broken is the one named.
    (17, '', -1, -1, 'x', 'file_id is blank'),
    (18, 'k', -1, -1, 'x', 'size_bytes must be >= 0'),
    -- Usable.
    (19, repeat('k', 1024), 0, 0, 'M4a', null),
    (36, 'k', 1, 604800, 'Ogg', null),
    (37, ' !~k ', 1, 1, 'Ogg', null),
    (38, 'recordings/запись-' || chr(233) || chr(255), 1, 1, 'Ogg', null),
    (20, 'recordings/a.webm', 4096, 600, 'Webm', null),
    (21, 'k', 1, 1, 'Mp4', null),
    (22, 'k', 1, 1, 'Ogg', null),
    -- Not a URL: no scheme before "://", or "://" not at a scheme's end.
    (23, '1abc://x', 1, 1, 'Ogg', null),
    (24, 'recordings/x://y', 1, 1, 'Ogg', null),
    (25, ' k ', 9223372036854775807, 604800, 'Webm', null);

select is_empty(
    $$select p.n, recording_finalize_internal.metadata_problem(p.file_id, p.size_bytes,
        p.duration, p.fmt) as got
    from probes as p
    where recording_finalize_internal.metadata_problem(p.file_id, p.size_bytes, p.duration, p.fmt)
        is distinct from p.expected$$,
    'no probe differs (listed with what it got when one does)'
);
select is(
    recording_finalize_internal.metadata_problem(null, null, null, null),
    'file_id is required',
    'all NULL: the first is named (a function of NULLs is not NULL)'
);
select is(
    (select p.provolatile::text || p.proparallel::text from pg_catalog.pg_proc as p
    where p.oid = 'recording_finalize_internal.metadata_problem(text, bigint, integer, text)'
        ::regprocedure),
    'is', 'IMMUTABLE and PARALLEL SAFE (pure)'
);

-- What the rules admit, the service's reference table admits (no transition fails on it).
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as rec \gset
select is_empty(
    format($$select p.n from probes as p
    where p.expected is null
        and tests.violated_constraint(format(
            'update messenger.call_recordings set status = ''Available'', file_id = %%L, '
            'size_bytes = %%s, duration_seconds = %%s, format = %%L, available_at = now() '
            'where id = %%L', p.file_id, p.size_bytes, p.duration, p.fmt, %L)) is not null$$,
        :'rec'),
    'every usable probe is accepted by messenger.call_recordings'' CHECKs'
);
select is(
    (select status from messenger.call_recordings where id = :'rec'), 'Uploading',
    'the probes moved nothing'
);

select * from finish();
rollback;
