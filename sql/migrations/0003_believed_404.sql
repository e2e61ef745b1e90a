-- Whether a 404 is believed is decided in one place, recording_finalize_internal.outcome_decision:
-- the worker reports what it saw of the storage (its HeadBucket, the objects it found, the known
-- uploads' HEADs) and no longer reads a 404 as transient or a configuration error itself. Both
-- functions take those facts as new arguments (NULL by default): the old signatures go, the
-- files of sql/functions create the new ones. Forward-only; never edit once landed.
--
-- A 0.3.x worker still running meanwhile names its arguments: its calls resolve to the new
-- apply_outcome (the new arguments default to NULL, not reported: it judged those 404s itself).
-- A call that runs between this drop and the function files of the same migrate fails and is
-- retried by its next cycle. outcome_decision is internal (no grant): only apply_outcome and
-- preview_outcomes call it.

set local lock_timeout = '1s';
set local statement_timeout = '1min';

-- squawk-ignore-file ban-drop-function
drop function if exists recording_finalize.apply_outcome(
    uuid, uuid, text, text, bigint, integer, text, text
);
drop function if exists recording_finalize_internal.outcome_decision(
    text, text, text, integer, integer, timestamptz, interval, interval, timestamptz, boolean
);
