-- The server's lower bound on max attempts (DBA review finding 11): with max_attempts_min raised
-- by the owner, a worker cannot store a policy that quarantines every recording after its first
-- transient error.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_stuck() as rec \gset
select lives_ok($$select recording_finalize.set_policy(p_max_attempts => 1)$$,
    'by default (max_attempts_min 1) one attempt is admitted');
update recording_finalize.settings set max_attempts_min = 3;
select throws_ok($$select recording_finalize.set_policy(p_max_attempts => 2)$$, 'RF010', null,
    'set_policy refuses fewer attempts than settings.max_attempts_min');
select claim_token as token from tests.claim(p_max_attempts => 3) \gset
select is(:'token' is not null, true, 'the bound itself is admitted');
select results_eq(
    format($$select result from recording_finalize.apply_outcome(%L, %L, 'transient',
        p_error => 'S3 503')$$, :'rec', :'token'),
    $$values ('backoff')$$, 'a first transient error backs off');
select is((select status::text from messenger.recording_finalize_attempts
        where recording_id = :'rec'),
    'Pending', 'and the row is not quarantined');

select * from finish();
rollback;
