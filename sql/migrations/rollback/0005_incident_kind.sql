-- Down step of 0005_incident_kind (run by `recording-finalize rollback`, never by migrate): the
-- kind of the worker's incidents goes back into nothing but the reason's first word, which the
-- release before reads ('HeadBucket:' for an unreachable storage). Incidents recorded since keep
-- their reasons; an open one of kind unreachable whose reason does not start so is then read as
-- transient by the older release, and closes at its next healthy cycle instead of at the next
-- HeadBucket answered: nothing fails for it either way.

set local lock_timeout = '1s';
set local statement_timeout = '1min';

alter table recording_finalize.storage_incidents
drop constraint if exists storage_incidents_kind_ck;
-- squawk-ignore ban-drop-column
alter table recording_finalize.storage_incidents
drop column if exists kind;
