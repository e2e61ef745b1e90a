-- Down step of 0004_republish_hold (run by `recording-finalize rollback`, never by migrate): the
-- columns of the republish hold go. What goes with them is the last judgement of
-- service_events and a hold in force; the release before it never holds (it republishes
-- whatever service_events does not show), and the next upgrade judges again from nothing.
-- enqueue_available's new signature is a function: rollback drops it with the others before
-- this step, and the older release's migrate creates its own.

set local lock_timeout = '1s';
set local statement_timeout = '1min';

-- squawk-ignore ban-drop-column
alter table recording_finalize.discovery_sweep
drop column if exists republish_not_before,
drop column if exists republish_held_since,
drop column if exists republish_unshown,
drop column if exists republish_sampled,
drop column if exists republish_judged_at,
drop column if exists republish_window;
