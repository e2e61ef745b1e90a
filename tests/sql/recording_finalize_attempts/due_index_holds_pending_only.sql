-- Migration 0012: ix_rfa_due keeps the design card's name and columns and holds only Pending
-- rows, so a settled row leaves it (the index is the size of the backlog, not of the history);
-- the Quarantined rows stats() counts and quarantined_rows() lists, and the Done rows prune()
-- deletes, have their own indexes.
begin;
select plan(6);

select is(
    (select pg_catalog.pg_get_expr(i.indpred, i.indrelid) from pg_catalog.pg_index as i
        where i.indexrelid = 'messenger.ix_rfa_due'::regclass),
    '((status)::text = ''Pending''::text)',
    'ix_rfa_due is partial: Pending rows only'
);
select is(
    (select pg_catalog.pg_get_expr(i.indpred, i.indrelid) from pg_catalog.pg_index as i
        where i.indexrelid = 'messenger.recording_finalize_attempts_quarantined_idx'::regclass),
    '((status)::text = ''Quarantined''::text)',
    'the Quarantined rows have an index of their own'
);
select is(
    (select pg_catalog.pg_get_expr(i.indpred, i.indrelid) from pg_catalog.pg_index as i
        where i.indexrelid = 'messenger.recording_finalize_attempts_done_idx'::regclass),
    '((status)::text = ''Done''::text)',
    'the Done rows prune deletes have an index of their own'
);
select is(
    (select count(*)::integer from pg_catalog.pg_index as i
        join pg_catalog.pg_class as c on c.oid = i.indexrelid
        where i.indrelid = 'messenger.recording_finalize_attempts'::regclass
            and c.relname in ('ix_rfa_due_pending', 'ix_rfa_due_full')),
    0,
    'no index is left behind under the migration''s temporary names'
);

-- Behaviour through the index alone (no sequential or bitmap scan allowed): the Pending row is
-- found, and once settled it is no longer among the due rows.
select tests.clean_slate();
select tests.make_recording('Direct', tests.make_session(), 'Uploading') as rec \gset
select tests.make_due_row(:'rec') as row_id \gset
set local enable_seqscan = off;
set local enable_bitmapscan = off;
select is(
    (select count(*)::integer from messenger.recording_finalize_attempts as f
        where f.status = 'Pending'),
    1,
    'the due row is Pending'
);
select recording_finalize.settle_finalize_row(:'rec', 'Done');
select is(
    (select count(*)::integer from messenger.recording_finalize_attempts as f
        where f.status = 'Pending' and f.next_attempt_at <= now() + interval '1 day'),
    0,
    'once settled it is not among the due rows'
);

select * from finish();
rollback;
