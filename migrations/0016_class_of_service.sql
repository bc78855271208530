-- A queue's class of service (issue 20; rules in api/src/domain/class_of_service.rs): a
-- maximum wait after which a waiting job's priority is raised one class per period (aging), and
-- the default and maximum runtime of its jobs. NULL: none.
ALTER TABLE queues
    ADD COLUMN max_wait_s integer CHECK (max_wait_s IS NULL OR max_wait_s BETWEEN 60 AND 31622400),
    ADD COLUMN default_runtime_s integer CHECK (default_runtime_s IS NULL OR default_runtime_s BETWEEN 1 AND 31622400),
    ADD COLUMN max_runtime_s integer CHECK (max_runtime_s IS NULL OR max_runtime_s BETWEEN 1 AND 31622400),
    ADD CONSTRAINT queues_default_runtime_within_max
        CHECK (default_runtime_s IS NULL OR max_runtime_s IS NULL OR default_runtime_s <= max_runtime_s);

-- When the job last began to wait for a cluster (submitted, requeued after a preemption,
-- resumed), and when aging last raised it; a bounce between clusters (dispatched, rejected,
-- admitted again) is still the same wait.
ALTER TABLE jobs
    ADD COLUMN waiting_since timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN aged_at timestamptz;
UPDATE jobs SET waiting_since = submitted_at WHERE state IN ('pending', 'admitted', 'rejected');

CREATE FUNCTION jobs_waiting_since() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state = 'admitted' AND OLD.state NOT IN ('admitted', 'dispatched', 'rejected') THEN
        NEW.waiting_since := now();
        NEW.aged_at := NULL;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER jobs_waiting_since BEFORE UPDATE OF state ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobs_waiting_since();
