-- Indexes that keep per-event and per-round statements proportional to what they touch, not
-- to the history of the fleet.

-- A job that ends closes its replicas' open usage intervals by job (ingestion, one job or a
-- batch of them): without this index that was a scan of every open interval of the fleet.
CREATE INDEX usage_ledger_open_job_idx ON usage_ledger (job_id) WHERE ended_at IS NULL;

-- Cancels owed (`owed_cancels`, every allocator round): timed-out dispatches, and the live
-- dispatch of a cancelled job. The second kind was found by joining every dispatch whose
-- cancel was never sent (every acknowledged dispatch in history) with its job; now the
-- cancellation marks the dispatch, and a partial index holds only what is owed.
ALTER TABLE dispatches ADD COLUMN cancel_owed boolean NOT NULL DEFAULT false;

CREATE FUNCTION jobs_cancel_owed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE dispatches SET cancel_owed = true
    WHERE job_id = NEW.id AND epoch = NEW.epoch AND outcome IN ('pending', 'acknowledged');
    RETURN NULL;
END;
$$;
CREATE TRIGGER jobs_cancel_owed AFTER UPDATE OF state ON jobs
    FOR EACH ROW WHEN (NEW.state = 'cancelled' AND OLD.state IS DISTINCT FROM 'cancelled')
    EXECUTE FUNCTION jobs_cancel_owed();

UPDATE dispatches d SET cancel_owed = true FROM jobs j
WHERE j.id = d.job_id AND j.state = 'cancelled' AND d.epoch = j.epoch
  AND d.outcome IN ('pending', 'acknowledged');

CREATE INDEX dispatches_cancel_owed_idx ON dispatches (job_id, epoch)
    WHERE cancel_sent_at IS NULL AND (outcome = 'timed_out' OR cancel_owed);
