"""The SQL migrate sends for its own bookkeeping (schema ``recording_finalize_migrations``): its
lock, its schema, the checksums it keeps.
"""

SCHEMA = "recording_finalize_migrations"

CURRENT_ROLE = "select current_user::text"

# Held by migrate for its whole run (a session lock on its own connection; never waits).
TRY_MIGRATE_LOCK = "select pg_catalog.pg_try_advisory_lock(%s)"
MIGRATE_UNLOCK = "select pg_catalog.pg_advisory_unlock(%s)"

CREATE_MIGRATIONS_SCHEMA = """
create schema if not exists recording_finalize_migrations;
comment on schema recording_finalize_migrations is
'Bookkeeping of recording-finalize migrate: yoyo-migrations'' tables and the checksums of the '
'applied files. Owner only; the worker reads it through recording_finalize.schema_state().';
"""

# A file is applied in its own transaction under these (set local: per transaction).
MIGRATE_TIMEOUTS = """
select pg_catalog.set_config('lock_timeout', %s, true),
    pg_catalog.set_config('statement_timeout', %s, true)
"""

# The checksum of each migration the package ships, once yoyo has applied them all; a record
# already there is kept (it is what the check for a changed applied migration compares with).
RECORD_MIGRATIONS = """
insert into recording_finalize_migrations.file_checksums (kind, file_name, sha256,
    package_version)
select 'migration', f, sha, %s::text
from unnest(%s::text[], %s::text[]) as x (f, sha)
on conflict (kind, file_name) do nothing
"""

RECORD_FUNCTION = """
insert into recording_finalize_migrations.file_checksums (kind, file_name, sha256,
    definition_md5, package_version, recorded_at)
values ('function', %(file)s, %(sha256)s,
    recording_finalize_internal.function_fingerprint(%(file)s), %(version)s, now())
on conflict (kind, file_name) do update set
    sha256 = excluded.sha256, definition_md5 = excluded.definition_md5,
    package_version = excluded.package_version, recorded_at = excluded.recorded_at
where (file_checksums.sha256, file_checksums.definition_md5)
    is distinct from (excluded.sha256, excluded.definition_md5)
"""

FORGET_FUNCTIONS = """
delete from recording_finalize_migrations.file_checksums
where kind = 'function' and not file_name = any(%s::text[])
"""

RECORD_MIGRATE_STATE = """
insert into recording_finalize_migrations.migrate_state (singleton, schema_version,
    package_version, migrated_at)
values (true, %s, %s, now())
on conflict (singleton) do update set
    schema_version = excluded.schema_version, package_version = excluded.package_version,
    migrated_at = excluded.migrated_at
"""

# The reference adapter's file and fingerprint as migrate leaves it (NULL: a DBA's).
RECORD_ADAPTER = """
update recording_finalize_migrations.migrate_state
set adapter_sha256 = %(sha256)s::text,
    adapter_md5 = case when %(sha256)s::text is not null
        then recording_finalize_internal.adapter_fingerprint() end
"""
