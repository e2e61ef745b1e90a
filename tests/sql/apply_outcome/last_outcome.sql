-- apply_outcome records each verdict it carried out as last_outcome (what tells max_attempts from
-- crash_loop at the next claim); a verdict it did not carry out (stale) records nothing.
begin;
select plan(4);

select tests.clean_slate();
create temp table cases (n integer primary key, outcome text, rec uuid);
insert into cases (n, outcome) values
    (1, 'found'), (2, 'missing'), (3, 'transient'), (4, 'invalid_metadata'), (5, 'config_error');
update cases set rec = tests.make_stuck();
select count(*) as claimed from tests.claim() \gset

create temp table applied as
select c.n, a.result
from cases as c
cross join lateral tests.apply(c.rec, c.outcome, 'recordings/' || c.n, 1, 1, 'Ogg') as a;

select results_eq(
    'select n, result from applied order by n',
    $$values (1, 'reconciled'), (2, 'failed'), (3, 'backoff'), (4, 'quarantined'),
        (5, 'config_error_released')$$,
    'one verdict of each kind carried out'
);
select is_empty(
    $$select c.n from cases as c join messenger.recording_finalize_attempts as f
        on f.recording_id = c.rec
    where f.last_outcome is distinct from c.outcome$$,
    'each row''s last_outcome is the verdict it got'
);

-- A stale verdict is not this row's: the last outcome stays.
select results_eq(
    format($$select result from recording_finalize.apply_outcome(%L, gen_random_uuid(),
        'missing')$$, (select rec from cases where n = 3)),
    $$values ('stale')$$,
    'a verdict with a made-up token is stale'
);
select is(
    (select last_outcome from messenger.recording_finalize_attempts
        where recording_id = (select rec from cases where n = 3)),
    'transient',
    'and last_outcome stays transient'
);

select * from finish();
rollback;
