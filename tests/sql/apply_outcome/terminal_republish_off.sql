-- apply_outcome: a recording the service made Available between the claim and the verdict gets
-- the product's event only while republishing is trusted; while republish discovery is off,
-- held, or service_events shows pending events only, its event is the service's (which may have
-- sent it and deleted the outbox row): the row closes as terminal, without an event.
begin;
select plan(3);

select tests.clean_slate();
select tests.make_stuck() as late \gset
create temp table claimed as select * from tests.claim();
update messenger.call_recordings
set status = 'Available', file_id = 'recordings/by-service', size_bytes = 7,
    duration_seconds = 3, format = 'Ogg', available_at = now(), version = version + 1
where id = :'late';
update recording_finalize.discovery_sweep
set republish_window = '0', republish_held_since = null;

select results_eq(
    format(
        $$select result, finalize_status from recording_finalize.apply_outcome(%L, %L, 'found',
            'k', 1, 1, 'Ogg')$$,
        :'late', (select claim_token from claimed where recording_id = :'late')
    ),
    $$values ('terminal', 'Done')$$,
    'terminal, the row Done'
);
select is(tests.event_count(:'late'), 0::bigint, 'no event of ours: the service''s to publish');
select is((select status from messenger.call_recordings where id = :'late'), 'Available',
    'the recording as the service left it');

select * from finish();
rollback;
