-- Live work by where it runs, for the allocator round's look at drains
-- (`db::operations::evict_landed_on_drains`): a drained cluster's scheduled and running jobs,
-- and the placed and running replicas on a drained node, without walking every job ever sent to
-- the cluster or every replica.
CREATE INDEX jobs_live_cluster_idx ON jobs (cluster_id) WHERE state IN ('scheduled', 'running');
CREATE INDEX replicas_live_node_idx ON replicas (cluster_id, node) WHERE state IN ('placed', 'running');
