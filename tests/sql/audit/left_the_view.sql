-- audit: a recording whose finalize row was Done and that left the adapter's recordings view
-- later (the service soft-deleted or deleted it: the product may no longer see it) is not a
-- finding; a Done row of a recording still in the view and not terminal is.
begin;
select plan(2);

select tests.clean_slate();
select tests.make_stuck() as gone \gset
select tests.make_stuck() as active \gset
update messenger.recording_finalize_attempts set status = 'Done'
where recording_id in (:'gone', :'active');
-- The service removes one later: it leaves the view (the reference adapter shows every row of
-- call_recordings, so here it is deleted; a DBA's adapter leaves soft-deleted rows out).
delete from messenger.call_recordings where id = :'gone';
select is(
    (select found from recording_finalize.audit() where check_name = 'done_not_terminal'),
    1::bigint,
    'only the recording still in the view counts'
);
select is(
    (select examples from recording_finalize.audit() where check_name = 'done_not_terminal'),
    array[:'active']::text[],
    'the recording that left the view is not an example'
);

select * from finish();
rollback;
