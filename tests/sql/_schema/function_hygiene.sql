-- Every function of both schemas is documented and pins search_path; the API ones run as
-- their owner (SECURITY DEFINER), the internal helpers do not.
begin;
select plan(8);

create temp table product_functions as
select p.oid, replace(p.oid::regprocedure::text, ', ', ',') as fn, p.prosecdef, p.proconfig,
    p.provolatile, obj_description(p.oid, 'pg_proc') as comment
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
where n.nspname in ('messenger', 'recording_finalize');

select cmp_ok(
    (select count(*) from product_functions), '>=', 19::bigint,
    'the check sees the product''s functions'
);
select is_empty(
    $$select fn from product_functions where coalesce(btrim(comment), '') = ''$$,
    'every function has a COMMENT ON (its contract)'
);
select is_empty(
    $$select fn from product_functions
    where proconfig is null or not ('search_path=""' = any(proconfig))$$,
    'every function pins search_path to the empty string'
);
select set_eq(
    'select fn from product_functions where prosecdef',
    $$values
        ('recording_finalize.claim_due(integer,integer,interval,interval,double precision,'
            || 'interval,double precision,text)'),
        ('recording_finalize.apply_outcome(uuid,uuid,text,text,bigint,integer,text,text,'
            || 'integer,text,interval)'),
        ('recording_finalize.storage_incident_open(text,text,timestamp with time zone)'),
        ('recording_finalize.storage_incident_close(text,timestamp with time zone,text)'),
        ('recording_finalize.storage_incident_list(interval,integer)'),
        ('recording_finalize.relay_claim(integer,interval,text)'),
        ('recording_finalize.relay_mark_published(bigint[],uuid)'),
        ('recording_finalize.server_settings()'),
        ('recording_finalize.server_bounds()'),
        ('recording_finalize.try_lock_runner(bigint)'),
        ('recording_finalize.unlock_runner(bigint)'),
        ('recording_finalize.stats(text)'),
        ('recording_finalize.quarantined_rows(integer)'),
        ('recording_finalize.requeue(uuid)'),
        ('recording_finalize.schema_state()'),
        ('messenger.recording_started(uuid,text,uuid,text,text)'),
        ('messenger.recording_stopped(uuid,interval)'),
        ('messenger.session_ended(text,uuid,interval)'),
        ('messenger.recording_ingest_completed(uuid,text,bigint,integer,text,text)'),
        -- the operator toolkit (0010) and the trigger that writes the pruned-event marker
        ('recording_finalize.explain(uuid,integer,interval,text)'),
        ('recording_finalize.audit(interval,interval,integer,text)'),
        ('recording_finalize.audit_repair(text,interval,integer)'),
        ('recording_finalize.failed_recordings(integer)'),
        ('recording_finalize.claim_preview(integer,integer,interval,text)'),
        ('recording_finalize.operator_requeue(uuid,text,text)'),
        ('recording_finalize.operator_requeue_quarantined(text,text,text,'
            || 'timestamp with time zone,integer,boolean)'),
        ('recording_finalize.operator_retry(uuid,text,text)'),
        ('recording_finalize.set_pause(text,boolean,text,text)'),
        ('recording_finalize.operator_state()'),
        ('recording_finalize.prune(interval,integer,boolean,text)'),
        ('messenger.integration_outbox_pruned_marker()')$$,
    'exactly the API and lifecycle functions are SECURITY DEFINER'
);
select is_empty(
    $$select fn from product_functions
    where prosecdef and (proconfig is null or not ('search_path=""' = any(proconfig)))$$,
    'no SECURITY DEFINER function without a pinned search_path'
);
select results_eq(
    $$select fn, provolatile::text from product_functions
    where fn in ('recording_finalize.stats(text)',
        'recording_finalize.iso_utc(timestamp with time zone)',
        'recording_finalize.quarantined_rows(integer)',
        'recording_finalize.storage_incident_list(interval,integer)',
        'recording_finalize.check_upload_grace(interval)',
        'recording_finalize.storage_incident_check_caller(text,timestamp with time zone,text)',
        'recording_finalize.upload_deferral(uuid,interval,timestamp with time zone)')
    order by fn$$,
    -- iso_utc is STABLE: it calls to_char(), which is STABLE (issue 9, finding 7).
    $$values ('recording_finalize.check_upload_grace(interval)', 's'),
        ('recording_finalize.iso_utc(timestamp with time zone)', 's'),
        ('recording_finalize.quarantined_rows(integer)', 's'),
        ('recording_finalize.stats(text)', 's'),
        ('recording_finalize.storage_incident_check_caller(text,timestamp with time zone,text)',
            's'),
        ('recording_finalize.storage_incident_list(interval,integer)', 's'),
        ('recording_finalize.upload_deferral(uuid,interval,timestamp with time zone)', 's')$$,
    'the read-only functions declare their volatility'
);
select is_empty(
    $$select fn from product_functions
    where provolatile <> 'v'
        and fn not in ('recording_finalize.stats(text)',
            'recording_finalize.iso_utc(timestamp with time zone)',
            'recording_finalize.quarantined_rows(integer)',
            'recording_finalize.server_settings()',
            'recording_finalize.server_bounds()',
            'recording_finalize.our_topic(text)',
            'recording_finalize.check_policy(integer,interval,interval,double precision,'
                || 'interval,double precision)',
            -- the operator toolkit's read-only functions (0010)
            'recording_finalize.explain(uuid,integer,interval,text)',
            'recording_finalize.audit(interval,interval,integer,text)',
            'recording_finalize.failed_recordings(integer)',
            'recording_finalize.claim_preview(integer,integer,interval,text)',
            'recording_finalize.predict_action(uuid,integer,interval,text)',
            'recording_finalize.operator_state()',
            'recording_finalize.storage_incident_list(interval,integer)',
            'recording_finalize.storage_incident_check_caller(text,timestamp with time zone,'
                || 'text)',
            'recording_finalize.upload_deferral(uuid,interval,timestamp with time zone)',
            'recording_finalize.function_fingerprint(text)',
            'recording_finalize.check_upload_grace(interval)',
            'recording_finalize.schema_state()')$$,
    'every function that writes (or draws random numbers) is VOLATILE'
);
select is(
    (select count(*) from pg_catalog.pg_trigger
        where tgrelid = 'messenger.call_recordings'::regclass and not tgisinternal
            and tgfoid = 'messenger.call_recordings_terminal_guard()'::regprocedure
            and tgenabled = 'O'),
    1::bigint,
    'the terminal guard trigger is installed and enabled'
);

select * from finish();
rollback;
