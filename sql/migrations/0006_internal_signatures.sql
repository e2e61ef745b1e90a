-- Two internal functions change their arguments; both are internal (no grant), and the function
-- files of the same migrate create the new signatures and re-create their callers.
-- - transition_available takes the status its caller read under the recording's row lock,
--   instead of reading the recording once more itself: one statement less for every recording
--   made Available.
-- - claim_decision returns its effects too (the row's status, attempts, due time and a
--   quarantine's last_error), so the claim and the previews carry them out instead of deriving
--   them again; it takes the row's last error and the recording's session for that text.
-- Forward-only; never edit once landed.

set local lock_timeout = '1s';
set local statement_timeout = '1min';

-- squawk-ignore ban-drop-function
drop function if exists recording_finalize_internal.transition_available(
    uuid, text, bigint, integer, text, recording_finalize_internal.session, text
);
-- squawk-ignore ban-drop-function
drop function if exists recording_finalize_internal.claim_decision(
    text, boolean, boolean, timestamptz, integer, text, integer, interval, timestamptz
);
