-- The cost of one workload (issue 21, `Workload.cost`): a job's or a service's replicas'
-- ledger intervals, found by job rather than by scanning the period.
CREATE INDEX usage_ledger_job_idx ON usage_ledger (job_id, started_at);
