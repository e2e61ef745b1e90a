-- Down step of 0006_internal_signatures (run by `recording-finalize rollback`, never by migrate):
-- nothing of the schema to undo. The new signatures are functions: rollback drops them with the
-- others before this step, and the older release's migrate creates its own.

set local lock_timeout = '1s';
set local statement_timeout = '1min';
