-- storage_incident_list: open first, then recently ended, newest first; old ones left out.
begin;
select plan(4);

delete from messenger.storage_incidents;
insert into messenger.storage_incidents (source, started_at, ended_at, closed_by) values
    ('ops', now() - interval '30 days', now() - interval '29 days', 'x'),
    ('recorder', now() - interval '3 hours', now() - interval '2 hours', 'x'),
    ('ops', now() - interval '1 hour', now() - interval '50 minutes', 'x');
insert into messenger.storage_incidents (source, started_at) values
    ('worker', now() - interval '10 minutes');

select results_eq(
    'select source, is_open, duration_seconds from recording_finalize.storage_incident_list()',
    $$values ('worker', true, 600::double precision), ('ops', false, 600::double precision),
        ('recorder', false, 3600::double precision)$$,
    'open first, then ended within 7 days newest first; durations in seconds');
select results_eq(
    $$select source from recording_finalize.storage_incident_list('1 hour', 10)$$,
    $$values ('worker'), ('ops')$$,
    'p_recent narrows the ended ones; open ones always show');
select throws_ok($$select * from recording_finalize.storage_incident_list('1 day', 0)$$,
    'RF001', null, 'p_limit 0 is refused');
select throws_ok($$select * from recording_finalize.storage_incident_list('-1 day', 5)$$,
    'RF001', null, 'a negative p_recent is refused');

select * from finish();
rollback;
