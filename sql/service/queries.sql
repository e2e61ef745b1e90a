-- The queries the contract check, the adapter's and uninstall's and migrate's bookkeeping send,
-- each after its "-- name:" line (driver/drift.py's query() reads them; %s are psycopg's
-- parameters).

-- name: table_columns
-- Each table's oid, and its columns (none: a table without columns).
select c.relname, c.oid::bigint, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
    case when a.atttypid = 'pg_catalog.varchar'::pg_catalog.regtype and a.atttypmod > 4
        then a.atttypmod - 4 end
from pg_catalog.pg_class as c
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
left join pg_catalog.pg_attribute as a
    on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
where n.nspname = %s and c.relkind in ('r', 'p') and c.relname = any(%s);

-- name: unique_index
-- The columns of a unique index, if it is one an ON CONFLICT can use as its arbiter (not
-- deferrable, no expression column).
select array(
    select a.attname::text from pg_catalog.unnest(x.indkey) with ordinality as k (attnum, o)
    join pg_catalog.pg_attribute as a on a.attrelid = t.oid and a.attnum = k.attnum
    order by k.o)
from pg_catalog.pg_index as x
join pg_catalog.pg_class as i on i.oid = x.indexrelid
join pg_catalog.pg_class as t on t.oid = x.indrelid
join pg_catalog.pg_namespace as n on n.oid = t.relnamespace
where n.nspname = %s and t.relname = %s and i.relname = %s and x.indisunique and x.indisvalid
    and x.indimmediate and x.indexprs is null;

-- name: role_privileges
select r.rolcreaterole or r.rolsuper,
    pg_catalog.has_database_privilege(r.oid, pg_catalog.current_database(), 'CONNECT'),
    pg_catalog.has_database_privilege(r.oid, pg_catalog.current_database(), 'CREATE'),
    n.oid is not null,
    coalesce(pg_catalog.has_schema_privilege(r.oid, n.oid, 'USAGE'), false),
    coalesce(pg_catalog.has_schema_privilege(r.oid, n.oid, 'CREATE'), false)
from pg_catalog.pg_roles as r
left join pg_catalog.pg_namespace as n on n.nspname = %s
where r.rolname = %s;

-- name: owners
-- The owner of each of the product's schemas and of its table in the service's schema.
select n.nspname::text, pg_catalog.pg_get_userbyid(n.nspowner)
from pg_catalog.pg_namespace as n where n.nspname = any(%(schemas)s)
union all
select n.nspname || '.' || c.relname, pg_catalog.pg_get_userbyid(c.relowner)
from pg_catalog.pg_class as c
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
where n.nspname = %(schema)s and c.relname = %(table)s and c.relkind in ('r', 'p')
order by 1;

-- name: group_roles
select rolname from pg_catalog.pg_roles where rolname = any(%s);

-- name: default_sequences
-- The sequences behind column defaults (a serial or bigserial key; an identity column has no
-- default and needs no privilege): the table, the column, the sequence, and whether the role
-- may call nextval() on it.
select c.relname, a.attname, pg_catalog.quote_ident(sn.nspname) || '.'
        || pg_catalog.quote_ident(s.relname),
    pg_catalog.has_sequence_privilege(%s::name, s.oid, 'USAGE')
from pg_catalog.pg_attrdef as d
join pg_catalog.pg_class as c on c.oid = d.adrelid
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
join pg_catalog.pg_attribute as a on a.attrelid = d.adrelid and a.attnum = d.adnum
join pg_catalog.pg_depend as p on p.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass
    and p.objid = d.oid and p.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
join pg_catalog.pg_class as s on s.oid = p.refobjid and s.relkind = 'S'
join pg_catalog.pg_namespace as sn on sn.oid = s.relnamespace
where n.nspname = %s and c.relname = any(%s) and not a.attisdropped;

-- name: lacking_column_privileges
-- The column privileges asked that the role lacks, in the order asked.
select x.t, x.c, x.p
from unnest(%s::bigint[], %s::text[], %s::text[]) with ordinality as x (t, c, p, o)
where not pg_catalog.has_column_privilege(%s::name, x.t::oid, x.c, x.p)
order by x.o;

-- name: adapter_state
select pg_catalog.to_regnamespace('recording_finalize_adapter') is not null,
    pg_catalog.to_regprocedure('recording_finalize.schema_state()') is not null;

-- name: adapter_fingerprints
-- The adapter's fingerprint as migrate recorded it (NULL: a DBA's) and as it is now.
select recorded_md5, live_md5 from recording_finalize.schema_state() where kind = 'adapter';

-- name: view_columns
select c.relname, a.attname, pg_catalog.format_type(a.atttypid, null)
from pg_catalog.pg_class as c
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
join pg_catalog.pg_attribute as a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
where n.nspname = %s and c.relkind in ('v', 'm', 'r', 'p');

-- name: function_signatures
select p.proname, array(select pg_catalog.format_type(t, null)
                        from pg_catalog.unnest(p.proargtypes) as t),
    pg_catalog.format_type(p.prorettype, null), p.proretset
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
where n.nspname = %s and p.prokind = 'f';

-- name: check_adapter
select severity, port, problem, fix from recording_finalize.check_adapter(%s);

-- name: service_events_unpublished
-- The service's events that are not published yet, as the adapter shows them.
select count(*) from recording_finalize_adapter.service_events where published_at is null;

-- name: current_role_and_database
select current_user::text, pg_catalog.current_database()::text;

-- name: dependents
-- Objects of someone else that depend on the product's (a view over its table, a function whose
-- type is the product's...): DROP ... CASCADE would take them along, so uninstall refuses. The
-- product table's own indexes, constraints and defaults are its parts, not dependents.
with ours as (
    select n.oid from pg_catalog.pg_namespace as n where n.nspname = any(%(schemas)s)
),
targets as (
    select 'pg_catalog.pg_class'::pg_catalog.regclass as classid, c.oid
    from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.oid in (select oid from ours) or (n.nspname = %(schema)s and c.relname = %(table)s)
    union all
    select 'pg_catalog.pg_proc'::pg_catalog.regclass, p.oid from pg_catalog.pg_proc as p
    where p.pronamespace in (select oid from ours)
    union all
    select 'pg_catalog.pg_type'::pg_catalog.regclass, t.oid from pg_catalog.pg_type as t
    where t.typnamespace in (select oid from ours)
)
select distinct o.type || ' ' || o.identity
from pg_catalog.pg_depend as d
join targets as t on t.classid = d.refclassid and t.oid = d.refobjid
-- A view depends through its rewrite rule ("_RETURN"): name the view, as its owner knows it.
left join pg_catalog.pg_rewrite as r on d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
    and r.oid = d.objid and r.rulename = '_RETURN'
cross join lateral pg_catalog.pg_identify_object(
    case when r.oid is null then d.classid else 'pg_catalog.pg_class'::pg_catalog.regclass end,
    coalesce(r.ev_class, d.objid), case when r.oid is null then d.objsubid else 0 end) as o
where d.deptype in ('n', 'a')
    and (o.schema is null or o.schema <> all(%(schemas)s))
    and not exists (
        -- parts of the product's own tables (indexes, constraints, defaults, triggers)
        select from targets as mine
        where mine.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
            and mine.oid = case d.classid
                when 'pg_catalog.pg_class'::pg_catalog.regclass then (
                    select x.indrelid from pg_catalog.pg_index as x where x.indexrelid = d.objid)
                when 'pg_catalog.pg_constraint'::pg_catalog.regclass then (
                    select k.conrelid from pg_catalog.pg_constraint as k where k.oid = d.objid)
                when 'pg_catalog.pg_attrdef'::pg_catalog.regclass then (
                    select a.adrelid from pg_catalog.pg_attrdef as a where a.oid = d.objid)
                when 'pg_catalog.pg_trigger'::pg_catalog.regclass then (
                    select g.tgrelid from pg_catalog.pg_trigger as g where g.oid = d.objid)
            end
    )
order by 1;

-- name: rollback_try_runner_lock
-- rollback holds the worker's single-runner lock (and migrate's) while it runs: no cycle starts.
select pg_catalog.pg_try_advisory_lock(%s);

-- name: rollback_runner_unlock
select pg_catalog.pg_advisory_unlock(%s);

-- name: rollback_worker_sessions
-- Other sessions of logins granted the worker's group role (not superusers, not this session):
-- a worker still running, which rollback refuses to pull its functions from under.
select a.pid, a.usename::text, coalesce(a.application_name, ''), a.client_addr::text
from pg_catalog.pg_stat_activity as a
join pg_catalog.pg_roles as r on r.oid = a.usesysid
where a.pid <> pg_catalog.pg_backend_pid() and a.datname = pg_catalog.current_database()
    and not r.rolsuper
    and pg_catalog.pg_has_role(r.oid, 'recording_finalize_worker', 'MEMBER')
order by a.pid;

-- name: rollback_product_functions
-- Every function of the product's two function schemas, as DROP FUNCTION names it, with the
-- file that defines it (sql/functions/<schema>.<name>.sql).
select p.oid::pg_catalog.regprocedure::text, n.nspname || '.' || p.proname || '.sql'
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
where n.nspname in ('recording_finalize', 'recording_finalize_internal')
order by 2, 1;

-- name: rollback_forget_migration
-- A migration whose down step ran: yoyo no longer counts it applied (logged as yoyo logs its
-- own rollbacks), and its checksum goes. One statement.
with gone as (
    delete from recording_finalize_migrations._yoyo_migration
    where migration_id = %(id)s
    returning migration_hash, migration_id
),
logged as (
    insert into recording_finalize_migrations._yoyo_log (id, migration_hash, migration_id,
        operation, username, hostname, comment, created_at_utc)
    select pg_catalog.gen_random_uuid()::text, g.migration_hash, g.migration_id, 'rollback',
        current_user, coalesce(pg_catalog.inet_client_addr()::text, 'local'),
        'recording-finalize rollback', pg_catalog.timezone('UTC', pg_catalog.now())
    from gone as g
    returning 1
)
delete from recording_finalize_migrations.file_checksums
where kind = 'migration' and file_name = %(id)s;

-- name: rollback_restore_checksum
-- A migration both releases ship, recorded with the newer package's amended text: the target's
-- migrate compares with its own text.
update recording_finalize_migrations.file_checksums
set sha256 = %s
where kind = 'migration' and file_name = %s;

-- name: rollback_restore_adapter
-- The reference adapter, installed from this package's text of the target's statements: the
-- target's migrate finds its own text recorded and leaves the adapter as it is.
update recording_finalize_migrations.migrate_state
set adapter_sha256 = %s
where adapter_sha256 is not null;

-- name: rollback_forget_functions
-- The records of the function files whose functions rollback dropped: the older migrate then
-- sees them "never applied" and creates them.
delete from recording_finalize_migrations.file_checksums
where kind = 'function' and file_name = any(%s::text[]);

-- name: rollback_record_state
-- The database as the target release's migrate leaves it: its schema version and version.
update recording_finalize_migrations.migrate_state
set schema_version = %s, package_version = %s, migrated_at = pg_catalog.now();

-- name: rollback_kept
-- What the rollback keeps, to say so: the product's events (published or not), finalize rows.
select (select count(*) from recording_finalize.outbox),
    (select count(*) from recording_finalize.outbox where published_at is not null),
    (select count(*) from messenger.recording_finalize_attempts);

-- name: rollback_may_create_database
-- Whether the login (the product's owner) holds CREATE on the database now, to say what the
-- target release's migrate needs when it asks for it on every run (0.4.1's does).
select pg_catalog.current_database(), current_user,
    pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE');

-- name: try_migrate_lock
-- Held by migrate for its whole run (a session lock on its own connection; never waits).
select pg_catalog.pg_try_advisory_lock(%s);

-- name: migrate_unlock
select pg_catalog.pg_advisory_unlock(%s);

-- name: schema_exists
select pg_catalog.to_regnamespace(%s) is not null;

-- name: create_migrations_schema
-- Only when missing (migrate looks first: CREATE on the database is an install's privilege).
create schema recording_finalize_migrations;
comment on schema recording_finalize_migrations is
'Bookkeeping of recording-finalize migrate: yoyo-migrations'' tables and the checksums of the '
'applied files. Owner only; the worker reads it through recording_finalize.schema_state().';

-- name: migrate_timeouts
-- A file is applied in its own transaction under these (set local: per transaction).
select pg_catalog.set_config('lock_timeout', %s, true),
    pg_catalog.set_config('statement_timeout', %s, true);

-- name: record_migrations
-- The checksum of each migration the package ships, once yoyo has applied them all; a record
-- already there is kept (it is what the check for a changed applied migration compares with).
insert into recording_finalize_migrations.file_checksums (kind, file_name, sha256,
    package_version)
select 'migration', f, sha, %s::text
from unnest(%s::text[], %s::text[]) as x (f, sha)
on conflict (kind, file_name) do nothing;

-- name: record_amended_migration
-- An applied migration amended since (driver/drift.py's AMENDED_MIGRATIONS): the file's sha256
-- now replaces the earlier one it was applied with.
update recording_finalize_migrations.file_checksums
set sha256 = %s, package_version = %s
where kind = 'migration' and file_name = %s and sha256 = any(%s::text[]);

-- name: record_function
insert into recording_finalize_migrations.file_checksums (kind, file_name, sha256,
    definition_md5, package_version, recorded_at)
values ('function', %(file)s, %(sha256)s,
    recording_finalize_internal.function_fingerprint(%(file)s), %(version)s, now())
on conflict (kind, file_name) do update set
    sha256 = excluded.sha256, definition_md5 = excluded.definition_md5,
    package_version = excluded.package_version, recorded_at = excluded.recorded_at
where (file_checksums.sha256, file_checksums.definition_md5)
    is distinct from (excluded.sha256, excluded.definition_md5);

-- name: forget_functions
delete from recording_finalize_migrations.file_checksums
where kind = 'function' and not file_name = any(%s::text[]);

-- name: record_migrate_state
insert into recording_finalize_migrations.migrate_state (singleton, schema_version,
    package_version, migrated_at)
values (true, %s, %s, now())
on conflict (singleton) do update set
    schema_version = excluded.schema_version, package_version = excluded.package_version,
    migrated_at = excluded.migrated_at;

-- name: record_adapter
-- The reference adapter's file and fingerprint as migrate leaves it (NULL: a DBA's).
update recording_finalize_migrations.migrate_state
set adapter_sha256 = %(sha256)s::text,
    adapter_md5 = case when %(sha256)s::text is not null
        then recording_finalize_internal.adapter_fingerprint() end;

-- name: set_local_search_path
select pg_catalog.set_config('search_path', %s, true);

-- name: resolve_relation
-- The relation a name in an adapter's body resolves to (under the search_path set before):
-- its oid, schema, quoted qualified name, kind, row-level security and columns.
select c.oid::bigint, n.nspname::text,
    pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.relname),
    c.relkind::text, c.relrowsecurity,
    array(select a.attname::text from pg_catalog.pg_attribute as a
        where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped order by a.attnum)
from pg_catalog.pg_class as c
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
where c.oid = pg_catalog.to_regclass(%s) and c.relkind in ('r', 'p', 'v', 'm', 'f');

-- name: adapter_view_reads
-- Each view of the adapter, the relations and columns it reads (pg_depend through its rewrite
-- rule; a NULL column: a whole-row reference).
select distinct v.relname::text,
    pg_catalog.quote_ident(tn.nspname) || '.' || pg_catalog.quote_ident(t.relname),
    tn.nspname::text, a.attname::text
from pg_catalog.pg_class as v
join pg_catalog.pg_namespace as vn on vn.oid = v.relnamespace
join pg_catalog.pg_rewrite as r on r.ev_class = v.oid
join pg_catalog.pg_depend as d
    on d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass and d.objid = r.oid
    and d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass and d.refobjid <> v.oid
join pg_catalog.pg_class as t on t.oid = d.refobjid
join pg_catalog.pg_namespace as tn on tn.oid = t.relnamespace
left join pg_catalog.pg_attribute as a on a.attrelid = t.oid and a.attnum = d.refobjsubid
    and d.refobjsubid > 0
where vn.nspname = %s and v.relkind in ('v', 'm')
order by 1, 2, 4;

-- name: adapter_functions
-- Each function of the adapter: its language, body and the search_path it runs with.
select p.proname::text, l.lanname::text, p.prosrc,
    coalesce((select pg_catalog.substr(s, 13) from pg_catalog.unnest(p.proconfig) as s
        where s like 'search_path=%%'), 'public')
from pg_catalog.pg_proc as p
join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
join pg_catalog.pg_language as l on l.oid = p.prolang
where n.nspname = %s and p.prokind = 'f'
order by 1;

-- name: table_triggers
-- The enabled user triggers of a table: name, events, body, security definer, language,
-- search_path.
select g.tgname::text, g.tgtype::integer, p.prosrc, p.prosecdef, l.lanname::text,
    coalesce((select pg_catalog.substr(s, 13) from pg_catalog.unnest(p.proconfig) as s
        where s like 'search_path=%%'), 'public')
from pg_catalog.pg_trigger as g
join pg_catalog.pg_proc as p on p.oid = g.tgfoid
join pg_catalog.pg_language as l on l.oid = p.prolang
where g.tgrelid = %s::oid and not g.tgisinternal and g.tgenabled <> 'D'
order by 1;

-- name: table_default_sequences
-- The sequences behind a table's column defaults (serial keys), by column.
select a.attname::text,
    pg_catalog.quote_ident(sn.nspname) || '.' || pg_catalog.quote_ident(s.relname)
from pg_catalog.pg_attrdef as d
join pg_catalog.pg_attribute as a on a.attrelid = d.adrelid and a.attnum = d.adnum
join pg_catalog.pg_depend as p on p.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass
    and p.objid = d.oid and p.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
join pg_catalog.pg_class as s on s.oid = p.refobjid and s.relkind = 'S'
join pg_catalog.pg_namespace as sn on sn.oid = s.relnamespace
where d.adrelid = %s::oid and not a.attisdropped;

-- name: tables_without_policy
-- Of the tables given (row-level security on), those no policy names the role for.
select pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.relname)
from pg_catalog.pg_class as c
join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
where c.oid = any(%s::oid[])
    and not exists (
        select from pg_catalog.pg_policy as y
        join pg_catalog.pg_roles as r on r.oid = any(y.polroles)
        where y.polrelid = c.oid and r.rolname = %s
    );

-- name: recordings_tables
-- The tables the adapter's recordings view reads (the reference one: messenger.call_recordings),
-- and whether each is partitioned, with its partitions.
select pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(t.relname),
    t.relkind = 'p',
    array(select pg_catalog.quote_ident(pn.nspname) || '.' || pg_catalog.quote_ident(pc.relname)
        from pg_catalog.pg_inherits as i
        join pg_catalog.pg_class as pc on pc.oid = i.inhrelid
        join pg_catalog.pg_namespace as pn on pn.oid = pc.relnamespace
        where i.inhparent = t.oid order by pc.relname)
from pg_catalog.pg_class as t
join pg_catalog.pg_namespace as n on n.oid = t.relnamespace
-- By name through the catalog (a cast to regclass needs USAGE on the schema).
where n.nspname = %s and t.relname = %s;

-- name: reference_tables_missing
-- How many of the reference schema's tables (by name, in the schema given) do not exist.
select count(*) from pg_catalog.unnest(%s::text[]) as x (name)
where not exists (
    select from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.nspname = %s and c.relname = x.name
);

-- name: recordings_view
-- The adapter's recordings view through the catalog only (a login without any privilege on the
-- adapter's schema may read it): its definition as PostgreSQL prints it, and the schema and name
-- of each relation it reads.
select pg_catalog.pg_get_viewdef(v.oid), coalesce(x.schemas, '{}'), coalesce(x.names, '{}')
from pg_catalog.pg_class as v
join pg_catalog.pg_namespace as vn on vn.oid = v.relnamespace
left join lateral (
    select array_agg(tn.nspname::text order by tn.nspname, t.relname) as schemas,
        array_agg(t.relname::text order by tn.nspname, t.relname) as names
    from (
        select distinct d.refobjid
        from pg_catalog.pg_rewrite as r
        join pg_catalog.pg_depend as d
            on d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass and d.objid = r.oid
            and d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
        where r.ev_class = v.oid and d.refobjid <> v.oid
    ) as s
    join pg_catalog.pg_class as t on t.oid = s.refobjid
    join pg_catalog.pg_namespace as tn on tn.oid = t.relnamespace
    where t.relkind in ('r', 'p', 'v', 'm', 'f')
) as x on true
where vn.nspname = %s and v.relname = 'recordings' and v.relkind in ('v', 'm');

-- name: table_checks
-- A table's own CHECK constraints (by schema and name, through the catalog), as PostgreSQL
-- prints them, with the table's quoted qualified name.
select pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(t.relname),
    k.conname::text, pg_catalog.pg_get_constraintdef(k.oid)
from pg_catalog.pg_constraint as k
join pg_catalog.pg_class as t on t.oid = k.conrelid
join pg_catalog.pg_namespace as n on n.oid = t.relnamespace
where n.nspname = %s and t.relname = %s and k.contype = 'c' and k.conislocal
order by 2;

-- name: relation_exists
-- Whether a relation of this schema and name exists (through the catalog: no USAGE needed).
select exists (
    select from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.nspname = %s and c.relname = %s
);

-- name: adapter_view_rule
-- The query tree of an adapter's view (its rewrite rule, as pg_node_tree text), through the
-- catalog only: which relations its FROM clause holds, the ones a locking clause on the view
-- reaches.
select r.ev_action::text
from pg_catalog.pg_rewrite as r
join pg_catalog.pg_class as v on v.oid = r.ev_class
join pg_catalog.pg_namespace as n on n.oid = v.relnamespace
where n.nspname = %s and v.relname = %s and r.rulename = '_RETURN';

-- name: install_privileges
-- What the privileges only an install needs turn on, through the catalog only: the database's
-- owner, whether the service's schema exists, and whether the role holds CREATE on the database
-- and on that schema now (false for a role that does not exist).
select pg_catalog.pg_get_userbyid(d.datdba)::text,
    exists (select from pg_catalog.pg_namespace as n where n.nspname = %(schema)s),
    coalesce((select pg_catalog.has_database_privilege(r.oid, d.oid, 'CREATE')
        from pg_catalog.pg_roles as r where r.rolname = %(role)s), false),
    coalesce((select pg_catalog.has_schema_privilege(r.oid, n.oid, 'CREATE')
        from pg_catalog.pg_roles as r
        join pg_catalog.pg_namespace as n on n.nspname = %(schema)s
        where r.rolname = %(role)s), false)
from pg_catalog.pg_database as d
where d.datname = pg_catalog.current_database();

-- name: schema_owner_and_table_owners
-- The owner of the service's schema, and the owners of the tables (oids) an adapter reaches: a
-- schema created by the database's owner beside tables another role owns is granted on by its
-- owner only.
select (select pg_catalog.pg_get_userbyid(n.nspowner)::text from pg_catalog.pg_namespace as n
        where n.nspname = %(schema)s),
    coalesce((select pg_catalog.array_agg(distinct pg_catalog.pg_get_userbyid(c.relowner)::text)
        from pg_catalog.pg_class as c where c.oid = any(%(tables)s::oid[])), '{}');

-- name: schema_state_callable
-- Whether this login may call recording_finalize.schema_state() (migrate's record), through the
-- catalog only: to_regprocedure refuses a login without USAGE on the function's schema.
select exists (
    select from pg_catalog.pg_proc as p
    join pg_catalog.pg_namespace as n on n.oid = p.pronamespace
    where n.nspname = 'recording_finalize' and p.proname = 'schema_state' and p.pronargs = 0
        and pg_catalog.has_schema_privilege(n.oid, 'USAGE')
        and pg_catalog.has_function_privilege(p.oid, 'EXECUTE')
);
