-- Suspend / resume (issue 20): a suspended job holds no capacity and no quota
-- (`job_state_holds_quota` does not list it) and keeps its history and events; resumeJob
-- admits it again, and it is dispatched under a new epoch, anywhere it fits.
ALTER TABLE jobs DROP CONSTRAINT jobs_state_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_state_check CHECK (state IN (
    'pending', 'admitted', 'dispatched', 'rejected', 'scheduled', 'running',
    'preempting', 'preempted', 'succeeded', 'failed', 'cancelled', 'unknown', 'suspended'));

-- Set when a suspension was asked for while a cluster held the job: its eviction ends in
-- `suspended` instead of a requeue. Cleared when it resumes.
ALTER TABLE jobs ADD COLUMN suspend_requested_at timestamptz;
