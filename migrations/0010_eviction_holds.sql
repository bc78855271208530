-- The job a reclaim eviction makes room for (issue 18): an Evict sent again (after a failed send
-- or a Redis restart) carries the same hold as the first, so the agent keeps the freed nodes
-- for that job. NULL: an eviction without a hold.
ALTER TABLE dispatches ADD COLUMN evict_for_job bigint REFERENCES jobs (id) ON DELETE SET NULL;
