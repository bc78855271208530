-- The queue settings each agent was last sent (issue 20): a digest of the SetQueues command
-- (tenants, projects and queues with their weights), so that the dispatcher sends a cluster
-- the settings again only when they changed, or when its agent (re)started and said Hello,
-- which clears it. NULL: owed.
ALTER TABLE clusters ADD COLUMN queues_sent text;
