-- vocabulary: the stored words are the declared ones - each enumeration CHECK of the finalize
-- table holds exactly the vocabulary's words of its kind, and no word is declared twice.
begin;
select plan(4);

create temp table check_words as
select c.conname::text as constraint_name,
    pg_catalog.string_to_array(
        (pg_catalog.regexp_match(pg_catalog.pg_get_constraintdef(c.oid), '''\{([^}]*)\}'''))[1],
        ','
    ) as words
from pg_catalog.pg_constraint as c
where c.conrelid = 'messenger.recording_finalize_attempts'::regclass;

select set_eq(
    $$select pg_catalog.unnest(words) from check_words
    where constraint_name = 'recording_finalize_attempts_status_ck'$$,
    $$select word from recording_finalize_internal.vocabulary() where kind = 'finalize_status'$$,
    'the status CHECK holds the declared finalize statuses'
);
select set_eq(
    $$select pg_catalog.unnest(words) from check_words
    where constraint_name = 'recording_finalize_attempts_last_outcome_ck'$$,
    $$select word from recording_finalize_internal.vocabulary() where kind = 'verdict'$$,
    'the last_outcome CHECK holds the declared verdicts'
);
select set_eq(
    $$select pg_catalog.unnest(words) from check_words
    where constraint_name = 'recording_finalize_attempts_quarantine_reason_ck'$$,
    $$select word from recording_finalize_internal.vocabulary() where kind = 'quarantine_reason'$$,
    'the quarantine_reason CHECK holds the declared quarantine reasons'
);
select is_empty(
    $$select kind, word from recording_finalize_internal.vocabulary()
    group by kind, word having count(*) > 1$$,
    'no word is declared twice in one kind'
);

select * from finish();
rollback;
