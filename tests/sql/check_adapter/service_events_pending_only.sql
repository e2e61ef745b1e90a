-- check_adapter: a service_events whose published_at is the constant NULL (a view over an
-- outbox that deletes what it delivered) is a warning naming the port and the two ways out -
-- read from the view's definition, so an empty outbox says it too - unless republish discovery
-- is off (its last window 0).
begin;
select plan(4);

select tests.clean_slate();
select tests.make_stuck() as active \gset
select tests.use_pending_only_service_events();

update recording_finalize.discovery_sweep set republish_window = null;
create temp table findings as select * from recording_finalize.check_adapter(false);
select results_eq(
    $$select severity, port from findings$$,
    $$values ('warning', 'recording_finalize_adapter.service_events')$$,
    'a warning on service_events, before the first cycle'
);
select alike((select problem from findings), '%published_at is always NULL%',
    'the problem says what it saw');
select alike((select fix from findings), '%RFR_REPUBLISH_WINDOW=0%keeps delivered events%',
    'the fix names both ways out');

update recording_finalize.discovery_sweep set republish_window = '0';
select is_empty($$select from recording_finalize.check_adapter(false)$$,
    'nothing once republish discovery is off');

select * from finish();
rollback;
