-- Node pools (issue 20): a queue's quotas may be per pool (`pool/<pool>`, GPU milli), as
-- Run:ai's per-node-pool quotas. Pool names are DNS labels (the agent's `--node-pool` names).
-- `grus_api::admission::QuotaKey` parses the same keys; a test keeps the two in step.
ALTER TABLE queue_quotas DROP CONSTRAINT queue_quotas_resource_check;
ALTER TABLE queue_quotas ADD CONSTRAINT queue_quotas_resource_check CHECK (resource ~
    '^(gpu|gpu/[A-Za-z0-9][A-Za-z0-9._-]{0,63}|pool/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?|cpu_milli|memory_mib)$');

-- The pool each node is in, as its agent reported it (NULL: the cluster has no pools).
ALTER TABLE cluster_nodes ADD COLUMN pool text CHECK (pool IS NULL OR length(pool) BETWEEN 1 AND 253);
