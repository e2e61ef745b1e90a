-- outcome_decision, the held-by-incident rule: a transient answer while an incident of source
-- worker (the worker's own: it could not reach the storage) is open costs no attempt, even at
-- the maximum; a closed one, one of another source, or one that starts after p_now holds
-- nothing; other verdicts are not held.
begin;
select plan(10);

select tests.clean_slate();
create function pg_temp.transient(p_attempts integer, p_now timestamptz default now())
returns table (result text, finalize_status text, attempts integer, next_attempt_at timestamptz,
    last_error text, quarantine_reason text)
language sql as $$
    select d.* from recording_finalize_internal.outcome_decision('transient', null,
        'ConnectTimeoutError', p_attempts, 8, now() - interval '2 hours', '30 minutes',
        '24 hours', p_now, null) as d
$$;

insert into recording_finalize.storage_incidents (source, started_at, ended_at, closed_by) values
    ('worker', now() - interval '3 hours', now() - interval '1 minute', 'worker');
select is((select result from pg_temp.transient(3)), 'backoff',
    'a closed worker incident (even a minute ago) holds nothing');

insert into recording_finalize.storage_incidents (source, started_at)
values ('worker', now() - interval '10 minutes')
returning id as open_id \gset
select results_eq(
    'select result, finalize_status, attempts, next_attempt_at from pg_temp.transient(3)',
    $$values ('held_by_incident', 'Pending', 2, null::timestamptz)$$,
    'an open worker incident: held_by_incident, attempt given back, the claim''s schedule kept');
select is((select last_error from pg_temp.transient(3)),
    format('Transient: ConnectTimeoutError (attempt given back: the worker''s storage incident %s '
        'is open)', :open_id),
    'last_error says which incident held it');
select results_eq(
    'select result, finalize_status, attempts, quarantine_reason from pg_temp.transient(8)',
    $$values ('held_by_incident', 'Pending', 7, null::text)$$,
    'at the maximum it is held, not quarantined');
select is((select attempts from pg_temp.transient(0)), 0, 'never below 0 attempts');
select is((select result from pg_temp.transient(3, now() - interval '11 minutes')), 'backoff',
    'an incident that starts after p_now holds nothing at p_now');

-- Only the worker's own source holds.
delete from recording_finalize.storage_incidents;
insert into recording_finalize.storage_incidents (source, started_at) values
    ('recorders', now() - interval '10 minutes'), ('ops', now() - interval '10 minutes'),
    ('workers', now() - interval '10 minutes');
select results_eq('select result, attempts from pg_temp.transient(3)',
    $$values ('backoff', 3)$$,
    'open incidents of recorders, ops, workers: normal backoff, the attempt counted');
select results_eq('select result, quarantine_reason from pg_temp.transient(8)',
    $$values ('quarantined', 'max_attempts')$$,
    'and at the maximum the row is quarantined');

-- The other verdicts while the worker's incident is open: not held.
insert into recording_finalize.storage_incidents (source, started_at)
values ('worker', now() - interval '10 minutes');
select results_eq(
    $$select o.outcome, d.result, d.attempts from (values (1, 'found'), (2, 'invalid_metadata'),
        (3, 'config_error')) as o (n, outcome)
    cross join lateral recording_finalize_internal.outcome_decision(o.outcome, null, null, 3, 8,
        now() - interval '2 hours', '30 minutes', '24 hours', now(), null) as d
    order by o.n$$,
    $$values ('found', 'reconciled', 3), ('invalid_metadata', 'quarantined', 3),
        ('config_error', 'config_error_released', 2)$$,
    'found, invalid_metadata, config_error are decided as without the incident'
);
select is(
    (select d.result from recording_finalize_internal.outcome_decision('missing', null, null, 3,
        8, now() - interval '2 hours', '30 minutes', '24 hours', now(), null) as d),
    'deferred_by_incident',
    'a 404 falls under the incident rule (deferred), not the held rule'
);

select * from finish();
rollback;
