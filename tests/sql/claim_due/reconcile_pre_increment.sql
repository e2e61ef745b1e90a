-- claim_due hands a stuck recording to the driver: attempt counted and next try scheduled first.
begin;
select plan(14);

select tests.clean_slate();
select tests.make_stuck('Direct') as rec \gset
select tests.make_stuck('Conference', p_status => 'Recording', p_attempts => 3) as conf \gset
create temp table recordings_before as select * from messenger.call_recordings;

create temp table claimed as select * from tests.claim();

select is((select count(*) from claimed), 2::bigint, 'both stuck recordings are claimed');
select results_eq(
    format(
        $$select action, attempts, recording_version, detail, session_kind from claimed
        where recording_id = %L$$, :'rec'
    ),
    $$values ('reconcile', 1, null::integer, 'Uploading', 'Direct')$$,
    'an untried Uploading recording comes back as reconcile, attempt 1 (no version: the '
        || 'adapter''s recordings port has none)'
);
select isnt(
    (select claim_token from claimed where recording_id = :'rec'), null,
    'a reconcile row carries a claim token'
);
select is(
    (select claim_token from claimed where recording_id = :'rec'), tests.token(:'rec'),
    'the claim token is stored on the finalize row'
);
select isnt(
    (select claim_token from claimed where recording_id = :'rec'),
    (select claim_token from claimed where recording_id = :'conf'),
    'each claimed row gets its own token'
);
select is(
    (select attempts from messenger.recording_finalize_attempts where recording_id = :'rec'), 1,
    'pre-increment: attempts is 1 before the storage check has even run'
);
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = :'rec'),
    now() + interval '1 minute',
    'pre-increment: next_attempt_at = now() + backoff(1) = 1 minute (jitter 0)'
);
select is(
    (select claimed_at from messenger.recording_finalize_attempts where recording_id = :'rec'),
    now(),
    'claimed_at records the claim'
);
select is(
    (select status from messenger.recording_finalize_attempts where recording_id = :'rec'),
    'Pending',
    'a claimed row stays Pending until apply_outcome'
);
select results_eq(
    format(
        $$select action, attempts, detail, session_kind from claimed where recording_id = %L$$,
        :'conf'
    ),
    $$values ('reconcile', 4, 'Recording', 'Conference')$$,
    'a Conference recording still Recording after its session ended: reconcile, attempt 4'
);
select is(
    (select next_attempt_at from messenger.recording_finalize_attempts
        where recording_id = :'conf'),
    now() + interval '8 minutes',
    'attempt 4 is scheduled backoff(4) = 8 minutes ahead'
);
select set_eq(
    'select * from messenger.call_recordings',
    'select * from recordings_before',
    'the claim does not touch any recording'
);
select is(
    (select count(*) from messenger.integration_outbox)
        + (select count(*) from messenger.realtime_outbox),
    0::bigint,
    'the claim of reconcile rows writes no outbox row'
);
select is(
    (select count(*) from tests.claim()), 0::bigint,
    'a claimed row is not due again until its backoff runs out'
);

select * from finish();
rollback;
