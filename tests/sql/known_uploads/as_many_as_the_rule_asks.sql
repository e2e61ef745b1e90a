-- The key-layout evidence is one number (key_layout_evidence): known_uploads returns that many by
-- default (what the worker HEADs), and key_layout_unconfirmed needs that many 404s, none other.
begin;
select plan(5);

select tests.clean_slate();
select tests.make_stuck() from generate_series(1, 4);
update messenger.call_recordings set status = 'Available', file_id = 'f', size_bytes = 1,
    duration_seconds = 1, format = 'Webm', available_at = now() - interval '1 hour';

select is((select count(*)::integer from recording_finalize.known_uploads()),
    recording_finalize_internal.key_layout_evidence(),
    'known_uploads() returns as many as the rule asks about');
select ok(recording_finalize_internal.key_layout_unconfirmed(0,
    recording_finalize_internal.key_layout_evidence(), 0),
    'that many 404s, none otherwise, nothing found: the key layout is unconfirmed');
select ok(not recording_finalize_internal.key_layout_unconfirmed(0,
    recording_finalize_internal.key_layout_evidence() - 1, 0), 'one fewer: the bucket stands');
select ok(not recording_finalize_internal.key_layout_unconfirmed(0,
    recording_finalize_internal.key_layout_evidence(), 1), 'one that answered otherwise: too');

-- The default is resolved inside the function, with its owner's rights: the worker's role, which
-- cannot reach recording_finalize_internal, calls it without an argument.
set local role recording_finalize_worker;
select is((select count(*)::integer from recording_finalize.known_uploads()), 2,
    'the worker''s role calls it with the default');
reset role;

select * from finish();
rollback;
