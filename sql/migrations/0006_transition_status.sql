-- transition_available takes the status its caller read under the recording's row lock, instead
-- of reading the recording once more itself: one statement less for every recording made
-- Available. It is internal (no grant); the function files of the same migrate create the new
-- signature and re-create its callers. Forward-only; never edit once landed.

set local lock_timeout = '1s';
set local statement_timeout = '1min';

-- squawk-ignore ban-drop-function
drop function if exists recording_finalize_internal.transition_available(
    uuid, text, bigint, integer, text, recording_finalize_internal.session, text
);
