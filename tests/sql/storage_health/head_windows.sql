-- storage_health, the HEADs: a window is decided by 5 HEADs of one kind (or the cycle's end);
-- a decided window with at least 5 transient and at least half transient opens the worker's
-- incident of kind transient, any other decided window closes it; an undecided window with a
-- transient HEAD and no incident open is held (the driver applies none of its verdicts yet).
begin;
select plan(24);

select tests.clean_slate();
create function pg_temp.heads(p_transient integer, p_checked integer,
    p_cycle_end boolean default false)
returns table (action text, kind text, is_open boolean, decided boolean, hold boolean)
language sql as $$
    select h.action, h.kind, h.incident_id is not null and h.ended_at is null, h.decided, h.hold
    from recording_finalize.storage_health(p_transient => p_transient, p_checked => p_checked,
        p_cycle_end => p_cycle_end, p_error => 'ReadTimeoutError at https://s3.example/b/k') as h
$$;
create function pg_temp.worker_incidents()
returns table (kind text, is_open boolean)
language sql as $$
    select i.kind::text, i.ended_at is null from recording_finalize.storage_incidents as i
    where i.source = 'worker' order by i.id
$$;

-- Below the threshold: nothing decided; held while there is a transient HEAD.
select results_eq('select * from pg_temp.heads(4, 4)',
    $$values ('none', null::text, false, false, true)$$,
    '4 transient of 4: undecided, held, no incident');
select results_eq('select * from pg_temp.heads(0, 4)',
    $$values ('none', null::text, false, false, false)$$,
    '4 healthy HEADs: undecided, nothing to hold');
select results_eq('select * from pg_temp.heads(4, 8)',
    $$values ('none', null::text, false, false, true)$$,
    '4 transient of 8: still undecided (neither kind has 5), held');
select results_eq('select * from pg_temp.heads(4, 9)',
    $$values ('none', null::text, false, true, false)$$,
    '4 transient of 9: 5 healthy decide it: no outage, released');
select results_eq('select * from pg_temp.heads(5, 11)',
    $$values ('none', null::text, false, true, false)$$,
    '5 transient of 11: decided, less than half: no incident');
select is_empty('select * from pg_temp.worker_incidents()', 'none recorded so far');

-- The threshold: 5 transient, at least half of the window.
select results_eq('select * from pg_temp.heads(5, 10)',
    $$values ('opened', 'transient', true, true, false)$$,
    '5 transient of 10: the incident opens, kind transient');
select matches(
    (select reason::text from recording_finalize.storage_incidents),
    '^5 of 10 HEADs transient \(ReadTimeoutError at ', 'its reason counts the HEADs');
select unalike((select reason::text from recording_finalize.storage_incidents), '%s3.example%',
    'and the error''s URL is masked');
select results_eq('select * from pg_temp.heads(1, 1)',
    $$values ('kept', 'transient', true, false, false)$$,
    'while it is open an undecided window holds nothing (the incident protects)');
select results_eq('select * from pg_temp.heads(7, 7)',
    $$values ('kept', 'transient', true, true, false)$$,
    'a failing window keeps it open');
select results_eq('select * from pg_temp.heads(2, 6)',
    $$values ('kept', 'transient', true, false, false)$$,
    '4 healthy of 6: undecided, it stays open');

-- Healthy again: 5 HEADs that were not transient close it.
select results_eq('select * from pg_temp.heads(2, 7)',
    $$values ('closed', 'transient', false, true, false)$$,
    '2 transient of 7: decided healthy, the incident closes');
select matches(
    (select reason::text from recording_finalize.storage_incidents),
    ' \| closed: HEADs healthy again \(2 of 7 transient\)$', 'its reason says why it closed');
select results_eq('select * from pg_temp.worker_incidents()',
    $$values ('transient', false)$$, 'one incident, closed');
select results_eq('select * from pg_temp.heads(0, 5)',
    $$values ('none', null::text, false, true, false)$$,
    'with none open, a healthy window changes nothing');

-- The cycle's end decides what there is.
select results_eq('select * from pg_temp.heads(3, 3, true)',
    $$values ('none', null::text, false, true, false)$$,
    'cycle end, 3 transient of 3: decided, fewer than 5 open nothing, released');
select results_eq('select * from pg_temp.heads(6, 6)',
    $$values ('opened', 'transient', true, true, false)$$, 'a new outage opens a new incident');
select results_eq('select * from pg_temp.heads(3, 3, true)',
    $$values ('kept', 'transient', true, true, false)$$,
    'cycle end, 3 transient of 3 with it open: decided, but not healthy: it stays open');
select results_eq('select * from pg_temp.heads(2, 4, true)',
    $$values ('kept', 'transient', true, true, false)$$, 'half transient: not healthy either');
select results_eq('select * from pg_temp.heads(1, 3, true)',
    $$values ('closed', 'transient', false, true, false)$$,
    'cycle end with a healthy majority (1 of 3 transient) closes it');
select results_eq('select * from pg_temp.heads(0, 0, true)',
    $$values ('none', null::text, false, false, false)$$,
    'an empty window at the cycle''s end decides nothing');

-- Another source's open incident is neither the worker's nor closed by its HEADs.
insert into recording_finalize.storage_incidents (source, started_at) values ('recorders', now());
select results_eq('select * from pg_temp.heads(3, 3)',
    $$values ('none', null::text, false, false, true)$$,
    'a recorders incident open: the worker''s window is still held');
select results_eq(
    $$select source::text, ended_at is null from recording_finalize.storage_incidents
    where source <> 'worker'$$,
    $$values ('recorders', true)$$, 'and it is left open');

select * from finish();
rollback;
