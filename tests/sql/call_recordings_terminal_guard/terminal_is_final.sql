-- The terminal guard: no UPDATE, by anyone, moves a recording out of Available or Failed.
begin;
select plan(10);

select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Available') as available \gset
select tests.make_recording('Direct', tests.make_session(), 'Failed') as failed \gset
select tests.make_recording('Direct', tests.make_session('Direct', null), 'Recording') as live \gset

select throws_ok(
    format($$update messenger.call_recordings set status = 'Recording' where id = %L$$,
        :'available'),
    'RF008', null, 'Available -> Recording is refused'
);
select throws_ok(
    format(
        $$update messenger.call_recordings
        set status = 'Failed', failure_reason = 'Timeout', failed_at = now() where id = %L$$,
        :'available'
    ),
    'RF008', null, 'Available -> Failed is refused'
);
select throws_ok(
    format(
        $$update messenger.call_recordings
        set status = 'Available', file_id = 'k', size_bytes = 1, duration_seconds = 1,
            format = 'Ogg', available_at = now()
        where id = %L$$,
        :'failed'
    ),
    'RF008', null, 'Failed -> Available is refused'
);
select throws_ok(
    format($$update messenger.call_recordings set status = 'Pending' where id = %L$$, :'failed'),
    'RF008', null, 'Failed -> Pending is refused'
);
select matches(
    tests.error_of(format(
        $$update messenger.call_recordings set status = 'Uploading' where id = %L$$, :'available'
    )),
    '^RF008: recording .* is Available, a terminal status; it cannot become Uploading$',
    'the message names both statuses'
);
select results_eq(
    format(
        $$select id::text, status from messenger.call_recordings where id in (%L, %L)
        order by status$$,
        :'available', :'failed'
    ),
    format($$values (%L, 'Available'::varchar), (%L, 'Failed'::varchar)$$,
        :'available', :'failed'),
    'both recordings kept their terminal status'
);
select lives_ok(
    format(
        $$update messenger.call_recordings set updated_at = now(), status = 'Available'
        where id = %L$$,
        :'available'
    ),
    'an update that keeps the terminal status is allowed'
);
select lives_ok(
    format($$update messenger.call_recordings set status = 'Uploading' where id = %L$$, :'live'),
    'non-terminal transitions are not affected'
);
select has_trigger(
    'messenger', 'call_recordings', 'call_recordings_terminal_guard',
    'the guard is a trigger on messenger.call_recordings'
);
-- Migration 0013: the condition is evaluated by the executor; the function (and its
-- search_path switch) runs only for an update that leaves a terminal status.
select is(
    (select pg_catalog.pg_get_triggerdef(t.oid) from pg_catalog.pg_trigger as t
        where t.tgrelid = 'messenger.call_recordings'::regclass
            and t.tgname = 'call_recordings_terminal_guard'),
    'CREATE TRIGGER call_recordings_terminal_guard BEFORE UPDATE OF status ON '
    || 'messenger.call_recordings FOR EACH ROW WHEN ((((old.status)::text = ANY '
    || '((ARRAY[''Available''::character varying, ''Failed''::character varying])::text[])) '
    || 'AND ((new.status)::text IS DISTINCT FROM (old.status)::text))) EXECUTE FUNCTION '
    || 'messenger.call_recordings_terminal_guard()',
    'the guard fires only when an update would leave Available or Failed'
);

select * from finish();
rollback;
