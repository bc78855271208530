-- Where a job that serves a port is reached (issue 21): a workspace's URL, a service replica's
-- address. Reported by the agent holding the job with its `running` (Kubernetes: the in-cluster
-- DNS name of its Service; sim: a made-up `.invalid` one); shown while the job runs.
ALTER TABLE jobs ADD COLUMN endpoint text;
