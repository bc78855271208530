-- whyPending stored once per job shape (issue 19). Waiting jobs of one shape (demand, cluster
-- selector, clusters excluded by earlier failures) get the same reasons from the same cluster
-- views, and those reasons change whenever a cluster's free capacity does: written into every
-- waiting job, a capacity change cost a rewrite of the whole backlog (12 s for 87,000 jobs).
-- The allocator now writes each shape's reasons here, and a waiting job's `why_pending` holds
-- `{"shape": <id>}`, written only when the job changes shape; the API resolves the reference.
CREATE TABLE why_pending_shapes (
    id bigserial PRIMARY KEY,
    shape text NOT NULL UNIQUE,
    value jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
