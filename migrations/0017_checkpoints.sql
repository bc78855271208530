-- The checkpoint handshake (issue 20): the last checkpoint a job acknowledged before it was
-- stopped to make room, as its agent reported it. Its reference is also written into the
-- stored spec (`spec.checkpoint.resume_from`), so the next Dispatch hands it to the new run.
ALTER TABLE jobs
    ADD COLUMN checkpoint_ref text CHECK (checkpoint_ref IS NULL OR length(checkpoint_ref) BETWEEN 1 AND 1024),
    ADD COLUMN checkpoint_at timestamptz;
