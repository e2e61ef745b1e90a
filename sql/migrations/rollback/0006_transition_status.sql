-- Down step of 0006_transition_status (run by `recording-finalize rollback`, never by migrate):
-- nothing of the schema to undo. transition_available's new signature is a function: rollback
-- drops it with the others before this step, and the older release's migrate creates its own.

set local lock_timeout = '1s';
set local statement_timeout = '1min';
