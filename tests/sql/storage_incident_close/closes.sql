-- storage_incident_close: ends the open incident of a source; idempotent; back-dating checked.
begin;
select plan(10);

select tests.clean_slate();
select id as inc from recording_finalize.storage_incident_open('worker', 'ReadTimeoutError',
    now() - interval '1 hour') \gset

select is_empty($$select * from recording_finalize.storage_incident_close('recorders')$$,
    'closing a source with nothing open returns no row (idempotent)');
select throws_ok(
    $$select * from recording_finalize.storage_incident_close('worker',
        now() - interval '2 hours')$$,
    'RF017', null, 'an incident cannot end before it started');
select throws_ok(
    $$select * from recording_finalize.storage_incident_close('worker',
        now() + interval '1 second')$$,
    'RF017', null, 'an incident cannot end in the future');
select is(
    (select ended_at from recording_finalize.storage_incidents where id = :inc), null,
    'the refused closes left it open');
select throws_ok($$select * from recording_finalize.storage_incident_close('')$$,
    'RF016', null, 'an empty source is refused');

create temp table closed as
select * from recording_finalize.storage_incident_close('worker', now() - interval '5 minutes',
    'HeadBucket answers again');
select results_eq(
    $$select id, ended_at, reason, closed_by = session_user::text from closed$$,
    format($$values (%s::bigint, now() - interval '5 minutes',
        'ReadTimeoutError | closed: HeadBucket answers again', true)$$, :inc),
    'closes it at p_at (back-dated), appends the reason, records who closed it');
select is_empty($$select * from recording_finalize.storage_incident_close('worker')$$,
    'closing again is a no-op');
select is((select created from recording_finalize.storage_incident_open('worker')), true,
    'after the close, a new incident of the source can be opened');
select is(
    (select reason from recording_finalize.storage_incident_close('worker', p_reason =>
        'see https://status.example.com/i/1')),
    'closed: see <url>', 'a closing note with a URL is masked; no earlier reason, no separator');
select throws_ok(
    format($$update recording_finalize.storage_incidents set ended_at = started_at - interval '1 s',
        closed_by = 'x' where id = %s$$, :inc),
    '23514', null, 'the table refuses an end before the start');

select * from finish();
rollback;
