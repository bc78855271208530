-- A job that ends closes its replicas' open usage intervals by job (ingestion, one job or a
-- batch of them): without this index that was a scan of every open interval of the fleet.
CREATE INDEX usage_ledger_open_job_idx ON usage_ledger (job_id) WHERE ended_at IS NULL;
