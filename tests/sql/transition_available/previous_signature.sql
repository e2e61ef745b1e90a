-- The previous signature (no status argument), kept for one release for the callers of the
-- release before while migrate replaces the functions: it reads the status itself and moves the
-- recording the same one way, with its event; a terminal recording is still refused.
begin;
select plan(3);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as uploading \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as failed \gset

create function pg_temp.move_as_before(p_id uuid) returns boolean language sql as $$
    select recording_finalize_internal.transition_available(
        p_id, 'k', 1::bigint, 1, 'Ogg',
        (select recording_finalize_internal.session_of(r.session_kind, r.session_id)
            from messenger.call_recordings as r where r.id = p_id),
        'pin.messenger.call-recording-available.v1')
$$;

select is(pg_temp.move_as_before(:'uploading'), true, 'moved, the event is new');
select results_eq(
    format($$select status::text, tests.event_count(%L) from messenger.call_recordings
        where id = %L$$, :'uploading', :'uploading'),
    $$values ('Available'::text, 1::bigint)$$,
    'Available, with its event'
);
select throws_ok(
    format($$select pg_temp.move_as_before(%L)$$, :'failed'),
    'RF007', null, 'a Failed recording is refused as before'
);

select * from finish();
rollback;
