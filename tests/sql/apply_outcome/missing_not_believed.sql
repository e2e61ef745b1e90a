-- apply_outcome(missing) with the storage facts of the cycle: a 404 with the bucket unconfirmed,
-- or while the known uploads all answered 404, fails nothing and gives the attempt back;
-- believed, it fails the recording and last_error names bucket and key.
begin;
select plan(7);

select tests.clean_slate();
select tests.use_policy(8, '30 minutes', null);
select tests.make_stuck('Conference') as rec \gset
select claim_token as token from tests.claim() \gset

create temp table applied as
select * from recording_finalize.apply_outcome(p_recording_id => :'rec', p_claim_token => :'token',
    p_outcome => 'missing', p_error => 'bucket ''b'', key ''recordings/r''',
    p_bucket_confirmed => true, p_objects_found => 0, p_known_missing => 3, p_known_other => 0);
select results_eq('select result, finalize_status, attempts from applied',
    $$values ('config_error_released', 'Pending', 0)$$,
    'known uploads all 404: config_error_released, attempt given back');
select matches((select detail from applied),
    '^ConfigError: KeyLayoutUnconfirmed: .*key ''recordings/r''',
    'detail names the rule and the key');
select results_eq(
    format($$select r.status, f.last_outcome from messenger.call_recordings as r
        join messenger.recording_finalize_attempts as f on f.recording_id = r.id
        where r.id = %L$$, :'rec'),
    $$values ('Uploading'::varchar, 'missing'::varchar)$$,
    'the recording is untouched; last_outcome says what the storage answered');

select claim_token as token from tests.claim() \gset
create temp table unconfirmed as
select * from recording_finalize.apply_outcome(p_recording_id => :'rec', p_claim_token => :'token',
    p_outcome => 'missing', p_error => 'bucket ''b'', key ''recordings/r''',
    p_bucket_confirmed => false);
select results_eq('select result, finalize_status, attempts from unconfirmed',
    $$values ('held_by_incident', 'Pending', 0)$$,
    'bucket unconfirmed: held, attempt given back, not failed');
select matches((select detail from unconfirmed), 'bucket unconfirmed',
    'detail says the bucket was unconfirmed');

select tests.make_due(:'rec');
select claim_token as token from tests.claim() \gset
create temp table believed as
select * from recording_finalize.apply_outcome(p_recording_id => :'rec', p_claim_token => :'token',
    p_outcome => 'missing', p_error => 'bucket ''b'', key ''recordings/r''',
    p_bucket_confirmed => true, p_objects_found => 0, p_known_missing => 3, p_known_other => 1);
select results_eq('select result, finalize_status from believed', $$values ('failed', 'Done')$$,
    'a known upload that answered otherwise: the 404 is believed, the recording Failed');
select is((select detail from believed),
    'Timeout: no object in file storage after the SLA (bucket ''b'', key ''recordings/r'')',
    'last_error names bucket and key');

select * from finish();
rollback;
