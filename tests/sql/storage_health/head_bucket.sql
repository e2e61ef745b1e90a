-- storage_health, HeadBucket: unanswered opens the worker's incident of kind unreachable, or makes
-- an open one of kind transient unreachable (its end is HeadBucket's then); answered closes one of
-- kind unreachable only. An incident without a kind (recorded by hand as source worker) is left
-- alone. RF001 for bad counts; the worker's role may call it, the operator's may not.
begin;
select plan(19);

select tests.clean_slate();
create function pg_temp.bucket(p_answered boolean)
returns table (action text, kind text, is_open boolean)
language sql as $$
    select h.action, h.kind, h.incident_id is not null and h.ended_at is null
    from recording_finalize.storage_health(p_bucket_answered => p_answered,
        p_error => 'EndpointConnectionError') as h
$$;

select results_eq('select * from pg_temp.bucket(true)', $$values ('none', null::text, false)$$,
    'answered, nothing open: nothing to do');
select results_eq('select * from pg_temp.bucket(false)',
    $$values ('opened', 'unreachable', true)$$, 'unanswered: opened, kind unreachable');
select is((select reason::text from recording_finalize.storage_incidents),
    'the file storage cannot be reached (HeadBucket unanswered: EndpointConnectionError)',
    'its reason');
select results_eq('select * from pg_temp.bucket(false)',
    $$values ('kept', 'unreachable', true)$$, 'unanswered again: kept, one incident');
select results_eq(
    $$select h.action, h.decided from recording_finalize.storage_health(p_transient => 0,
        p_checked => 9) as h$$,
    $$values ('kept', true)$$, 'healthy HEADs do not close an unreachable incident');
select results_eq('select * from pg_temp.bucket(true)',
    $$values ('closed', 'unreachable', false)$$, 'answered: closed');
select matches((select reason::text from recording_finalize.storage_incidents),
    ' \| closed: HeadBucket answers again$', 'its reason says why');

-- A transient incident: HeadBucket's answer does not close it, its silence re-kinds it.
select action from recording_finalize.storage_health(p_transient => 5, p_checked => 5);
select results_eq('select * from pg_temp.bucket(true)', $$values ('kept', 'transient', true)$$,
    'HeadBucket answering does not close a transient incident');
select results_eq('select * from pg_temp.bucket(false)', $$values ('kept', 'unreachable', true)$$,
    'HeadBucket unanswered makes it unreachable');
select results_eq('select * from pg_temp.bucket(true)',
    $$values ('closed', 'unreachable', false)$$, 'and the next answer closes it');
select is((select count(*)::integer from recording_finalize.storage_incidents), 2,
    'two incidents in all');

-- One recorded by hand as source worker: no kind, never closed or re-kinded by the worker.
insert into recording_finalize.storage_incidents (source, started_at, reason)
values ('worker', now() - interval '5 minutes', 'ops: storage maintenance');
select results_eq('select * from pg_temp.bucket(false)', $$values ('kept', null::text, true)$$,
    'unanswered: the hand-recorded incident is kept as it is');
select results_eq('select * from pg_temp.bucket(true)', $$values ('kept', null::text, true)$$,
    'answered: not closed');
select results_eq(
    $$select h.action, h.hold from recording_finalize.storage_health(p_transient => 0,
        p_checked => 5, p_cycle_end => true) as h$$,
    $$values ('kept', false)$$, 'healthy HEADs: not closed');

-- The kind column's rule.
select throws_ok(
    $$insert into recording_finalize.storage_incidents (source, kind, started_at)
    values ('recorders', 'transient', now())$$,
    '23514', null, 'only the worker''s incidents have a kind');

-- Bad counts, and who may call it.
select throws_ok($$select * from recording_finalize.storage_health(p_transient => 1)$$,
    'RF001', null, 'a transient count without the checked count');
select throws_ok(
    $$select * from recording_finalize.storage_health(p_transient => 3, p_checked => 2)$$,
    'RF001', null, 'more transient than checked');
select ok(pg_catalog.has_function_privilege('recording_finalize_worker',
    'recording_finalize.storage_health(boolean,integer,integer,boolean,text)', 'execute'),
    'the worker may call it');
select ok(not pg_catalog.has_function_privilege('recording_finalize_operator',
    'recording_finalize.storage_health(boolean,integer,integer,boolean,text)', 'execute'),
    'the operators may not (they record incidents with storage_incident_open)');

select * from finish();
rollback;
