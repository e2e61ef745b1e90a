-- Why the worker opened its own storage incident becomes a column: kind 'unreachable' (its
-- HeadBucket went unanswered; the next HeadBucket that answers ends it) or 'transient' (most of
-- its HEADs came back transient while the bucket answered; a run of healthy HEADs ends it). Until
-- now the kind was told by the reason's first word ('HeadBucket:'), a text that the driver wrote
-- and outcome_decision read back. recording_finalize.storage_health decides and records it now.
-- An incident the worker's rule did not open (another source's, or one recorded by hand as
-- source worker) has no kind. Forward-only; never edit once landed.
--
-- The table is small (one row per outage): the backfill and the CHECK's scan take no time.

set local lock_timeout = '1s';
set local statement_timeout = '1min';

alter table recording_finalize.storage_incidents
add column kind varchar(16) null;

-- The worker's incidents so far, by the reason its earlier releases wrote.
update recording_finalize.storage_incidents
set kind = case when reason like 'HeadBucket:%' then 'unreachable' else 'transient' end
where source = 'worker';

alter table recording_finalize.storage_incidents
-- squawk-ignore constraint-missing-not-valid
add constraint storage_incidents_kind_ck check (
    kind is null
    or (source::text = 'worker' and kind::text = any('{unreachable,transient}'::text[]))
);

comment on column recording_finalize.storage_incidents.kind is
'Why the worker opened it (source worker, recording_finalize.storage_health): unreachable '
'(HeadBucket unanswered: a HeadBucket that answers ends it) or transient (most HEADs transient: '
'a run of healthy HEADs ends it). NULL for an incident another source or an operator recorded.';
