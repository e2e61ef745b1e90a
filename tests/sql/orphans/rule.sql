-- orphans: the non-terminal recordings whose session ended at least p_sla_timeout ago and that
-- have no finalize row (in any status), with their session's end; read-only.
begin;
select plan(6);

select tests.clean_slate();
create temp table fx (name text, recording_id uuid);
insert into fx values
    ('direct', tests.make_recording('Direct', tests.make_session('Direct', '2 hours'),
        'Uploading')),
    ('conference', tests.make_recording('Conference', tests.make_session('Conference',
        '40 minutes'), 'Recording')),
    ('pending', tests.make_recording('Direct', tests.make_session('Direct', '1 hour'),
        'Pending')),
    ('available', tests.make_recording('Direct', tests.make_session('Direct', '2 hours'),
        'Available')),
    ('failed', tests.make_recording('Direct', tests.make_session('Direct', '2 hours'),
        'Failed')),
    ('running', tests.make_recording('Conference', tests.make_session('Conference', null),
        'Recording')),
    ('young', tests.make_recording('Direct', tests.make_session('Direct', '5 minutes'),
        'Uploading')),
    ('no_session', tests.make_recording('Conference', gen_random_uuid(), 'Uploading')),
    ('done_row', tests.make_recording('Direct', tests.make_session('Direct', '2 hours'),
        'Uploading'));
select tests.make_due_row(recording_id, 1, now(), 'Done') is not null as ok
from fx where name = 'done_row';
create temp table before as select tests.snapshot() as s;

select set_eq(
    $$select x.name from recording_finalize_internal.orphans('30 minutes') as o
    join fx as x using (recording_id)$$,
    $$values ('direct'), ('conference'), ('pending')$$,
    'SLA 30 min: the three stuck recordings without a row'
);
select results_eq(
    $$select o.session_kind, o.session_id, o.session_ended_at
    from recording_finalize_internal.orphans('30 minutes') as o
    join fx as x using (recording_id) where x.name = 'conference'$$,
    $$select r.session_kind::text, r.session_id, s.ended_at from messenger.call_recordings as r
    join messenger.conference_sessions as s on s.id = r.session_id
    join fx as x on x.recording_id = r.id where x.name = 'conference'$$,
    'with the recording''s session and when it ended (Conference from conference_sessions)'
);
select set_eq(
    $$select x.name from recording_finalize_internal.orphans('1 hour') as o
    join fx as x using (recording_id)$$,
    $$values ('direct'), ('pending')$$,
    'SLA 1 hour: ended exactly one hour ago is in, 40 minutes ago is not'
);
select set_eq(
    $$select x.name from recording_finalize_internal.orphans('1 minute') as o
    join fx as x using (recording_id)$$,
    $$values ('direct'), ('conference'), ('pending'), ('young')$$,
    'SLA 1 min: the young one too; never a terminal, running, sessionless or rowed one'
);
select is_empty(
    $$select * from recording_finalize_internal.orphans('3 hours')$$,
    'SLA 3 hours: none'
);
select is(tests.snapshot(), (select s from before), 'read-only');

select * from finish();
rollback;
