-- A queue's over-quota weight per node pool where it differs from `queues.weight` (issue 20:
-- queues get guarantee, limit and over-quota weight per pool, as Run:ai's per-node-pool
-- quotas). Sent to the agents in SetQueues; their schedulers share each pool by these.
CREATE TABLE queue_pool_weights (
    queue_id  bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
    pool      text NOT NULL CHECK (pool ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
    weight    double precision NOT NULL CHECK (weight > 0 AND weight <= 1e6),
    PRIMARY KEY (queue_id, pool)
);
