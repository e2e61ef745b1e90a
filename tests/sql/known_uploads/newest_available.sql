-- known_uploads: the newest Available recordings of the last 7 days, through the adapter, at
-- most p_limit; RF001 outside 1..100.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_stuck() as old \gset
select tests.make_stuck() as a \gset
select tests.make_stuck() as b \gset
select tests.make_stuck() as stuck \gset
update messenger.call_recordings set status = 'Available', file_id = 'f', size_bytes = 1,
    duration_seconds = 1, format = 'Webm',
    available_at = case id when :'old'::uuid then now() - interval '8 days'
        when :'a'::uuid then now() - interval '2 hours' else now() - interval '1 hour' end
where id in (:'old', :'a', :'b');

select results_eq(
    $$select recording_id from recording_finalize.known_uploads(3)$$,
    format($$values (%L::uuid), (%L::uuid)$$, :'b', :'a'),
    'the Available ones of the last 7 days, newest first (not the stuck one, not the old one)'
);
select results_eq(
    $$select recording_id from recording_finalize.known_uploads(1)$$,
    format($$values (%L::uuid)$$, :'b'),
    'at most p_limit'
);
select throws_ok($$select * from recording_finalize.known_uploads(0)$$, 'RF001', null, '0');
select throws_ok($$select * from recording_finalize.known_uploads(101)$$, 'RF001', null, '101');

select * from finish();
rollback;
