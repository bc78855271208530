-- Suspension by policy (issue 20): a queue may suspend its borrowed work during a daily window
-- (UTC minutes from midnight; across midnight when until < from), e.g. batch work borrowing
-- idle GPUs gives them back during office hours. Rules in api/src/domain/class_of_service.rs.
ALTER TABLE queues
    ADD COLUMN borrowed_suspend_from_min smallint CHECK (borrowed_suspend_from_min BETWEEN 0 AND 1439),
    ADD COLUMN borrowed_suspend_until_min smallint CHECK (borrowed_suspend_until_min BETWEEN 0 AND 1439),
    ADD CONSTRAINT queues_borrowed_suspend_window CHECK (
        (borrowed_suspend_from_min IS NULL) = (borrowed_suspend_until_min IS NULL)
        AND (borrowed_suspend_from_min IS NULL OR borrowed_suspend_from_min <> borrowed_suspend_until_min));

-- Suspended by its queue's window (not by a person): resumed when the window closes.
ALTER TABLE jobs ADD COLUMN suspended_by_policy boolean NOT NULL DEFAULT false;
-- The window step looks for these every few seconds: never a scan of all jobs.
CREATE INDEX jobs_suspended_by_policy ON jobs (id) WHERE suspended_by_policy;
