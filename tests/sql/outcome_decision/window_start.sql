-- outcome_decision: p_window_start bounds which ended incidents count for a 404 (ported from
-- upload_deferral/window_start); apply_outcome and preview_outcomes open the window at the
-- earlier of the recording's stop and its session's end.
begin;
select plan(7);

select tests.clean_slate();
insert into recording_finalize.storage_incidents (source, started_at, ended_at, closed_by)
values ('ops', now() - interval '5 hours', now() - interval '3 hours', 'tests');

select is(
    (select d.result from recording_finalize_internal.outcome_decision('missing', null, null, 1,
        8, now() - interval '4 hours', '4 hours', '24 hours', now(), null) as d),
    'deferred_by_incident',
    'a window that opened 4 hours ago overlaps the incident that ended 3 hours ago'
);
select is(
    (select d.result from recording_finalize_internal.outcome_decision('missing', null, null, 1,
        8, now() - interval '2 hours', '4 hours', '24 hours', now(), null) as d),
    'failed',
    'a window that opened 2 hours ago does not'
);

-- Through apply_outcome: the session ended 2 hours ago, but the recording had stopped 4 hours
-- ago, so its window opened 4 hours ago.
select tests.make_stuck('Conference', '2 hours') as rec \gset
select tests.make_stuck('Direct', '2 hours') as late_stop \gset
update messenger.call_recordings set ended_at = now() - interval '4 hours' where id = :'rec';
select tests.use_policy(8, '30 minutes', '4 hours');
select results_eq(
    format($$select result from recording_finalize.preview_outcomes(
        jsonb_build_array(jsonb_build_object('recording_id', %L, 'outcome', 'missing'),
            jsonb_build_object('recording_id', %L, 'outcome', 'missing')))$$,
        :'rec', :'late_stop'),
    $$values ('deferred_by_incident'), ('failed')$$,
    'preview_outcomes opens the window the same way'
);
select count(*) as claimed from tests.claim() \gset
select is(
    (select result from tests.apply(:'rec', 'missing', p_upload_grace => '4 hours')),
    'deferred_by_incident',
    'apply_outcome: the window opens when the recording stopped, if that came first'
);
select is(
    (select result from tests.apply(:'late_stop', 'missing', p_upload_grace => '4 hours')),
    'failed',
    'a recording that stopped with its session 2 hours ago: outside the window, failed'
);

-- A recording whose stop was never recorded: its session's end opens the window.
select tests.make_stuck('Direct', '4 hours') as no_stop \gset
update messenger.call_recordings set ended_at = null where id = :'no_stop';
select results_eq(
    format($$select claim_action, result from recording_finalize.preview_outcomes(
        jsonb_build_array(jsonb_build_object('recording_id', %L, 'outcome', 'missing')))$$,
        :'no_stop'),
    $$values ('reconcile', 'deferred_by_incident')$$,
    'preview_outcomes: without a stop the session end (4 hours ago) opens the window'
);
select claim_token as t from tests.claim() where recording_id = :'no_stop' \gset
select is(
    (select result from tests.apply(:'no_stop', 'missing', p_upload_grace => '4 hours')),
    'deferred_by_incident',
    'apply_outcome: the same'
);

select * from finish();
rollback;
