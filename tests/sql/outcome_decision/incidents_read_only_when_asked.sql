-- outcome_decision, what its statement costs the verdicts that read no incident: the storage
-- incidents are read only for a 404 (incident_deferring_404) and a transient answer
-- (holding_worker_incident), by calls those verdicts make. A found verdict - nearly every
-- verdict - neither reads the table nor calls them, and its plan carries no scan of it (a plan's
-- nodes are set up for every run, taken or not). The statement as apply_outcome runs it: its
-- arguments parameters, its plan generic.
begin;
select plan(5);

select tests.clean_slate();
insert into recording_finalize.storage_incidents (source, started_at) values
    ('operator', now() - interval '1 hour');

create function pg_temp.plan_of(p_outcome text, p_analyze boolean) returns text
language plpgsql as $f$
declare
    v_line text;
    v_plan text := '';
begin
    set local plan_cache_mode = force_generic_plan;
    deallocate all;
    prepare decision(text) as
        select d.* from recording_finalize_internal.outcome_decision($1, null, null, 1, 8,
            now() - interval '2 hours', '30 minutes', '24 hours', now(), true, 1, 0, 0) as d;
    for v_line in execute format('explain (analyze %s, costs off, timing off, summary off) '
            'execute decision(%L)', case when p_analyze then 'on' else 'off' end, p_outcome) loop
        v_plan := v_plan || v_line || E'\n';
    end loop;
    deallocate decision;
    return v_plan;
end
$f$;

select unalike(pg_temp.plan_of('found', false), '%storage_incidents%',
    'the statement''s plan holds no scan of storage_incidents');
select alike(pg_temp.plan_of('found', true), '%incident_deferring_404%never executed%',
    'a found verdict does not look for an incident deferring a 404');
select unalike(pg_temp.plan_of('missing', true), '%incident_deferring_404%never executed%',
    'a 404 does');
select is(
    (select result from recording_finalize_internal.outcome_decision('missing', null, null, 1, 8,
        now() - interval '2 hours', '30 minutes', '24 hours', now(), true, 1, 0, 0)),
    'deferred_by_incident', 'and is deferred by the open incident it finds');
select is(
    (select result from recording_finalize_internal.outcome_decision('found', null, null, 1, 8,
        now() - interval '2 hours', '30 minutes', '24 hours', now(), true, 1, 0, 0)),
    'reconciled', 'while a found one is reconciled, whatever incident is open');

select * from finish();
rollback;
