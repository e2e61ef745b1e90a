-- preview_outcomes: RF001 for a bad verdict list (not an array, too long, an element that is not
-- an object with a UUID recording_id, an unknown outcome, sizes that are not whole numbers, a
-- bucket_confirmed that is not a boolean); it writes nothing either way.
begin;
select plan(12);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
create temp table before as select tests.snapshot() as fingerprint;
create function pg_temp.preview(p_verdicts text)
returns text language sql as $$
    select tests.error_of(format(
        'select * from recording_finalize.preview_outcomes(%L::jsonb)', p_verdicts))
$$;

select throws_ok($$select * from recording_finalize.preview_outcomes(null)$$, 'RF001', null,
    'NULL is refused');
select throws_ok($$select * from recording_finalize.preview_outcomes('{}')$$, 'RF001', null,
    'an object is not a list');
select throws_ok(
    $$select * from recording_finalize.preview_outcomes((select jsonb_agg(jsonb_build_object(
        'recording_id', gen_random_uuid(), 'outcome', 'missing'))
        from generate_series(1, 10001)))$$,
    'RF001', null, 'more than 10000 verdicts are refused');
select matches(pg_temp.preview('[1]'), '^RF001: .*each verdict must be an object',
    'an element that is not an object is refused');
select matches(pg_temp.preview('[{"outcome": "missing"}]'),
    '^RF001: .*UUID recording_id', 'a verdict without recording_id is refused');
select matches(pg_temp.preview('[{"recording_id": "r-1", "outcome": "missing"}]'),
    '^RF001: .*UUID recording_id', 'a recording_id that is not a UUID is refused');
select matches(
    pg_temp.preview(format('[{"recording_id": "%s", "outcome": "Found"}]', :'rec')),
    '^RF001: invalid_parameter: preview_outcomes: outcome must be found, missing, transient, '
    'invalid_metadata or config_error, got Found$',
    'an unknown outcome is refused, naming the valid ones');
select matches(
    pg_temp.preview(format('[{"recording_id": "%s"}]', :'rec')),
    '^RF001: .*got NULL$', 'a verdict without an outcome is refused');
select matches(
    pg_temp.preview(format('[{"recording_id": "%s", "outcome": "found", "file_id": "k", '
        '"size_bytes": 1.5, "duration_seconds": 1, "format": "Ogg"}]', :'rec')),
    '^RF001: .*whole numbers', 'a size that is not a whole number is refused');
select matches(
    pg_temp.preview(format('[{"recording_id": "%s", "outcome": "found", "file_id": "k", '
        '"size_bytes": 1, "duration_seconds": 99999999999, "format": "Ogg"}]', :'rec')),
    '^RF001: ', 'a duration beyond an integer is refused');
select matches(
    pg_temp.preview(format('[{"recording_id": "%s", "outcome": "transient", '
        '"bucket_confirmed": "yes"}]', :'rec')),
    '^RF001: .*bucket_confirmed must be true, false or null, got "yes"$',
    'a bucket_confirmed that is not a boolean is refused');
select is(tests.snapshot(), (select fingerprint from before), 'nothing was written');

select * from finish();
rollback;
