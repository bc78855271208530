-- The allocator loop's bookkeeping on dispatches (intent, STYLE habit 3).
--
-- * `reservation`: what the allocator promised the job in its cluster (GPU takes per model,
--   CPU, memory). While the dispatch is `pending` and younger than the reservation TTL it is
--   deducted from the cluster's capacity summary; kept in the table so that a new leader
--   after fail-over sees the same reservations. Also what reclaim gives back on eviction.
-- * `sent_at`: the Dispatch command was appended to the cluster's command stream. NULL after
--   the commit means "not confirmed sent": the next round sends it again with the same
--   message id (the agent is idempotent on it).
-- * `cancel_sent_at`: a Cancel for this epoch reached the stream (timed-out dispatches and
--   cancelled jobs with a live dispatch); NULL while one is owed.
-- * `evict_grace_s` / `evict_sent_at`: reclaim decided to evict the job running under this
--   dispatch (with that grace period) and whether the Evict reached the stream.
ALTER TABLE dispatches
    ADD COLUMN reservation     jsonb CHECK (reservation IS NULL OR jsonb_typeof(reservation) = 'object'),
    ADD COLUMN sent_at         timestamptz,
    ADD COLUMN cancel_sent_at  timestamptz,
    ADD COLUMN evict_grace_s   integer CHECK (evict_grace_s IS NULL OR evict_grace_s >= 0),
    ADD COLUMN evict_sent_at   timestamptz;

-- Each round reads the unanswered dispatches (reservations, timeouts, unsent commands).
CREATE INDEX dispatches_pending_idx ON dispatches (cluster_id, dispatched_at) WHERE outcome = 'pending';
-- Jobs waiting for a cluster are read every round.
CREATE INDEX jobs_waiting_idx ON jobs (id) WHERE state IN ('admitted', 'rejected');
