-- Room on every outbox page for the relay's lease: the lease update becomes a HOT update.
-- Forward-only: never edit this file once it has landed; add a new migration instead.
--
-- relay_claim leases each row (relay_lease_until, no index on it) before it is published. On a
-- full page that update writes a new tuple elsewhere and new entries in all three indexes; with
-- half of each page left free it stays on the page (HOT) and touches no index. Measured with
-- make bench (30,000 unpublished rows, relay batch 5,000, two runs each): HOT lease updates
-- 0 -> 30,000, relay_claim 2.0 -> 1.3 s, PostgreSQL CPU 2.5 -> 1.4 s, 7,200-7,450 -> 9,400
-- events/s. The price: freshly written outbox pages are half full (about twice the space for
-- the same rows). The other hot updates cannot be HOT whatever the fillfactor (they change an
-- indexed column or an index predicate: status, next_attempt_at, published_at).
-- Only pages written from now on are filled to 50 %; ALTER ... SET (fillfactor) takes a SHARE
-- UPDATE EXCLUSIVE lock and rewrites nothing.

set local lock_timeout = '5s';
set local statement_timeout = '5min';

alter table messenger.integration_outbox set (fillfactor = 50);
