-- The terminal guard: no UPDATE, by anyone, moves a recording out of Available or Failed.
begin;
select plan(9);

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

select * from finish();
rollback;
