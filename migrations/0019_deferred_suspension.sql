-- A suspension asked while the job is on its way to a cluster (dispatched, unanswered) is
-- carried out once the cluster answers: the grace it was asked with is kept until then
-- (issue 20). The dispatcher looks for such jobs every few seconds: never a scan of all jobs.
ALTER TABLE jobs ADD COLUMN suspend_grace_s integer CHECK (suspend_grace_s >= 0);
CREATE INDEX jobs_suspend_requested ON jobs (id) WHERE suspend_requested_at IS NOT NULL;
