-- Workload types (issue 21): a job is a batch job, an interactive workspace or (later) a
-- replica set of an inference service. The type follows from the stored spec, so it is a
-- generated column: every insert path (the batched admission function included) gets it
-- without knowing it, and billing and the jobs list can filter and group by it.
ALTER TABLE jobs ADD COLUMN workload_type text NOT NULL
    GENERATED ALWAYS AS (CASE WHEN spec ? 'workspace' THEN 'workspace' ELSE 'batch' END) STORED;

-- When the job's GPUs were last busy (a Metrics sample at or above the activity threshold):
-- what a workspace's idle rule measures from.
ALTER TABLE job_utilization ADD COLUMN last_active_at timestamptz;

-- The idle warning a workspace was given: for the activity it was measured from, and when.
-- Activity after it voids it; without activity the workspace is stopped or suspended once
-- the warning's grace has passed.
CREATE TABLE workspace_idle_warnings (
    job_id         bigint PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    active_at      timestamptz NOT NULL,
    warned_at      timestamptz NOT NULL
);

-- The dispatcher's idle step reads the running workspaces every few seconds.
CREATE INDEX jobs_running_workspaces_idx ON jobs (id) WHERE workload_type = 'workspace' AND state = 'running';
