-- predict_action: predicts a row even while another session holds it, without waiting.
begin;
select plan(2);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select results_eq(
    format($$select action, attempts, detail from recording_finalize.predict_action(
        %L, 8, '30 minutes', 'pin.messenger.call-recording-available.v1')$$, :'rec'),
    $$values ('reconcile', 1, 'Uploading')$$,
    'a due stuck row is predicted as reconcile, attempt 1'
);
select is_empty(
    format($$select * from recording_finalize.predict_action(
        %L, 8, '30 minutes', 'pin.messenger.call-recording-available.v1')$$, gen_random_uuid()),
    'no finalize row, no prediction'
);

select * from finish();
rollback;
