-- A service_events that shows a recording as soon as make_available moved it ("every Available
-- recording has its event") would hide the product's own events: check_adapter refuses it,
-- naming the port. And should one be installed anyway, a rescue still gets its event: the
-- transition asks the port before it moves the recording.
begin;
select plan(4);

select tests.clean_slate();
select tests.make_stuck() as active \gset
create or replace view recording_finalize_adapter.service_events as
select r.id as recording_id, r.available_at as enqueued_at, r.available_at as published_at
from messenger.call_recordings as r
where r.status = 'Available';

select results_eq(
    $$select severity, problem like '%as soon as make_available moved it%'
    from recording_finalize.check_adapter()
    where port = 'recording_finalize_adapter.service_events'$$,
    $$values ('error', true)$$,
    'the port that mirrors the recordings'' status is an error, named'
);
select results_eq(
    format($$select status from messenger.call_recordings where id = %L$$, :'active'),
    $$values ('Uploading'::varchar)$$,
    'the rehearsal left the recording as it was'
);

select count(*) from tests.claim();
select results_eq(
    format($$select result from tests.apply(%L, 'found', 'recordings/x', 10, 20, 'Webm')$$,
        :'active'),
    $$values ('reconciled')$$,
    'found: reconciled'
);
select results_eq(
    format($$select tests.event_count(%1$L), tests.realtime_count(%1$L, 'RecordingAvailable')$$,
        :'active'),
    $$values (1::bigint, 1::bigint)$$,
    'the rescue has its event and its realtime row all the same'
);

select * from finish();
rollback;
