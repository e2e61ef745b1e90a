-- explain on a stuck recording whose session is gone, where the adapter's recordings view takes
-- the session's kind from the session itself (a schema whose recordings keep only a session id,
-- the kind living on the session, which a retention job purges): session_kind is NULL. explain
-- answers (the session not found, nothing next, and why: discovery never finds such a
-- recording stuck), instead of failing on the lookup of a session of no kind.
begin;
select plan(4);

select tests.clean_slate();
create or replace view recording_finalize_adapter.recordings as
select
    r.id,
    coalesce(
        (select 'Direct'::text from messenger.call_sessions as s where s.id = r.session_id),
        (select 'Conference'::text from messenger.conference_sessions as s
            where s.id = r.session_id)) as session_kind,
    r.session_id,
    r.status::text as status,
    r.file_id::text as file_id,
    r.size_bytes,
    r.duration_seconds,
    r.format::text as format,
    r.failure_reason::text as failure_reason,
    r.media_type::text as media_type,
    r.trigger::text as trigger,
    r.started_at,
    r.ended_at,
    r.available_at
from messenger.call_recordings as r;

select tests.make_recording('Direct', tests.make_session(), 'Uploading') as rec \gset
delete from messenger.call_sessions
where id = (select session_id from messenger.call_recordings where id = :'rec');

select lives_ok(format('select recording_finalize.explain(%L)', :'rec'),
    'explain answers for a recording whose session (and so its kind) is unknown');
select is(recording_finalize.explain(:'rec') -> 'session' ->> 'found', 'false',
    'the session: not found');
select is(recording_finalize.explain(:'rec') -> 'next' ->> 'action', 'none', 'next: none');
select ok(recording_finalize.explain(:'rec') -> 'next' ->> 'text'
        like 'nothing: recording_finalize_adapter.sessions shows no session of it%',
    'next says why: discovery never finds it stuck');

select * from finish();
rollback;
