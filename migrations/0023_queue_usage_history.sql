-- Each queue's decayed past GPU usage (issue 20, "fair share with decayed usage at every
-- level"): GPU milli-seconds held, each second's weight halving every --fair-share-half-life,
-- as of `as_of`. Rolled forward by the allocator's leader from what each queue holds; a
-- project's and a tenant's history is their queues' together. Empty unless a half-life is set.
CREATE TABLE queue_usage_history (
    queue_id     bigint PRIMARY KEY REFERENCES queues (id) ON DELETE CASCADE,
    gpu_milli_s  double precision NOT NULL CHECK (gpu_milli_s >= 0),
    as_of        timestamptz NOT NULL
);
