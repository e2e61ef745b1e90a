-- What the product's indexes do, on real rows: the rules the unique ones enforce, and the claim's
-- scan reading ix_rfa_due. Their definitions are pinned by sql/schema.sql; the service's indexes
-- are the service's (_schema/visitor_manners.sql: the product adds none).
begin;
select plan(8);

-- The plan of a query, as text (a helper of this file only).
create function pg_temp.plan_of(p_sql text) returns setof text language plpgsql as $f$
begin
    return query execute 'explain (costs off) ' || p_sql;
end
$f$;

select tests.clean_slate();
select tests.make_stuck() as rec \gset

-- 1: one finalize row per recording.
select is(
    tests.violated_constraint(format(
        $$insert into messenger.recording_finalize_attempts (recording_id, session_kind,
            session_id, next_attempt_at)
        select recording_id, session_kind, session_id, now()
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'rec'
    )),
    'ux_rfa_recording',
    'a second finalize row for the same recording is refused'
);

-- 4: at most one open incident per source; closed ones may pile up.
insert into recording_finalize.storage_incidents (source, started_at)
values ('worker', now() - interval '1 hour');
select is(
    tests.violated_constraint($$insert into recording_finalize.storage_incidents (source,
        started_at) values ('worker', now())$$),
    'storage_incidents_one_open_uq',
    'a second open incident of the same source is refused'
);
select is(
    tests.violated_constraint($$insert into recording_finalize.storage_incidents (source,
        started_at) values ('recorders', now())$$),
    null,
    'an open incident of another source is accepted'
);
select is(
    tests.violated_constraint($$insert into recording_finalize.storage_incidents (source,
        started_at, ended_at) values ('worker', now() - interval '2 hours',
        now() - interval '90 minutes')$$),
    null,
    'a closed incident beside the open one is accepted (the index is partial)'
);
update recording_finalize.storage_incidents set ended_at = now() where source = 'worker';
select is(
    tests.violated_constraint($$insert into recording_finalize.storage_incidents (source,
        started_at) values ('worker', now())$$),
    null,
    'once it is closed, the source may open a new one'
);

-- 3: the claim's scan reads ix_rfa_due, and a settled row leaves it.
select tests.make_due_row(tests.make_recording('Direct', tests.make_session()), 0,
    now() - interval '1 minute', 'Done') is not null as done_row \gset
-- The planner switches claim_due itself sets (its SET clauses).
set local enable_seqscan = off;
set local enable_bitmapscan = off;
set local enable_sort = off;
create temp table due_plan as
select pg_catalog.string_agg(p, E'\n') as plan from (
    select * from pg_temp.plan_of($$select f.id
        from messenger.recording_finalize_attempts as f
        where f.status = 'Pending' and f.next_attempt_at <= now()
        order by f.next_attempt_at limit 10$$) as p
) as x;
select matches(
    (select plan from due_plan), 'Index (Only )?Scan using ix_rfa_due',
    'the claim''s scan of due rows reads ix_rfa_due'
);
select is(
    (select count(*)::integer from messenger.recording_finalize_attempts as f
        where f.status = 'Pending' and f.next_attempt_at <= now()),
    1,
    'the Pending row is found through it'
);
update messenger.recording_finalize_attempts set status = 'Done' where recording_id = :'rec';
select is(
    (select count(*)::integer from messenger.recording_finalize_attempts as f
        where f.status = 'Pending' and f.next_attempt_at <= now()),
    0,
    'once settled, it is no longer among the due rows'
);

select * from finish();
rollback;
