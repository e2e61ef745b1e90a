-- claim_decision is pure: IMMUTABLE, SQL, no SET clause (so it is inlined into the claim), reads
-- no table (it runs with no row anywhere and with an empty search_path), granted to nobody.
begin;
select plan(5);

select is(
    (select p.provolatile::text from pg_catalog.pg_proc as p
        where p.oid = 'recording_finalize_internal.claim_decision(text, boolean, boolean, '
            'timestamptz, integer, text, integer, interval, timestamptz, text, text, uuid, '
            'boolean)'::regprocedure),
    'i', 'IMMUTABLE'
);
select is(
    (select l.lanname::text from pg_catalog.pg_proc as p
        join pg_catalog.pg_language as l on l.oid = p.prolang
        where p.oid = 'recording_finalize_internal.claim_decision(text, boolean, boolean, '
            'timestamptz, integer, text, integer, interval, timestamptz, text, text, uuid, '
            'boolean)'::regprocedure),
    'sql', 'a SQL function'
);
select is(
    (select p.proconfig from pg_catalog.pg_proc as p
        where p.oid = 'recording_finalize_internal.claim_decision(text, boolean, boolean, '
            'timestamptz, integer, text, integer, interval, timestamptz, text, text, uuid, '
            'boolean)'::regprocedure),
    null, 'without a SET clause (inlinable)'
);
select tests.clean_slate();
select is(
    tests.call_with_search_path('', $$select recording_finalize_internal.claim_decision(
        'Uploading', false, true, now() - interval '1 hour', 0, null, 8, '30 minutes', now())$$),
    null,
    'it runs with an empty search_path on an empty database'
);
select is_empty(
    $$select a.grantee from pg_catalog.pg_proc as p,
        lateral pg_catalog.aclexplode(p.proacl) as a
    where p.oid = 'recording_finalize_internal.claim_decision(text, boolean, boolean, '
            'timestamptz, integer, text, integer, interval, timestamptz, text, text, uuid, '
            'boolean)'::regprocedure
        and a.grantee <> p.proowner$$,
    'granted to nobody but its owner'
);

select * from finish();
rollback;
