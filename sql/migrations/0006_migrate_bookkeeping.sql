-- recording-finalize migrate's own bookkeeping, beside yoyo-migrations' tables in their schema.
-- Forward-only: never edit this file once it has landed; add a new migration instead.
--
-- yoyo records only the ids of the migrations it applied. migrate also records here what each
-- file WAS when it applied it, so that it can refuse a changed migration, skip a function file
-- that has not changed, refuse to let an older package overwrite a newer schema, and so that
-- `run` can refuse a database that differs from the installed package (schema drift).
-- The schema itself is created by migrate before yoyo runs (yoyo's tables live in it).

set local lock_timeout = '1s';
set local statement_timeout = '1min';

create schema if not exists recording_finalize_migrations;

comment on schema recording_finalize_migrations is
'Bookkeeping of recording-finalize migrate: yoyo-migrations'' tables and the checksums of the '
'applied files. Owner only; the worker reads it through recording_finalize.schema_state().';

revoke all on schema recording_finalize_migrations from public;

-- One row per applied file of sql/migrations and sql/functions.
create table recording_finalize_migrations.file_checksums (
    kind varchar(12) not null,
    file_name text not null,
    -- sha256 of the file's bytes when migrate applied it (or first saw it applied).
    sha256 varchar(64) not null,
    -- Function files: recording_finalize.function_fingerprint(file_name) right after applying.
    definition_md5 varchar(32) null,
    package_version text not null,
    recorded_at timestamptz not null default now(),
    constraint file_checksums_pk primary key (kind, file_name),
    constraint file_checksums_kind_ck check (kind in ('migration', 'function')),
    constraint file_checksums_sha256_ck check (sha256 ~ '^[0-9a-f]{64}$'),
    constraint file_checksums_definition_ck check (
        (kind = 'function') = (definition_md5 is not null)
    )
);

comment on table recording_finalize_migrations.file_checksums is
'What each applied migration and function file was when recording-finalize migrate applied it: '
'the sha256 of the file, and for a function file the fingerprint of the definitions it created.';

-- The last successful migrate: the schema version (last migration id) and the package version.
create table recording_finalize_migrations.migrate_state (
    singleton boolean primary key default true,
    schema_version text not null,
    package_version text not null,
    migrated_at timestamptz not null default now(),
    constraint migrate_state_singleton_ck check (singleton)
);

comment on table recording_finalize_migrations.migrate_state is
'One row: which schema version (the last migration id) which package version of '
'recording-finalize-retry left when its migrate last finished.';

revoke all on all tables in schema recording_finalize_migrations from public;
