-- storage_layout_unconfirmed, /readyz's question, answers as outcome_decision decides a cycle's
-- 404 for the same answers of the known uploads: true exactly where the 404 would be a
-- configuration error (KeyLayoutUnconfirmed). A grid of found / 404 / other counts, NULL too.
begin;
select plan(4);

select tests.clean_slate();
create temp table grid as
select f, m, o from
    (values (null::integer), (0), (1)) as found (f),
    (values (null::integer), (0), (1), (2), (3)) as missing (m),
    (values (null::integer), (0), (1)) as other (o);

select is_empty(
    $$select f, m, o from grid
    where recording_finalize.storage_layout_unconfirmed(f, m, o)
        is distinct from ((select d.result from recording_finalize_internal.outcome_decision(
            'missing', null, 'bucket ''b'', key ''k''', 1, 8, now() - interval '1 hour',
            '30 minutes', '24 hours', now(), true, f, m, o) as d) = 'config_error_released')$$,
    'for every answer of the known uploads, /readyz and the apply path agree');
select ok(recording_finalize.storage_layout_unconfirmed(0, 2, 0),
    'two known uploads, both 404, nothing found: the layout is not the recorders''');
select ok(not recording_finalize.storage_layout_unconfirmed(0, 1, 0),
    'one known upload is not enough to doubt the bucket (one binary deleted by hand)');
select ok(not recording_finalize.storage_layout_unconfirmed(1, 3, 0),
    'one object found: the layout holds');

select * from finish();
rollback;
