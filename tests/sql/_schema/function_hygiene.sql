-- Every function of recording_finalize and recording_finalize_internal: documented (COMMENT ON,
-- its contract), owned by the product's owner, search_path pinned to '' except the inlinable SQL
-- helpers (listed here by name: a SET clause would stop PostgreSQL inlining them into their
-- callers, which all pin search_path), exactly the API functions SECURITY DEFINER, and the
-- volatility each one declares.
begin;
select plan(23);

create temp table product_functions as
select p.oid, replace(p.oid::regprocedure::text, ', ', ',') as fn, n.nspname::text as schema,
    p.prosecdef, p.proconfig, p.provolatile::text as volatility, p.proacl, p.proowner,
    p.proleakproof, l.lanname::text as language,
    pg_catalog.obj_description(p.oid, 'pg_proc') as comment
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
join pg_catalog.pg_language as l on l.oid = p.prolang
where n.nspname in ('recording_finalize', 'recording_finalize_internal');

-- The helpers that deliberately carry no SET clause.
create temp table inlined (fn text);
insert into inlined values
    ('recording_finalize_internal.claim_decision(text,boolean,boolean,timestamp with time zone,'
        || 'integer,text,integer,interval,timestamp with time zone,text,text,uuid,boolean)'),
    ('recording_finalize_internal.outcome_decision(text,text,text,integer,integer,'
        || 'timestamp with time zone,interval,interval,timestamp with time zone,boolean,'
        || 'integer,integer,integer)'),
    ('recording_finalize_internal.metadata_problem(text,bigint,integer,text)'),
    ('recording_finalize_internal.key_layout_unconfirmed(integer,integer,integer)'),
    ('recording_finalize_internal.key_layout_evidence()'),
    ('recording_finalize_internal.backoff_delay(integer,interval,double precision,interval,'
        || 'double precision)'),
    ('recording_finalize_internal.orphans(interval)'),
    ('recording_finalize_internal.active_recordings_after(text,uuid,integer)'),
    ('recording_finalize_internal.available_recordings_after(timestamp with time zone,'
        || 'timestamp with time zone,timestamp with time zone,uuid,integer)'),
    ('recording_finalize_internal.recording_row(uuid)'),
    ('recording_finalize_internal.session_row(text,uuid)'),
    ('recording_finalize_internal.iso_utc(timestamp with time zone)'),
    ('recording_finalize_internal.mask_urls(text,integer)');

-- 1: every function, with the volatility it declares and whether it runs as its owner. A new
-- function, a removed one, or a changed volatility or security fails here: update the list.
select set_eq(
    $$select fn, volatility, case when prosecdef then 'definer' else 'invoker' end
    from product_functions$$,
    $$values
        ('recording_finalize.apply_outcome(uuid,uuid,text,text,bigint,integer,text,text,'
            || 'boolean,integer,integer,integer)',
            'v', 'definer'),
        ('recording_finalize.audit(interval,integer,interval)', 's', 'definer'),
        ('recording_finalize.audit_repair(text,integer)', 'v', 'definer'),
        ('recording_finalize.check_adapter(boolean)', 'v', 'definer'),
        ('recording_finalize.claim_due(integer)', 'v', 'definer'),
        ('recording_finalize.claim_preview(integer)', 's', 'definer'),
        ('recording_finalize.discover_stuck(integer,integer)', 'v', 'definer'),
        ('recording_finalize.discover_unpublished(interval,integer,integer)', 'v', 'definer'),
        ('recording_finalize.known_uploads(integer)', 's', 'definer'),
        ('recording_finalize.storage_layout_unconfirmed(integer,integer,integer)', 'i',
            'definer'),
        ('recording_finalize.explain(uuid)', 's', 'definer'),
        ('recording_finalize.failed_recordings(integer)', 's', 'definer'),
        ('recording_finalize.operator_state()', 's', 'definer'),
        ('recording_finalize.preview_outcomes(jsonb)', 's', 'definer'),
        ('recording_finalize.prune(interval,integer,boolean)', 'v', 'definer'),
        ('recording_finalize.prune_events(interval,integer,boolean)', 'v', 'definer'),
        ('recording_finalize.quarantined_rows(integer,text,timestamp with time zone)', 's',
            'definer'),
        ('recording_finalize.service_events_unpublished(interval,integer)', 's', 'definer'),
        ('recording_finalize.recording_ingest_completed(uuid,text,bigint,integer,text,text)',
            'v', 'definer'),
        ('recording_finalize.recording_started(uuid,text,uuid,text,text)', 'v', 'definer'),
        ('recording_finalize.record_apply_failure(uuid[],uuid[],text,boolean)', 'v',
            'definer'),
        ('recording_finalize.record_apply_failure(uuid[],uuid[],text[],text,text,integer,'
            || 'uuid[],uuid[])', 'v', 'definer'),
        ('recording_finalize.recording_stopped(uuid,interval)', 'v', 'definer'),
        ('recording_finalize.report_worker_config(text,text,interval)', 'v', 'definer'),
        ('recording_finalize.relay_claim(integer,interval,bigint,text)', 'v', 'definer'),
        ('recording_finalize.relay_mark_published(bigint[],uuid)', 'v', 'definer'),
        ('recording_finalize.release_claims(uuid[],uuid[])', 'v', 'definer'),
        ('recording_finalize.requeue(uuid,text)', 'v', 'definer'),
        ('recording_finalize.reschedule(uuid[],text,text,text,boolean)', 'v', 'definer'),
        ('recording_finalize.schema_state()', 's', 'definer'),
        ('recording_finalize.server_settings()', 's', 'definer'),
        ('recording_finalize.session_ended(text,uuid,interval)', 'v', 'definer'),
        ('recording_finalize.set_pause(text,boolean,text,text)', 'v', 'definer'),
        ('recording_finalize.set_policy(integer,interval,interval,double precision,interval,'
            || 'double precision,interval,text,integer,interval)', 'v', 'definer'),
        ('recording_finalize.republish_hold()', 's', 'definer'),
        ('recording_finalize.stats(text)', 's', 'definer'),
        ('recording_finalize.storage_incident_close(text,timestamp with time zone,text)', 'v',
            'definer'),
        ('recording_finalize.storage_incident_list(interval,integer)', 's', 'definer'),
        ('recording_finalize.storage_incident_open(text,text,timestamp with time zone)', 'v',
            'definer'),
        ('recording_finalize.storage_health(boolean,integer,integer,boolean,text)', 'v',
            'definer'),
        ('recording_finalize.try_lock_runner(bigint)', 'v', 'definer'),
        ('recording_finalize.unlock_runner(bigint)', 'v', 'definer'),
        ('recording_finalize.worker_config()', 's', 'definer'),
        ('recording_finalize_internal.active_recordings_after(text,uuid,integer)', 's',
            'invoker'),
        ('recording_finalize_internal.adapter_fingerprint()', 's', 'invoker'),
        ('recording_finalize_internal.adapter_ports()', 'i', 'invoker'),
        ('recording_finalize_internal.available_recordings_after(timestamp with time zone,'
            || 'timestamp with time zone,timestamp with time zone,uuid,integer)', 's', 'invoker'),
        ('recording_finalize_internal.backoff_delay(integer,interval,double precision,interval,'
            || 'double precision)', 'v', 'invoker'),
        ('recording_finalize_internal.check_incident_caller(text,timestamp with time zone,text)',
            's', 'invoker'),
        ('recording_finalize_internal.check_operator(text,text,text)', 'i', 'invoker'),
        ('recording_finalize_internal.check_policy_bounds(recording_finalize_internal.policy)',
            's', 'invoker'),
        ('recording_finalize_internal.check_relay_batch(integer)', 's', 'invoker'),
        ('recording_finalize_internal.check_retention(interval)', 's', 'invoker'),
        ('recording_finalize_internal.claim_decision(text,boolean,boolean,'
            || 'timestamp with time zone,integer,text,integer,interval,timestamp with time zone,'
            || 'text,text,uuid,boolean)', 'i', 'invoker'),
        ('recording_finalize_internal.enqueue_available(recording_finalize_internal.recording,'
            || 'recording_finalize_internal.session,text,boolean)', 'v', 'invoker'),
        ('recording_finalize_internal.function_fingerprint(text)', 's', 'invoker'),
        ('recording_finalize_internal.has_event(uuid)', 's', 'invoker'),
        ('recording_finalize_internal.iso_utc(timestamp with time zone)', 's', 'invoker'),
        ('recording_finalize_internal.key_layout_unconfirmed(integer,integer,integer)', 'i',
            'invoker'),
        ('recording_finalize_internal.key_layout_evidence()', 'i', 'invoker'),
        ('recording_finalize_internal.mask_urls(text,integer)', 'i', 'invoker'),
        ('recording_finalize_internal.metadata_problem(text,bigint,integer,text)', 'i',
            'invoker'),
        ('recording_finalize_internal.orphans(interval)', 's', 'invoker'),
        ('recording_finalize_internal.outcome_decision(text,text,text,integer,integer,'
            || 'timestamp with time zone,interval,interval,timestamp with time zone,boolean,'
            || 'integer,integer,integer)',
            's', 'invoker'),
        ('recording_finalize_internal.policy()', 's', 'invoker'),
        ('recording_finalize_internal.record_operator_action(uuid[],text,text,text,jsonb)', 'v',
            'invoker'),
        ('recording_finalize_internal.recording_row(uuid)', 's', 'invoker'),
        ('recording_finalize_internal.republish_trusted()', 's', 'invoker'),
        ('recording_finalize_internal.rows_read(text)', 'v', 'invoker'),
        ('recording_finalize_internal.schedule_finalize(uuid,text,uuid,timestamp with time zone)',
            'v', 'invoker'),
        ('recording_finalize_internal.session_of(text,uuid,boolean)', 'v', 'invoker'),
        ('recording_finalize_internal.service_events_pending_only()', 's', 'invoker'),
        ('recording_finalize_internal.service_events_remembered_from()', 's', 'invoker'),
        ('recording_finalize_internal.service_events_show_delivered()', 's', 'invoker'),
        ('recording_finalize_internal.session_row(text,uuid)', 's', 'invoker'),
        ('recording_finalize_internal.still_claimed(uuid[],uuid[])', 'v', 'invoker'),
        ('recording_finalize_internal.topic(text,text)', 's', 'invoker'),
        ('recording_finalize_internal.transition_available(uuid,text,text,bigint,integer,'
            || 'text,recording_finalize_internal.session,text)', 'v', 'invoker'),
        ('recording_finalize_internal.transition_available(uuid,text,bigint,integer,text,'
            || 'recording_finalize_internal.session,text)', 'v', 'invoker'),
        ('recording_finalize_internal.vocabulary()', 'i', 'invoker')$$,
    'every function of both schemas, its declared volatility and its security'
);
-- 2: the rule behind the list (the API schema runs as the owner, the internals never do), and
-- every function documented.
select is_empty(
    $$select fn from product_functions
    where prosecdef <> (schema = 'recording_finalize')$$,
    'exactly the functions of schema recording_finalize are SECURITY DEFINER'
);
select is_empty(
    $$select fn from product_functions where coalesce(btrim(comment), '') = ''$$,
    'every function has a COMMENT ON (its contract)'
);
-- 3: search_path.
select is_empty(
    $$select fn from product_functions
    where fn not in (select fn from inlined)
        and (proconfig is null or not ('search_path=pg_catalog, pg_temp' = any(proconfig)))$$,
    'every function but the inlinable helpers pins search_path to pg_catalog, pg_temp (pg_temp '
        || 'last: left out, it would be searched first for types and tables)'
);
select is_empty(
    $$select fn from product_functions
    where prosecdef
        and (proconfig is null or not ('search_path=pg_catalog, pg_temp' = any(proconfig)))$$,
    'no SECURITY DEFINER function without a pinned search_path'
);
select is_empty(
    $$select fn || ': ' || c from product_functions, unnest(proconfig) as c
    where c !~ ('^(search_path=pg_catalog, pg_temp|lock_timeout=[0-9]+m?s|enable_(seqscan|bitmapscan|sort|hashjoin|mergejoin)=off|jit=off'
        || '|plan_cache_mode=force_generic_plan'
        || '|IntervalStyle=postgres)$')
        and not (fn = 'recording_finalize.check_adapter(boolean)'
            and c = 'statement_timeout=10s')$$,
    'no function sets anything but search_path, lock_timeout, the claim''s planner switches '
        || '(its plan kept generic) '
        || 'and the postgres IntervalStyle of the messages and settings it shows (and '
        || 'check_adapter its statement_timeout)'
);
-- 2: the inlinable helpers: SQL, invoker, no SET clause, granted to nobody.
select set_eq(
    $$select p.fn, p.language, p.prosecdef as secdef, p.proconfig is null as no_set,
        (select array_agg(a.grantee::regrole::text order by a.grantee::regrole::text)
            from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) as a) as grantees
    from product_functions as p join inlined as i on i.fn = p.fn$$,
    $$select fn, 'sql' as language, false as secdef, true as no_set,
        array[(select n.nspowner::regrole::text from pg_catalog.pg_namespace as n
            where n.nspname = 'recording_finalize')] as grantees
    from inlined$$,
    'each inlinable helper exists, is LANGUAGE sql, not SECURITY DEFINER, has no SET clause '
        || 'and is executable by its owner only'
);
select is_empty(
    $$select fn from product_functions
    where proconfig is null and fn not in (select fn from inlined)$$,
    'no other function goes without a SET clause'
);
-- 5: ownership, languages, leakproof.
select is_empty(
    $$select fn from product_functions
    where proowner <> (select n.nspowner from pg_catalog.pg_namespace as n
        where n.nspname = 'recording_finalize')$$,
    'every function is owned by the product''s owner (the owner of schema recording_finalize)'
);
select is_empty(
    $$select fn from product_functions as f
    join pg_catalog.pg_roles as r on r.oid = f.proowner
    where f.prosecdef and (r.rolsuper or r.rolbypassrls)$$,
    'no SECURITY DEFINER function runs as a superuser or a role that bypasses RLS'
);
select is_empty(
    $$select fn || ' (' || language || ')' from product_functions
    where language not in ('sql', 'plpgsql')$$,
    'every function is LANGUAGE sql or plpgsql'
);
select is_empty(
    $$select fn from product_functions where proleakproof$$,
    'no function claims LEAKPROOF'
);
select is_empty(
    $$select p.oid::regprocedure::text from pg_catalog.pg_proc as p
    join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
    where n.nspname = 'recording_finalize_migrations'$$,
    'schema recording_finalize_migrations holds no function'
);

-- 8: and PostgreSQL does inline each helper (no call of its own in the plan): what the missing
-- SET clause is for. Arguments come from a table, so nothing is folded to a constant.
create function pg_temp.plan_of(p_sql text) returns text language plpgsql as $f$
declare
    v_line text;
    v_plan text := '';
begin
    for v_line in execute 'explain (verbose, costs off) ' || p_sql loop
        v_plan := v_plan || v_line || E'\n';
    end loop;
    return v_plan;
end
$f$;
create temp table args (t text, u uuid, at timestamptz, i integer, d interval, b boolean);
select unalike(
    pg_temp.plan_of($$select d.* from args as a, recording_finalize_internal.claim_decision(
        a.t, a.b, a.b, a.at, a.i, a.t, a.i, a.d, a.at) as d$$),
    '%claim_decision%', 'claim_decision is inlined'
);
select unalike(
    pg_temp.plan_of($$select d.* from args as a, recording_finalize_internal.outcome_decision(
        a.t, a.t, a.t, a.i, a.i, a.at, a.d, a.d, a.at, a.b, a.i, a.i, a.i) as d$$),
    '%outcome_decision%', 'outcome_decision is inlined'
);
select unalike(
    pg_temp.plan_of($$select o.* from args as a, recording_finalize_internal.orphans(a.d) as o$$),
    '%orphans%', 'orphans is inlined'
);
select unalike(
    pg_temp.plan_of($$select r.* from args as a,
        recording_finalize_internal.active_recordings_after(a.t, a.u, a.i) as r$$),
    '%active_recordings_after%', 'active_recordings_after is inlined'
);
select unalike(
    pg_temp.plan_of($$select r.* from args as a,
        recording_finalize_internal.available_recordings_after(a.at, a.at, a.at, a.u, a.i) as r$$),
    '%available_recordings_after%', 'available_recordings_after is inlined'
);
select unalike(
    pg_temp.plan_of($$select r.* from args as a,
        recording_finalize_internal.recording_row(a.u) as r$$),
    '%recording_row%', 'recording_row is inlined'
);
select unalike(
    pg_temp.plan_of($$select s.* from args as a,
        recording_finalize_internal.session_row(a.t, a.u) as s$$),
    '%session_row%', 'session_row is inlined'
);
select unalike(
    pg_temp.plan_of($$select recording_finalize_internal.iso_utc(a.at) from args as a$$),
    '%iso_utc%', 'iso_utc is inlined'
);
select unalike(
    pg_temp.plan_of($$select recording_finalize_internal.mask_urls(a.t, a.i) from args as a$$),
    '%mask_urls%', 'mask_urls is inlined'
);
select unalike(
    pg_temp.plan_of($$select recording_finalize_internal.metadata_problem(a.t, a.i, a.i, a.t)
        from args as a$$),
    '%metadata_problem%', 'metadata_problem is inlined'
);

select * from finish();
rollback;
