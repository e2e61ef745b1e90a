-- upload_deferral: the upload window opens at the earlier of recording stop and session end.
begin;
select plan(3);

select tests.clean_slate();
delete from messenger.storage_incidents;
-- The session ended 2 hours ago, but the recording had stopped 4 hours ago.
select tests.make_stuck('Conference', '2 hours') as rec \gset
update messenger.call_recordings set ended_at = now() - interval '4 hours' where id = :'rec';
insert into messenger.storage_incidents (source, started_at, ended_at, closed_by)
values ('ops', now() - interval '5 hours', now() - interval '3 hours', 'tests');

select isnt_empty(
    format($$select * from recording_finalize.upload_deferral(%L, '4 hours')$$, :'rec'),
    'an incident after the recording stopped but before the session ended overlaps the window'
);
update messenger.call_recordings set ended_at = now() - interval '2 hours' where id = :'rec';
select is_empty(
    format($$select * from recording_finalize.upload_deferral(%L, '4 hours')$$, :'rec'),
    'once both ended 2 hours ago, the incident that ended 3 hours ago is outside the window'
);
-- An unknown recording has no window: every incident counts (never fail on doubt).
select isnt_empty(
    $$select * from recording_finalize.upload_deferral(gen_random_uuid(), '4 hours')$$,
    'no recording row: every recent incident counts'
);

select * from finish();
rollback;
