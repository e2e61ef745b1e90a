-- apply_outcome stores p_error as last_error with every URL masked and within 512 characters.
begin;
select plan(9);

select tests.clean_slate();
select tests.make_stuck() as transient_rec \gset
select tests.make_stuck() as invalid_rec \gset
select tests.make_stuck() as config_rec \gset
select tests.make_stuck() as long_rec \gset
create temp table claimed as select * from tests.claim();

select (recording_finalize.apply_outcome(
    :'transient_rec', claim_token, 'transient',
    p_error => 'ReadTimeout: GET https://call-recordings.s3.eu-west-1.amazonaws.com/recordings/'
        || 'a?X-Amz-Signature=deadbeef&X-Amz-Credential=AKIA123 timed out'
)).detail as transient_detail
from claimed where recording_id = :'transient_rec' \gset
select recording_finalize.apply_outcome(
    :'invalid_rec', claim_token, 'invalid_metadata',
    p_error => 'x-amz-meta-file-id is a URL: s3://call-recordings/recordings/b'
) is not null as ok
from claimed where recording_id = :'invalid_rec' \gset
select recording_finalize.apply_outcome(
    :'config_rec', claim_token, 'config_error',
    p_error => 'AccessDenied at http://user:secret@127.0.0.1:8333/call-recordings'
) is not null as ok
from claimed where recording_id = :'config_rec' \gset
select recording_finalize.apply_outcome(
    :'long_rec', claim_token, 'transient', p_error => repeat('E', 5000)
) is not null as ok
from claimed where recording_id = :'long_rec' \gset

select is(
    (select last_error from messenger.recording_finalize_attempts
        where recording_id = :'transient_rec'),
    'Transient: ReadTimeout: GET <url> timed out',
    'a presigned https URL is masked whole, query string and credentials included'
);
select is(
    (select last_error from messenger.recording_finalize_attempts
        where recording_id = :'invalid_rec'),
    'InvalidMetadata: x-amz-meta-file-id is a URL: <url>',
    'an s3:// URL is masked'
);
select is(
    (select last_error from messenger.recording_finalize_attempts
        where recording_id = :'config_rec'),
    'ConfigError: AccessDenied at <url>',
    'a URL with a password is masked'
);
select is(
    :'transient_detail'::text, 'Transient: ReadTimeout: GET <url> timed out',
    'the detail returned to the driver is the masked text too'
);
select is_empty(
    $$select last_error from messenger.recording_finalize_attempts
    where last_error ~ '://' or last_error ~* 'secret|signature|credential'$$,
    'no stored last_error contains a URL or a secret'
);
select cmp_ok(
    (select length(last_error) from messenger.recording_finalize_attempts
        where recording_id = :'long_rec'),
    '<=', 512,
    'a 5000-character error is cut to fit the column instead of failing the verdict'
);
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'long_rec'),
    'Pending',
    'and the verdict itself was recorded'
);

-- The quarantine path of the claim keeps the masked text.
update messenger.recording_finalize_attempts set attempts = 8, next_attempt_at = now()
where recording_id = :'transient_rec';
select action as quarantine_action from tests.claim() where recording_id = :'transient_rec' \gset
select is(:'quarantine_action'::text, 'quarantined', 'the exhausted row is quarantined');
select is(
    (select last_error from messenger.recording_finalize_attempts
        where recording_id = :'transient_rec'),
    'MaxAttemptsExceeded: 8 attempts; last error: Transient: ReadTimeout: GET <url> timed out',
    'its last_error keeps the masked text'
);

select * from finish();
rollback;
