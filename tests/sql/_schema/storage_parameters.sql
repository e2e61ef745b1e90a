-- Page fill of the hot tables (migration 0003): the relay's lease update can stay on its page.
begin;
select plan(2);

select is(
    (
        select c.reloptions
        from pg_catalog.pg_class as c
        where c.oid = 'messenger.integration_outbox'::regclass
    ),
    array['fillfactor=50'],
    'integration_outbox keeps half of each page free (fillfactor 50)'
);

-- The lease is a HOT update: no index covers relay_lease_until, nor uses it in a predicate.
select is(
    (
        select count(*)::integer
        from pg_catalog.pg_index as i
        inner join pg_catalog.pg_attribute as a
            on a.attrelid = i.indrelid and a.attname = 'relay_lease_until'
        where i.indrelid = 'messenger.integration_outbox'::regclass
            and (
                a.attnum = any(i.indkey::smallint[])
                or pg_catalog.pg_get_expr(i.indpred, i.indrelid) like '%relay_lease_until%'
            )
    ),
    0,
    'no index of integration_outbox covers relay_lease_until'
);

select * from finish();
rollback;
