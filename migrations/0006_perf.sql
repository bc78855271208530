-- Indexes for the GraphQL read path (the top-level `jobs` query and its DataLoaders).
--
-- `jobs(filter: { userId })`: a submitter's jobs newest first, without scanning the project.
CREATE INDEX jobs_submitted_by_idx ON jobs (submitted_by, id DESC);
