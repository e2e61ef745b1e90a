-- The indexes of the product's tables: exactly these definitions (names fixed by the design
-- card: ux_rfa_recording, ix_rfa_due), and the rules the unique ones enforce, on real rows.
-- The service's indexes are the service's (_schema/visitor_manners.sql: the product adds none).
begin;
select plan(12);

-- The plan of a query, as text (a helper of this file only).
create function pg_temp.plan_of(p_sql text) returns setof text language plpgsql as $f$
begin
    return query execute 'explain (costs off) ' || p_sql;
end
$f$;

-- 1: every index of every product table, by its full definition (columns, INCLUDE, partial
-- predicate, uniqueness): a missing, extra or changed index fails here.
select set_eq(
    $$select pg_catalog.pg_get_indexdef(i.indexrelid)
    from pg_catalog.pg_index as i
    where i.indrelid in (
        'messenger.recording_finalize_attempts'::regclass,
        'recording_finalize.settings'::regclass, 'recording_finalize.storage_incidents'::regclass,
        'recording_finalize.operator_actions'::regclass, 'recording_finalize.pause'::regclass,
        'recording_finalize.relay_leases'::regclass, 'recording_finalize.outbox'::regclass,
        'recording_finalize_migrations.file_checksums'::regclass,
        'recording_finalize_migrations.migrate_state'::regclass)$$,
    $$values
        ('CREATE UNIQUE INDEX recording_finalize_attempts_pkey ON '
            || 'messenger.recording_finalize_attempts USING btree (id)'),
        ('CREATE UNIQUE INDEX ux_rfa_recording ON messenger.recording_finalize_attempts '
            || 'USING btree (recording_id)'),
        ('CREATE INDEX ix_rfa_due ON messenger.recording_finalize_attempts USING btree '
            || '(status, next_attempt_at) WHERE ((status)::text = ''Pending''::text)'),
        ('CREATE INDEX recording_finalize_attempts_pending_created_idx ON '
            || 'messenger.recording_finalize_attempts USING btree (created_at) '
            || 'INCLUDE (next_attempt_at) WHERE ((status)::text = ''Pending''::text)'),
        ('CREATE INDEX recording_finalize_attempts_quarantined_idx ON '
            || 'messenger.recording_finalize_attempts USING btree (updated_at, recording_id) '
            || 'WHERE ((status)::text = ''Quarantined''::text)'),
        ('CREATE INDEX recording_finalize_attempts_done_idx ON '
            || 'messenger.recording_finalize_attempts USING btree (updated_at) '
            || 'WHERE ((status)::text = ''Done''::text)'),
        ('CREATE UNIQUE INDEX settings_pkey ON recording_finalize.settings USING btree '
            || '(singleton)'),
        ('CREATE UNIQUE INDEX storage_incidents_pkey ON recording_finalize.storage_incidents '
            || 'USING btree (id)'),
        ('CREATE UNIQUE INDEX storage_incidents_one_open_uq ON '
            || 'recording_finalize.storage_incidents USING btree (source) '
            || 'WHERE (ended_at IS NULL)'),
        ('CREATE INDEX storage_incidents_ended_idx ON recording_finalize.storage_incidents '
            || 'USING btree (ended_at)'),
        ('CREATE UNIQUE INDEX operator_actions_pkey ON recording_finalize.operator_actions '
            || 'USING btree (id)'),
        ('CREATE INDEX operator_actions_recording_idx ON recording_finalize.operator_actions '
            || 'USING btree (recording_id, created_at) WHERE (recording_id IS NOT NULL)'),
        ('CREATE UNIQUE INDEX pause_pkey ON recording_finalize.pause USING btree (part)'),
        ('CREATE UNIQUE INDEX relay_leases_pkey ON recording_finalize.relay_leases '
            || 'USING btree (outbox_id)'),
        ('CREATE UNIQUE INDEX outbox_pkey ON recording_finalize.outbox USING btree (id)'),
        ('CREATE UNIQUE INDEX outbox_recording_uq ON recording_finalize.outbox '
            || 'USING btree (recording_id)'),
        ('CREATE INDEX outbox_unpublished_idx ON recording_finalize.outbox USING btree (id) '
            || 'WHERE (published_at IS NULL)'),
        ('CREATE INDEX outbox_published_idx ON recording_finalize.outbox '
            || 'USING btree (published_at) WHERE (published_at IS NOT NULL)'),
        ('CREATE UNIQUE INDEX file_checksums_pk ON recording_finalize_migrations.file_checksums '
            || 'USING btree (kind, file_name)'),
        ('CREATE UNIQUE INDEX migrate_state_pkey ON recording_finalize_migrations.migrate_state '
            || 'USING btree (singleton)')$$,
    'the product''s tables have exactly these indexes'
);

-- 2: the design card's names and columns (pgTAP's own view of them).
select has_index(
    'messenger', 'recording_finalize_attempts', 'ux_rfa_recording', array['recording_id'],
    'ux_rfa_recording indexes recording_id'
);
select has_index(
    'messenger', 'recording_finalize_attempts', 'ix_rfa_due', array['status', 'next_attempt_at'],
    'ix_rfa_due indexes (status, next_attempt_at)'
);
-- 1: every index is valid and ready (none left half-built by a failed CONCURRENTLY).
select is_empty(
    $$select i.indexrelid::regclass::text from pg_catalog.pg_index as i
    join pg_catalog.pg_class as c on c.oid = i.indrelid
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where (n.nspname like 'recording\_finalize%'
            or i.indrelid = 'messenger.recording_finalize_attempts'::regclass)
        and not (i.indisvalid and i.indisready and i.indislive)$$,
    'every index of the product is valid'
);

-- Behaviour.
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
