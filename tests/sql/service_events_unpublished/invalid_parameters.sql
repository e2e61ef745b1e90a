-- service_events_unpublished refuses a lag that is not positive and a scan out of 1..100000.
begin;
select plan(4);

select throws_ok($$select * from recording_finalize.service_events_unpublished('0')$$,
    'RF001', null, 'a zero lag: RF001');
select throws_ok($$select * from recording_finalize.service_events_unpublished(null)$$,
    'RF001', null, 'a NULL lag: RF001');
select throws_ok($$select * from recording_finalize.service_events_unpublished('5m', 0)$$,
    'RF001', null, 'a scan of 0: RF001');
select throws_ok($$select * from recording_finalize.service_events_unpublished('5m', 100001)$$,
    'RF001', null, 'a scan over 100000: RF001');

select * from finish();
rollback;
