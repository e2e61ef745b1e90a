-- A visitor's manners (docs/contract/tables.md): in schema messenger the product owns the one
-- table recording_finalize_attempts and its indexes, and nothing else - no function, type,
-- trigger, sequence, view or rule; it adds nothing to the service's tables (no column, constraint,
-- index, trigger, comment, grant, storage parameter or policy); and none of its objects depends on
-- a service object in pg_depend (no function taking or returning a service table's row type, no
-- view, no foreign key) but the views of the adapter (schema recording_finalize_adapter,
-- docs/contract/adapter.md: the DBA's mapping, replaced when the service changes its tables), so
-- the service can alter or drop its tables as it pleases. The worker's functions name no service
-- table: they read and write the service's data only through the adapter's ports.
-- The test database's service tables come from sql/service/schema.sql (migrate
-- --create-service-tables): whatever differs from that reference here was added by the product.
begin;
select plan(19);

create temp table service_tables (name text);
insert into service_tables values ('call_sessions'), ('conference_sessions'),
    ('call_recordings'), ('integration_outbox'), ('realtime_outbox');
create temp table svc as
select c.oid, c.reltype, c.relname::text as name
from pg_catalog.pg_class as c
where c.relnamespace = 'messenger'::regnamespace
    and c.relname in (select name from service_tables);

-- 1: the fixture is what it says.
select is((select count(*) from svc), 5::bigint, 'the five service tables are there');

-- 5: every relation in schema messenger: the service's five tables, their indexes and identity
-- sequences from the reference DDL, and the product's one table with its indexes.
select set_eq(
    $$select c.relname::text, c.relkind::text from pg_catalog.pg_class as c
    where c.relnamespace = 'messenger'::regnamespace$$,
    $$values
        ('call_sessions', 'r'), ('call_sessions_pkey', 'i'),
        ('conference_sessions', 'r'), ('conference_sessions_pkey', 'i'),
        ('call_recordings', 'r'), ('call_recordings_pkey', 'i'), ('ix_recording_active', 'i'),
        ('call_recordings_available_at_idx', 'i'),
        ('integration_outbox', 'r'), ('integration_outbox_pkey', 'i'),
        ('integration_outbox_topic_dedupe_uq', 'i'), ('integration_outbox_id_seq', 'S'),
        ('realtime_outbox', 'r'), ('realtime_outbox_pkey', 'i'), ('realtime_outbox_id_seq', 'S'),
        ('recording_finalize_attempts', 'r'), ('recording_finalize_attempts_pkey', 'i'),
        ('ux_rfa_recording', 'i'), ('ix_rfa_due', 'i'),
        ('recording_finalize_attempts_pending_created_idx', 'i'),
        ('recording_finalize_attempts_quarantined_idx', 'i'),
        ('recording_finalize_attempts_done_idx', 'i')$$,
    'schema messenger holds the service''s relations and the product''s one table with its '
        || 'indexes: no view, sequence or other table of the product'
);
select is_empty(
    $$select c.oid::regclass::text from pg_catalog.pg_class as c
    where c.relnamespace = 'messenger'::regnamespace and c.relkind = 'S'
        and not exists (select from pg_catalog.pg_depend as d
            where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'i'
                and d.refobjid in (select oid from svc))$$,
    'every sequence in messenger is an identity sequence of a service table'
);
select is_empty(
    $$select p.oid::regprocedure::text from pg_catalog.pg_proc as p
    where p.pronamespace = 'messenger'::regnamespace$$,
    'no function or procedure in schema messenger'
);
select is_empty(
    $$select t.oid::regtype::text from pg_catalog.pg_type as t
    where t.typnamespace = 'messenger'::regnamespace
        and not exists (select from pg_catalog.pg_class as c
            where c.relnamespace = 'messenger'::regnamespace and c.relkind in ('r', 'p')
                and (c.reltype = t.oid or c.reltype = t.typelem))$$,
    'no type in schema messenger but the row types of its tables (and their arrays)'
);
select is_empty(
    $$select 'operator ' || o.oid::regoperator::text from pg_catalog.pg_operator as o
        where o.oprnamespace = 'messenger'::regnamespace
    union all select 'collation ' || c.collname from pg_catalog.pg_collation as c
        where c.collnamespace = 'messenger'::regnamespace
    union all select 'conversion ' || c.conname from pg_catalog.pg_conversion as c
        where c.connamespace = 'messenger'::regnamespace
    union all select 'opfamily ' || f.opfname from pg_catalog.pg_opfamily as f
        where f.opfnamespace = 'messenger'::regnamespace
    union all select 'statistics ' || s.stxname from pg_catalog.pg_statistic_ext as s
        where s.stxnamespace = 'messenger'::regnamespace
    union all select 'text search ' || c.cfgname from pg_catalog.pg_ts_config as c
        where c.cfgnamespace = 'messenger'::regnamespace$$,
    'no operator, collation, conversion, operator family, statistics or text search object '
        || 'in schema messenger'
);

-- 4: triggers, rules, policies, default privileges: none on any messenger table (the
-- product's own included) or on the schema.
select is_empty(
    $$select t.tgrelid::regclass::text || ': ' || t.tgname from pg_catalog.pg_trigger as t
    join pg_catalog.pg_class as c on c.oid = t.tgrelid
    where c.relnamespace = 'messenger'::regnamespace and not t.tgisinternal$$,
    'no trigger on any table of schema messenger'
);
select is_empty(
    $$select r.ev_class::regclass::text || ': ' || r.rulename from pg_catalog.pg_rewrite as r
    join pg_catalog.pg_class as c on c.oid = r.ev_class
    where c.relnamespace = 'messenger'::regnamespace$$,
    'no rule on any table of schema messenger'
);
select is_empty(
    $$select c.oid::regclass::text from pg_catalog.pg_class as c
    where c.relnamespace = 'messenger'::regnamespace and c.relkind = 'r'
        and (c.relrowsecurity or c.relforcerowsecurity
            or exists (select from pg_catalog.pg_policy as p where p.polrelid = c.oid))$$,
    'no row-level security or policy on any table of schema messenger'
);
select is_empty(
    $$select d.defaclrole::regrole::text || ' ' || d.defaclobjtype::text
    from pg_catalog.pg_default_acl as d
    where d.defaclnamespace = 'messenger'::regnamespace$$,
    'no default privileges on schema messenger (the service''s future objects are its own)'
);

-- 4: the service's tables are as the reference DDL made them: the same columns, constraints
-- and indexes, no comment, no grant.
select set_eq(
    $$select s.name || '.' || a.attname from svc as s
    join pg_catalog.pg_attribute as a on a.attrelid = s.oid and a.attnum > 0
        and not a.attisdropped$$,
    $$select 'call_sessions.' || c from unnest('{id,chat_id,deal_id,tenant_id,started_at,
        ended_at}'::text[]) as c
    union all select 'conference_sessions.' || c from unnest('{id,chat_id,deal_id,tenant_id,
        started_at,ended_at}'::text[]) as c
    union all select 'call_recordings.' || c from unnest('{id,session_kind,session_id,
        media_type,trigger,status,file_id,size_bytes,duration_seconds,format,failure_reason,
        started_at,ended_at,available_at,failed_at,version,created_at,updated_at}'::text[]) as c
    union all select 'integration_outbox.' || c from unnest('{id,topic,message_key,event_type,
        dedupe_key,payload,headers,created_at,published_at}'::text[]) as c
    union all select 'realtime_outbox.' || c from unnest('{id,kind,session_kind,session_id,
        reference_id,payload,created_at,dispatched_at}'::text[]) as c$$,
    'the product added no column to a service table (none dropped either)'
);
select set_eq(
    $$select s.name || '.' || c.conname from svc as s
    join pg_catalog.pg_constraint as c on c.conrelid = s.oid$$,
    $$values ('call_sessions.call_sessions_pkey'),
        ('call_sessions.call_sessions_ended_after_start_ck'),
        ('conference_sessions.conference_sessions_pkey'),
        ('conference_sessions.conference_sessions_ended_after_start_ck'),
        ('call_recordings.call_recordings_pkey'),
        ('call_recordings.call_recordings_session_kind_ck'),
        ('call_recordings.call_recordings_media_type_ck'),
        ('call_recordings.call_recordings_trigger_ck'),
        ('call_recordings.call_recordings_status_ck'),
        ('call_recordings.call_recordings_format_ck'),
        ('call_recordings.call_recordings_failure_reason_ck'),
        ('call_recordings.call_recordings_size_bytes_ck'),
        ('call_recordings.call_recordings_duration_seconds_ck'),
        ('call_recordings.call_recordings_version_ck'),
        ('call_recordings.call_recordings_file_id_not_url_ck'),
        ('call_recordings.call_recordings_available_complete_ck'),
        ('call_recordings.call_recordings_failed_complete_ck'),
        ('integration_outbox.integration_outbox_pkey'),
        ('integration_outbox.integration_outbox_topic_dedupe_uq'),
        ('realtime_outbox.realtime_outbox_pkey'),
        ('realtime_outbox.realtime_outbox_kind_ck'),
        ('realtime_outbox.realtime_outbox_session_kind_ck')$$,
    'the product added no constraint to a service table'
);
select is_empty(
    $$select d.classoid::regclass::text || ' ' || d.objoid || '/' || d.objsubid
    from pg_catalog.pg_description as d
    where (d.classoid = 'pg_class'::regclass and (d.objoid in (select oid from svc)
            or d.objoid in (select i.indexrelid from pg_catalog.pg_index as i
                where i.indrelid in (select oid from svc))))
        or (d.classoid = 'pg_constraint'::regclass and d.objoid in (
            select c.oid from pg_catalog.pg_constraint as c
            where c.conrelid in (select oid from svc)))
        or (d.classoid = 'pg_namespace'::regclass
            and d.objoid = 'messenger'::regnamespace)$$,
    'no COMMENT on a service table, column, index, constraint or on schema messenger'
);
select is_empty(
    $$select c.oid::regclass::text || ' ' || c.relacl::text from pg_catalog.pg_class as c
    where c.relnamespace = 'messenger'::regnamespace and c.relacl is not null
    union all
    select 'schema messenger ' || n.nspacl::text from pg_catalog.pg_namespace as n
    where n.nspname = 'messenger' and n.nspacl is not null$$,
    'no GRANT or REVOKE on a relation of schema messenger, or on the schema'
);

-- 5: dependencies. Nothing outside the service's own tables (their constraints, defaults,
-- indexes, toast, identity sequences, array types) and the adapter's views depends on a service
-- table or its row type.
select is_empty(
    $$select pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) || ' -> '
        || pg_catalog.pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)
    from pg_catalog.pg_depend as d
    where ((d.refclassid = 'pg_class'::regclass and d.refobjid in (select oid from svc))
            or (d.refclassid = 'pg_type'::regclass and d.refobjid in (select reltype from svc)))
        and not (d.classid = 'pg_class'::regclass and d.objid in (select oid from svc))
        and not (d.classid = 'pg_type'::regclass and d.objid in (select reltype from svc))
        and not (d.classid = 'pg_constraint'::regclass and d.objid in (
            select c.oid from pg_catalog.pg_constraint as c
            where c.conrelid in (select oid from svc) and c.contype <> 'f'))
        and not (d.classid = 'pg_attrdef'::regclass and d.objid in (
            select a.oid from pg_catalog.pg_attrdef as a where a.adrelid in (select oid from svc)))
        and not (d.classid = 'pg_class'::regclass and d.objid in (
            select c.oid from pg_catalog.pg_class as c
            where c.relname in ('call_sessions_pkey', 'conference_sessions_pkey',
                    'call_recordings_pkey', 'ix_recording_active', 'call_recordings_available_at_idx',
                    'integration_outbox_pkey',
                    'integration_outbox_topic_dedupe_uq', 'realtime_outbox_pkey',
                    'integration_outbox_id_seq', 'realtime_outbox_id_seq')
                and c.relnamespace = 'messenger'::regnamespace
            union all
            select c.reltoastrelid from pg_catalog.pg_class as c
            where c.oid in (select oid from svc)))
        and not (d.classid = 'pg_type'::regclass and d.objid in (
            select t.oid from pg_catalog.pg_type as t
            where t.typelem in (select reltype from svc)))
        and not (d.classid = 'pg_rewrite'::regclass and d.objid in (
            select w.oid from pg_catalog.pg_rewrite as w
            join pg_catalog.pg_class as v on v.oid = w.ev_class
            where v.relkind = 'v'
                and v.relnamespace = 'recording_finalize_adapter'::regnamespace))$$,
    'no object of the product but the adapter''s views depends on a service table or its row '
        || 'type'
);
select is_empty(
    $$select p.oid::regprocedure::text from pg_catalog.pg_proc as p
    where p.prorettype in (select reltype from svc)
        or p.proargtypes::oid[] && array(select reltype from svc)
        or coalesce(p.proallargtypes, array[]::oid[]) && array(select reltype from svc)$$,
    'no function anywhere takes or returns a service table''s row type'
);
select is_empty(
    $$select t.oid::regtype::text || '.' || a.attname from pg_catalog.pg_type as t
    join pg_catalog.pg_attribute as a on a.attrelid = t.typrelid
    where t.typnamespace in ('recording_finalize'::regnamespace,
            'recording_finalize_internal'::regnamespace)
        and (a.atttypid in (select reltype from svc)
            or a.atttypid in (select t2.oid from pg_catalog.pg_type as t2
                where t2.typelem in (select reltype from svc)))$$,
    'no type or table of the product has a column of a service row type'
);
select is_empty(
    $$select p.oid::regprocedure::text from pg_catalog.pg_proc as p
    where p.pronamespace in ('recording_finalize'::regnamespace,
            'recording_finalize_internal'::regnamespace)
        and p.prosrc ~* ('messenger\.(' || (select string_agg(name, '|') from service_tables)
            || ')\s*%\s*rowtype')$$,
    'no PL/pgSQL variable of a service table''s %ROWTYPE (the product reads them as its own '
        || 'types: recording_finalize_internal.recording, .session)'
);

-- The worker's functions reach the service's data only through the adapter's ports: no body
-- in the product's schemas names a service table, but the service-facing lifecycle functions
-- (an option of the reference schema) and the session lock they take.
select is_empty(
    $$select p.oid::regprocedure::text from pg_catalog.pg_proc as p
    where p.pronamespace in ('recording_finalize'::regnamespace,
            'recording_finalize_internal'::regnamespace)
        and p.proname not in ('recording_started', 'recording_stopped', 'session_ended',
            'session_of')
        and p.prosrc ~* ('messenger\.(' || (select string_agg(name, '|') from service_tables)
            || ')\M')$$,
    'no function of the worker''s path names a service table (only the adapter''s ports)'
);

select * from finish();
rollback;
