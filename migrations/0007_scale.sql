-- Admission at scale (BENCHMARKS.md "Control plane API").
--
-- 1. Job events reach subscribers by tailing, not NOTIFY. A transaction that NOTIFYs takes
--    a cluster-wide lock at commit and holds it through its WAL flush, so every submission
--    (which records an event) serialized on it: commits could not be grouped. Each event now
--    carries the id of the transaction that wrote it; the api's change feed reads the events
--    of transactions that have ended (xid below the oldest running one), in order, once.
ALTER TABLE job_events ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX job_events_xid_idx ON job_events (xid);
DROP TRIGGER job_events_notify ON job_events;
DROP FUNCTION job_events_notify();

-- 2. Queue usage kept as deltas instead of summed over every admitted job at each admission
--    (that sum grew with the queue and ran under the queue lock). Triggers append a delta
--    whenever a job starts or stops holding quota, so every writer (admission, ingestion,
--    cancel, the allocator) keeps it right without knowing about it. Appending takes no
--    lock that two writers could fight over; admission, which holds the queue lock, folds a
--    queue's deltas into one row per resource as it reads them.
CREATE TABLE queue_usage_deltas (
    id        bigserial PRIMARY KEY,
    queue_id  bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
    resource  text NOT NULL,
    amount    bigint NOT NULL
);
CREATE INDEX queue_usage_deltas_queue_idx ON queue_usage_deltas (queue_id);

-- The job states that hold quota: `db::jobs::QUOTA_HOLDING_STATES` (a test checks they agree).
CREATE FUNCTION job_state_holds_quota(state text) RETURNS boolean IMMUTABLE LANGUAGE sql AS $$
    SELECT state IN ('admitted', 'dispatched', 'rejected', 'scheduled', 'running', 'preempting', 'unknown')
$$;

CREATE FUNCTION jobs_queue_usage() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    held boolean := job_state_holds_quota(OLD.state);
    holds boolean := job_state_holds_quota(NEW.state);
    moved boolean := OLD.queue_id <> NEW.queue_id;
BEGIN
    IF held AND (NOT holds OR moved) THEN
        INSERT INTO queue_usage_deltas (queue_id, resource, amount)
            SELECT OLD.queue_id, resource, -amount FROM job_demands WHERE job_id = OLD.id;
    END IF;
    IF holds AND (NOT held OR moved) THEN
        INSERT INTO queue_usage_deltas (queue_id, resource, amount)
            SELECT NEW.queue_id, resource, amount FROM job_demands WHERE job_id = NEW.id;
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER jobs_queue_usage AFTER UPDATE OF state, queue_id ON jobs
    FOR EACH ROW
    WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.queue_id IS DISTINCT FROM NEW.queue_id)
    EXECUTE FUNCTION jobs_queue_usage();

-- Demands written or removed while their job holds quota (admission inserts a job already
-- admitted, with its demands, in one statement). Statement-level, over the transition
-- tables: one delta per queue and resource for the whole statement, not one per row.
CREATE FUNCTION job_demands_queue_usage() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO queue_usage_deltas (queue_id, resource, amount)
            SELECT j.queue_id, a.resource, SUM(a.amount) FROM added a JOIN jobs j ON j.id = a.job_id
            WHERE job_state_holds_quota(j.state) GROUP BY j.queue_id, a.resource;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        INSERT INTO queue_usage_deltas (queue_id, resource, amount)
            SELECT j.queue_id, r.resource, -SUM(r.amount) FROM removed r JOIN jobs j ON j.id = r.job_id
            WHERE job_state_holds_quota(j.state) GROUP BY j.queue_id, r.resource;
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER job_demands_inserted AFTER INSERT ON job_demands
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION job_demands_queue_usage();
CREATE TRIGGER job_demands_updated AFTER UPDATE ON job_demands
    REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION job_demands_queue_usage();
CREATE TRIGGER job_demands_deleted AFTER DELETE ON job_demands
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION job_demands_queue_usage();

INSERT INTO queue_usage_deltas (queue_id, resource, amount)
    SELECT j.queue_id, d.resource, SUM(d.amount) FROM job_demands d JOIN jobs j ON j.id = d.job_id
    WHERE job_state_holds_quota(j.state) GROUP BY j.queue_id, d.resource;

-- 3. Admission's lock and reads in one round trip (`db::lock_queue_for_admission`). Each
--    statement of a VOLATILE function takes a fresh snapshot under READ COMMITTED, so the
--    reads after the lock see every job the previous holder of the lock committed. A queue's
--    deltas are folded into one row per resource once there are more than `fold_above` of
--    them: reads stay short, and most admissions write nothing here. Folding needs the lock
--    (no other fold runs); a delta committed meanwhile is not deleted and still counts.
CREATE FUNCTION lock_queue_for_admission(p_queue bigint, p_project bigint, fold_above int)
RETURNS TABLE (q_id bigint, q_project_id bigint, q_name text, q_weight double precision, q_can_borrow boolean,
               q_created_at timestamptz, isolation text, quotas json, usage json)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    locked queues;
    deltas bigint;
BEGIN
    SELECT * INTO locked FROM queues WHERE id = p_queue AND project_id = p_project FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT count(*) INTO deltas FROM queue_usage_deltas WHERE queue_id = p_queue;
    IF deltas > fold_above THEN
        WITH gone AS (DELETE FROM queue_usage_deltas WHERE queue_id = p_queue RETURNING resource, amount),
             sums AS (SELECT resource, SUM(amount)::bigint AS amount FROM gone GROUP BY resource)
        INSERT INTO queue_usage_deltas (queue_id, resource, amount)
            SELECT p_queue, resource, amount FROM sums WHERE amount <> 0;
    END IF;
    RETURN QUERY SELECT locked.id, locked.project_id, locked.name, locked.weight, locked.can_borrow,
        locked.created_at, current_setting('transaction_isolation'),
        (SELECT COALESCE(json_agg(json_build_array(qq.resource, qq.guaranteed, qq.limit_amount)
                                  ORDER BY qq.resource), '[]')
           FROM queue_quotas qq WHERE qq.queue_id = p_queue),
        (SELECT COALESCE(json_agg(json_build_array(s.resource, s.amount) ORDER BY s.resource), '[]')
           FROM (SELECT d.resource, SUM(d.amount)::bigint AS amount FROM queue_usage_deltas d
                 WHERE d.queue_id = p_queue GROUP BY d.resource HAVING SUM(d.amount) <> 0) s);
END;
$$;

-- 4. Room on each page of `jobs` for updates that change no indexed column (whyPending, the
--    allocator's most frequent write) to stay on the page: such HOT updates add no index
--    entries, so index scans do not wade through dead ones until vacuum. New pages only.
ALTER TABLE jobs SET (fillfactor = 80);
