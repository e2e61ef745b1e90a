-- session_of: the one session lookup (Direct -> call_sessions, Conference -> conference_sessions),
-- NULLs for an unknown session, RF001 for another kind; p_for_share holds the row FOR SHARE so
-- that a writer of the session (session_ended) waits. The lock is probed from a second session.
begin;
select plan(8);

select tests.delete_committed('c0c0c0a5');
select tests.clean_slate();
select tests.make_session('Direct', null) as direct \gset
select tests.make_session('Conference', '1 hour') as conference \gset

select is(
    (recording_finalize_internal.session_of('Direct', :'direct')).id, :'direct'::uuid,
    'Direct reads call_sessions'
);
select results_eq(
    format($$select id, chat_id, ended_at
        from recording_finalize_internal.session_of('Conference', %L)$$,
        :'conference'),
    format($$select id, chat_id, ended_at from messenger.conference_sessions where id = %L$$,
        :'conference'),
    'Conference reads conference_sessions, every column'
);
select is(
    (recording_finalize_internal.session_of('Conference', :'direct')).id, null,
    'the kind decides the table: a Direct id is no conference'
);
select throws_ok(
    format($$select recording_finalize_internal.session_of('Group', %L)$$, :'direct'),
    'RF001', null, 'another session kind is refused'
);
select is(
    (select p.prorettype::regtype::text from pg_catalog.pg_proc as p
        where p.oid = 'recording_finalize_internal.session_of(text, uuid, boolean)'
            ::regprocedure),
    'recording_finalize_internal.session',
    'it returns the product''s own type, not the service''s row type'
);

-- FOR SHARE, seen from another session: a committed session, read with p_for_share here.
select tests.fixed_uuid('c0c0c0a5', 1) as shared \gset
select tests.exec_committed(format(
    $sql$do $do$ begin perform tests.make_session('Direct', null, %L); end $do$ $sql$, :'shared'
)) as committed \gset
select is(
    (recording_finalize_internal.session_of('Direct', :'shared', p_for_share => true)).id,
    :'shared'::uuid,
    'the committed session is read with p_for_share'
);
select is(
    tests.error_of(format(
        $$select public.dblink_exec(tests.conninfo(), 'set lock_timeout = ''200ms''; '
            || 'update messenger.call_sessions set ended_at = now() where id = ''%s''')$$,
        :'shared'
    )) ~ 'lock timeout',
    true,
    'while it is held, another session cannot update the session row (it would wait)'
);
select lives_ok(
    format(
        $$select public.dblink_exec(tests.conninfo(), 'set lock_timeout = ''200ms''; '
            || 'do $d$ begin perform from messenger.call_sessions where id = ''%s'' for share; '
            || 'end $d$')$$,
        :'shared'
    ),
    'but another reader may share it'
);

select * from finish();
rollback;
-- After the rollback: this transaction's FOR SHARE would make the delete wait.
select tests.delete_committed('c0c0c0a5') as cleaned \gset
