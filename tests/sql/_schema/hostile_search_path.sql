-- The API cannot be hijacked through the caller's search_path: with a schema that shadows the
-- tables, the built-in functions and the = operator first in the path, and temp tables that
-- shadow the tables, every function still reads and writes the real messenger tables.
begin;
select plan(28);

select tests.clean_slate();
select tests.make_stuck() as found_rec \gset
select tests.make_stuck() as missing_rec \gset
select tests.make_stuck() as transient_rec \gset
select tests.make_stuck() as invalid_rec \gset
select tests.make_stuck() as config_rec \gset
select tests.make_stuck(p_status => 'Available') as republish_rec \gset
select tests.make_stuck(p_attempts => 8) as poison_rec \gset
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as ingest_rec \gset
select tests.make_session('Conference', null) as live \gset
select gen_random_uuid() as started_rec \gset

-- The attacker's objects.
create schema rfr_evil;
create table rfr_evil.call_recordings (like messenger.call_recordings);
create table rfr_evil.recording_finalize_attempts (like messenger.recording_finalize_attempts);
create table rfr_evil.integration_outbox (like messenger.integration_outbox);
create table rfr_evil.realtime_outbox (like messenger.realtime_outbox);
create table rfr_evil.call_sessions (like messenger.call_sessions);
create temp table call_recordings (like messenger.call_recordings);
create temp table recording_finalize_attempts (like messenger.recording_finalize_attempts);
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
create function rfr_evil.ln(double precision) returns double precision language sql
as $$ select 0::double precision where rfr_evil.hijacked('ln()') $$;
create function rfr_evil.jsonb_build_object() returns jsonb language sql
as $$ select '{}'::jsonb where rfr_evil.hijacked('jsonb_build_object()') $$;
create function rfr_evil.uuid_eq(uuid, uuid) returns boolean language sql
as $$ select rfr_evil.hijacked('= on uuid') $$;
create operator rfr_evil.= (leftarg = uuid, rightarg = uuid, function = rfr_evil.uuid_eq);
create function rfr_evil.text_eq(text, text) returns boolean language sql
as $$ select rfr_evil.hijacked('= on text') $$;
create operator rfr_evil.= (leftarg = text, rightarg = text, function = rfr_evil.text_eq);

-- The sanity check of the trap itself: unqualified names do resolve to the attacker.
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

\set hostile 'rfr_evil, pg_catalog, pg_temp'

select is(
    tests.call_with_search_path(:'hostile', $$create temp table hostile_claim as
        select * from recording_finalize.claim_due(p_backoff_jitter => 0.1)$$),
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
        $$select recording_finalize.requeue(%L)$$, :'poison_rec'
    )),
    null,
    'requeue ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select messenger.recording_ingest_completed(%L, 'recordings/i', 3, 4, 'Mp4')$$,
        :'ingest_rec'
    )),
    null,
    'recording_ingest_completed ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select messenger.recording_started(%L, 'Conference', %L, 'Audio', 'Auto')$$,
        :'started_rec', :'live'
    )),
    null,
    'recording_started ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select messenger.recording_stopped(%L, interval '30 minutes')$$, :'started_rec'
    )),
    null,
    'recording_stopped ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', format(
        $$select messenger.session_ended('Conference', %L, interval '30 minutes')$$, :'live'
    )),
    null,
    'session_ended ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', $$create temp table hostile_relay as
        select * from recording_finalize.relay_claim(10)$$),
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
    tests.call_with_search_path(:'hostile', $$create temp table hostile_stats as
        select * from recording_finalize.stats()$$),
    null,
    'stats ignores it'
);
select is(
    tests.call_with_search_path(
        :'hostile', $$select * from recording_finalize.quarantined_rows()$$
    ),
    null,
    'quarantined_rows ignores it'
);
select is(
    tests.call_with_search_path(:'hostile', $$select recording_finalize.try_lock_runner(99),
        recording_finalize.unlock_runner(99)$$),
    null,
    'try_lock_runner and unlock_runner ignore it'
);
select is(
    tests.call_with_search_path(:'hostile', $$select recording_finalize.backoff_delay(3,
        '1 minute', 2.0, '15 minutes', 0.5)$$),
    null,
    'backoff_delay ignores it'
);

-- The effects landed in the real tables, computed with the real built-ins.
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
    (select count(*) from messenger.integration_outbox where published_at = now()), 3::bigint,
    'three real events (found, ingest, republish) were enqueued and marked published'
);
select is(
    (select last_error from messenger.recording_finalize_attempts
        where recording_id = :'transient_rec'),
    'Transient: timeout at <url>',
    'the real regexp_replace masked the URL'
);
select results_eq(
    format(
        $$select status, attempts from messenger.recording_finalize_attempts
        where recording_id = %L$$,
        :'poison_rec'
    ),
    $$values ('Pending'::varchar, 0)$$,
    'the poison row was quarantined by the claim and requeued, in the real table'
);
select results_eq(
    format(
        $$select status from messenger.call_recordings where id = %L$$, :'started_rec'
    ),
    $$values ('Uploading'::varchar)$$,
    'the lifecycle calls wrote the real recording'
);
select is(
    (select backlog from hostile_stats), (select count(*) from messenger.recording_finalize_attempts
        where status = 'Pending'),
    'stats read the real table'
);
select is(
    (select (select count(*) from rfr_evil.call_recordings)
        + (select count(*) from rfr_evil.recording_finalize_attempts)
        + (select count(*) from rfr_evil.integration_outbox)
        + (select count(*) from rfr_evil.realtime_outbox)
        + (select count(*) from rfr_evil.call_sessions)),
    0::bigint,
    'the attacker''s shadow tables were never written'
);
select is(
    (select (select count(*) from pg_temp.call_recordings)
        + (select count(*) from pg_temp.recording_finalize_attempts)),
    0::bigint,
    'the temp shadow tables were never written'
);

select * from finish();
rollback;
