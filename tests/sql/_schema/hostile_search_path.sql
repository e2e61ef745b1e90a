-- The API cannot be hijacked through the caller's search_path: with a schema that shadows the
-- tables, the built-in functions and operators (=, ->>, ||, ~, +, >=) first in the path, and
-- temp tables that shadow the tables, every function still reads and writes the real tables -
-- the inlined helpers without a SET clause included (they are planned inside callers whose
-- search_path is pinned).
begin;
select plan(48);

select tests.clean_slate();
select tests.make_stuck() as found_rec \gset
select tests.make_stuck() as missing_rec \gset
select tests.make_stuck() as transient_rec \gset
select tests.make_stuck() as invalid_rec \gset
select tests.make_stuck() as config_rec \gset
select tests.make_stuck(p_status => 'Available') as republish_rec \gset
select tests.make_stuck(p_attempts => 8) as poison_rec \gset
select tests.make_stuck(p_attempts => 2, p_next_attempt_at => now() + interval '1 hour')
    as backoff_rec \gset
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as ingest_rec \gset
select tests.make_recording('Direct', tests.make_session(), 'Recording') as orphan_rec \gset
select tests.make_recording('Direct', tests.make_session(), 'Available') as unpublished_rec \gset
-- Its service's outbox keeps what it delivered: the recording above is a crash it explains.
select tests.make_remembering_service() is not null as remembering \gset
select tests.make_session('Conference', null) as live \gset
select gen_random_uuid() as started_rec \gset

-- The attacker's objects, in a schema every role may use: the SECURITY DEFINER functions run
-- as the owner, and a schema the owner cannot use would be skipped silently (no trap at all).
create schema rfr_evil;
grant usage on schema rfr_evil to public;
create table rfr_evil.call_recordings (like messenger.call_recordings);
create table rfr_evil.recording_finalize_attempts (like messenger.recording_finalize_attempts);
create table rfr_evil.integration_outbox (like messenger.integration_outbox);
create table rfr_evil.realtime_outbox (like messenger.realtime_outbox);
create table rfr_evil.call_sessions (like messenger.call_sessions);
create table rfr_evil.settings (like recording_finalize.settings);
create table rfr_evil.operator_actions (like recording_finalize.operator_actions);
create table rfr_evil.relay_leases (like recording_finalize.relay_leases);
create table rfr_evil.outbox (like recording_finalize.outbox);
create table rfr_evil.recordings as select * from recording_finalize_adapter.recordings limit 0;
create table rfr_evil.service_events as
select * from recording_finalize_adapter.service_events limit 0;
create temp table outbox (like recording_finalize.outbox);
create temp table call_recordings (like messenger.call_recordings);
create temp table recording_finalize_attempts (like messenger.recording_finalize_attempts);
create temp table settings (like recording_finalize.settings);
create function rfr_evil.hijacked(p_what text) returns boolean language plpgsql as $$
begin
    raise exception 'hijacked: %', p_what;
end
$$;
create function rfr_evil.now() returns timestamptz language sql
as $$ select '2000-01-01'::timestamptz where rfr_evil.hijacked('now()') $$;
create function rfr_evil.gen_random_uuid() returns uuid language sql
as $$ select null::uuid where rfr_evil.hijacked('gen_random_uuid()') $$;
create function rfr_evil.random() returns double precision language sql
as $$ select 0::double precision where rfr_evil.hijacked('random()') $$;
create function rfr_evil.left(text, integer) returns text language sql
as $$ select '' where rfr_evil.hijacked('left()') $$;
create function rfr_evil.regexp_replace(text, text, text, text) returns text language sql
as $$ select '' where rfr_evil.hijacked('regexp_replace()') $$;
create function rfr_evil.format(text, text) returns text language sql
as $$ select '' where rfr_evil.hijacked('format()') $$;
create function rfr_evil.btrim(text) returns text language sql
as $$ select '' where rfr_evil.hijacked('btrim()') $$;
create function rfr_evil.length(text) returns integer language sql
as $$ select 0 where rfr_evil.hijacked('length()') $$;
create function rfr_evil.to_char(timestamp, text) returns text language sql
as $$ select '' where rfr_evil.hijacked('to_char()') $$;
create function rfr_evil.power(double precision, double precision) returns double precision
language sql as $$ select 0::double precision where rfr_evil.hijacked('power()') $$;
create function rfr_evil.jsonb_build_object() returns jsonb language sql
as $$ select '{}'::jsonb where rfr_evil.hijacked('jsonb_build_object()') $$;
create function rfr_evil.make_interval(secs double precision) returns interval language sql
as $$ select interval '0' where rfr_evil.hijacked('make_interval()') $$;
create function rfr_evil.uuid_eq(uuid, uuid) returns boolean language sql
as $$ select rfr_evil.hijacked('= on uuid') $$;
create operator rfr_evil.= (leftarg = uuid, rightarg = uuid, function = rfr_evil.uuid_eq);
create function rfr_evil.text_eq(text, text) returns boolean language sql
as $$ select rfr_evil.hijacked('= on text') $$;
create operator rfr_evil.= (leftarg = text, rightarg = text, function = rfr_evil.text_eq);
create function rfr_evil.jsonb_field(jsonb, text) returns text language sql
as $$ select '' where rfr_evil.hijacked('->> on jsonb') $$;
create operator rfr_evil.->> (leftarg = jsonb, rightarg = text, function = rfr_evil.jsonb_field);
create function rfr_evil.text_cat(text, text) returns text language sql
as $$ select '' where rfr_evil.hijacked('|| on text') $$;
create operator rfr_evil.|| (leftarg = text, rightarg = text, function = rfr_evil.text_cat);
create function rfr_evil.text_match(text, text) returns boolean language sql
as $$ select rfr_evil.hijacked('~ on text') $$;
create operator rfr_evil.~ (leftarg = text, rightarg = text, function = rfr_evil.text_match);
create function rfr_evil.ts_plus(timestamptz, interval) returns timestamptz language sql
as $$ select null::timestamptz where rfr_evil.hijacked('+ on timestamptz') $$;
create operator rfr_evil.+ (leftarg = timestamptz, rightarg = interval,
    function = rfr_evil.ts_plus);
create function rfr_evil.int_ge(integer, integer) returns boolean language sql
as $$ select rfr_evil.hijacked('>= on integer') $$;
create operator rfr_evil.>= (leftarg = integer, rightarg = integer, function = rfr_evil.int_ge);

-- 3: the sanity check of the trap itself: unqualified names do resolve to the attacker.
select alike(
    tests.call_with_search_path('rfr_evil, pg_catalog', 'select now()'),
    '%hijacked: now()%',
    'the trap works: an unpinned now() would run the attacker''s function'
);
select alike(
    tests.call_with_search_path('rfr_evil, pg_catalog', $$select 'a'::text = 'a'::text$$),
    '%hijacked: = on text%',
    'the trap works: an unpinned = would run the attacker''s operator'
);
select alike(
    tests.call_with_search_path('rfr_evil, pg_catalog',
        $$select now() + interval '1 minute'$$),
    '%hijacked: %',
    'the trap works: an unpinned + on timestamptz would run the attacker''s operator'
);

\set hostile 'rfr_evil, pg_catalog, pg_temp'

-- 30: every API function, called under the hostile path; the stored policy with jitter (the
-- claim's random()) and a one-minute SLA (discovery below).
select recording_finalize.set_policy(p_sla_timeout => '1 minute') is not null as policy_set \gset
select is(
    tests.call_with_search_path(:'hostile', $$create temp table hostile_claim as
        select * from recording_finalize.claim_due(100)$$),
    null,
    'claim_due ignores the hostile search_path'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.apply_outcome(%L, %L, 'found', 'recordings/f', 1, 2, 'Ogg')$$,
        :'found_rec', (select claim_token from hostile_claim where recording_id = :'found_rec')
    )),
    null,
    'apply_outcome(found) ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.apply_outcome(%L, %L, 'missing')$$,
        :'missing_rec', (select claim_token from hostile_claim where recording_id = :'missing_rec')
    )),
    null,
    'apply_outcome(missing) ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.apply_outcome(%L, %L, 'transient',
            p_error => 'timeout at https://s3.example.com/k?sig=1')$$,
        :'transient_rec',
        (select claim_token from hostile_claim where recording_id = :'transient_rec')
    )),
    null,
    'apply_outcome(transient) ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.apply_outcome(%L, %L, 'invalid_metadata', p_error => 'x')$$,
        :'invalid_rec', (select claim_token from hostile_claim where recording_id = :'invalid_rec')
    )),
    null,
    'apply_outcome(invalid_metadata) ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.apply_outcome(%L, %L, 'config_error', p_error => 'x')$$,
        :'config_rec', (select claim_token from hostile_claim where recording_id = :'config_rec')
    )),
    null,
    'apply_outcome(config_error) ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.requeue(%L, 'hostile test')$$, :'poison_rec'
    )),
    null,
    'requeue ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.reschedule(array[%L]::uuid[], 'Pending', 'ann', 'retry now')$$,
        :'backoff_rec'
    )),
    null,
    'reschedule ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.recording_ingest_completed(%L, 'recordings/i', 3, 4, 'Mp4')$$,
        :'ingest_rec'
    )),
    null,
    'recording_ingest_completed ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.recording_started(%L, 'Conference', %L, 'Audio', 'Auto')$$,
        :'started_rec', :'live'
    )),
    null,
    'recording_started ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.recording_stopped(%L, interval '30 minutes')$$,
        :'started_rec'
    )),
    null,
    'recording_stopped ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.session_ended('Conference', %L, interval '30 minutes')$$,
        :'live'
    )),
    null,
    'session_ended ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', $$create temp table hostile_relay as
        select * from recording_finalize.relay_claim(10, interval '1 minute', 42)$$),
    null,
    'relay_claim ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select recording_finalize.relay_mark_published(%L::bigint[], %L::uuid)$$,
        (select array_agg(id) from hostile_relay),
        (select min(lease_token::text) from hostile_relay)
    )),
    null,
    'relay_mark_published ignores it'
);
select is(
    tests.call_with_search_path(:'hostile',
        $$select * from recording_finalize.quarantined_rows(10, 'invalid_metadata',
            pg_catalog.now())$$),
    null,
    'quarantined_rows ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', $$select recording_finalize.try_lock_runner(99),
        recording_finalize.unlock_runner(99)$$),
    null,
    'try_lock_runner and unlock_runner ignore it'
);
-- backoff_delay, like the other inlined helpers, is planned inside claim_due (above).
select is(
    tests.call_with_search_path(:'hostile', $$create temp table hostile_discovered as
        select recording_finalize.discover_stuck(10) as n$$),
    null,
    'discover_stuck ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', $$create temp table hostile_republish as
        select recording_finalize.discover_unpublished('1 day', 10) as n$$),
    null,
    'discover_unpublished ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', $$create temp table hostile_check as
        select * from recording_finalize.check_adapter()$$),
    null,
    'check_adapter ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$create temp table hostile_explain as select recording_finalize.explain(%L) as doc$$,
        :'backoff_rec'
    )),
    null,
    'explain ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', $$create temp table hostile_audit as
        select * from recording_finalize.audit('1 minute', 5, '1 day')$$),
    null,
    'audit ignores it'
);
select is(
    tests.call_with_search_path(:'hostile',
        $$select * from recording_finalize.audit_repair('ann', 10)$$),
    null,
    'audit_repair ignores it'
);
select is(
    tests.call_with_search_path(:'hostile',
        $$select * from recording_finalize.set_pause('relay', true, 'ann', 'hostile test')$$),
    null,
    'set_pause ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', $$create temp table hostile_state as
        select * from recording_finalize.operator_state()$$),
    null,
    'operator_state ignores it'
);
select is(
    tests.call_with_search_path(:'hostile',
        $$select * from recording_finalize.prune('1 day', 10, true)$$),
    null,
    'prune ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', $$create temp table hostile_policy as
        select recording_finalize.set_policy(p_max_attempts => 3,
            p_topic => 'pin.messenger.call-recording-available.v1') as p$$),
    null,
    'set_policy ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select * from recording_finalize.claim_preview(10),
            recording_finalize.preview_outcomes(%L::jsonb)$$,
        jsonb_build_array(jsonb_build_object('recording_id', :'backoff_rec',
            'outcome', 'missing'))
    )),
    null,
    'claim_preview and preview_outcomes ignore it'
);
select is(
    tests.call_with_search_path(:'hostile', $$select recording_finalize.storage_incident_open(
            'ops', 'hostile test', pg_catalog.now() operator(pg_catalog.-) interval '1 minute'),
        (select count(*) from recording_finalize.storage_incident_list()),
        recording_finalize.storage_incident_close('ops', pg_catalog.now(), 'over')$$),
    null,
    'storage_incident_open, _list and _close ignore it'
);
select is(
    tests.call_with_search_path(:'hostile', $$select recording_finalize.server_settings(),
        (select count(*) from recording_finalize.schema_state()),
        (select count(*) from recording_finalize.failed_recordings(10))$$),
    null,
    'server_settings, schema_state and failed_recordings ignore it'
);
select is(
    tests.call_with_search_path(:'hostile', $$select * from recording_finalize.release_claims(
        array[]::uuid[], array[]::uuid[])$$),
    null,
    'release_claims ignores it'
);

select is(
    tests.call_with_search_path(:'hostile', $$create temp table hostile_stats as
        select * from recording_finalize.stats()$$),
    null,
    'stats ignores it'
);

-- 12: the effects landed in the real tables, computed with the real built-ins.
select results_eq(
    format(
        $$select id::text, status from messenger.call_recordings
        where id in (%L, %L, %L, %L) order by status, id$$,
        :'found_rec', :'missing_rec', :'ingest_rec', :'republish_rec'
    ),
    format(
        $$select * from (values (%L, 'Available'::varchar), (%L, 'Available'), (%L, 'Available'),
            (%L, 'Failed')) as v order by 2, 1$$,
        :'found_rec', :'ingest_rec', :'republish_rec', :'missing_rec'
    ),
    'the real recordings moved'
);
select is(
    (select available_at from messenger.call_recordings where id = :'found_rec'), now(),
    'with the real now()'
);
select is(
    (select count(*) from recording_finalize.outbox where published_at = now()), 3::bigint,
    'three real events (found, ingest, republish) were enqueued in the product''s outbox and '
        || 'marked published'
);
select results_eq(
    format($$select opened_by from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'unpublished_rec'),
    $$values ('discovery'::varchar)$$,
    'discover_unpublished opened the real row of the Available recording without an event'
);
select is_empty(
    $$select port || ': ' || problem from hostile_check where severity = 'error'$$,
    'check_adapter found nothing wrong (a hijacked call inside it would be an error row)'
);
select is(
    (select last_error from messenger.recording_finalize_attempts
        where recording_id = :'transient_rec'),
    'Transient: timeout at <url>',
    'the real regexp_replace masked the URL'
);
select results_eq(
    format(
        $$select status, attempts, last_outcome, quarantine_reason
        from messenger.recording_finalize_attempts where recording_id = %L$$,
        :'poison_rec'
    ),
    $$values ('Pending'::varchar, 0, null::varchar, null::varchar)$$,
    'the poison row was quarantined by the claim and requeued, in the real table'
);
select results_eq(
    format($$select attempts, next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'backoff_rec'),
    $$values (2, now())$$,
    'the retried row is due now with its attempts kept'
);
select results_eq(
    format(
        $$select status from messenger.call_recordings where id = %L$$, :'started_rec'
    ),
    $$values ('Uploading'::varchar)$$,
    'the lifecycle calls wrote the real recording'
);
select results_eq(
    format($$select opened_by from messenger.recording_finalize_attempts
        where recording_id = %L$$, :'orphan_rec'),
    $$values ('discovery'::varchar)$$,
    'discover_stuck opened the real orphan''s row'
);
select is(
    (select backlog from hostile_stats), (select count(*) from messenger.recording_finalize_attempts
        where status = 'Pending'),
    'stats read the real table'
);
select results_eq(
    $$select (select relay_paused from hostile_state),
        (select count(*) from recording_finalize.operator_actions
            where operator_name = 'ann' and action_kind in ('pause', 'retry')),
        (select (p ->> 'max_attempts')::integer from hostile_policy)$$,
    $$values (true, 2::bigint, 3)$$,
    'the pause, the audit rows and the resolved policy are the real ones'
);
select is(
    (select (select count(*) from rfr_evil.call_recordings)
        + (select count(*) from rfr_evil.recording_finalize_attempts)
        + (select count(*) from rfr_evil.integration_outbox)
        + (select count(*) from rfr_evil.realtime_outbox)
        + (select count(*) from rfr_evil.call_sessions)
        + (select count(*) from rfr_evil.settings)
        + (select count(*) from rfr_evil.operator_actions)
        + (select count(*) from rfr_evil.relay_leases)
        + (select count(*) from rfr_evil.outbox)
        + (select count(*) from rfr_evil.recordings)
        + (select count(*) from rfr_evil.service_events)),
    0::bigint,
    'the attacker''s shadow tables were never written'
);
select is(
    (select (select count(*) from pg_temp.call_recordings)
        + (select count(*) from pg_temp.recording_finalize_attempts)
        + (select count(*) from pg_temp.settings)
        + (select count(*) from pg_temp.outbox)),
    0::bigint,
    'the temp shadow tables were never written'
);

select * from finish();
rollback;
