-- explain: RF021 for an id that is neither a recording nor a finalize row (the policy is the
-- stored one). A finalize row whose recording is gone, or a recording without a row, is
-- explained.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select tests.make_stuck() as row_only \gset
delete from messenger.call_recordings where id = :'row_only';

select throws_ok(
    format('select recording_finalize.explain(%L)', gen_random_uuid()),
    'RF021', null, 'an unknown id is refused'
);
select matches(
    tests.error_of(format('select recording_finalize.explain(%L)',
        tests.fixed_uuid('00000000', 21))),
    format('^RF021: unknown_recording: explain: no recording and no finalize row with id %s$',
        tests.fixed_uuid('00000000', 21)),
    'the message names the id'
);
select results_eq(
    format($$select d -> 'recording', d -> 'finalize' ->> 'status', d -> 'next' ->> 'action',
        d -> 'next' ->> 'quarantineReason' from recording_finalize.explain(%L) as d$$,
        :'row_only'),
    $$values ('null'::jsonb, 'Pending', 'quarantined', 'recording_not_found')$$,
    'a finalize row without its recording is explained (and will be quarantined)'
);
select is(
    (recording_finalize.explain(:'row_only') -> 'session' ->> 'id')::uuid,
    (select session_id from messenger.recording_finalize_attempts
        where recording_id = :'row_only'),
    'its session is named from the finalize row'
);

select * from finish();
rollback;
