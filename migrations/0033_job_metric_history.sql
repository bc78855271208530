-- A job's GPU metrics over time (issue 22): every Metrics sample of the devices its running
-- replicas hold is folded into a 10-second bucket, kept a day, and a 1-minute bucket, kept 30
-- days (`api::db::metric_history`: the retention step deletes older buckets, so the table
-- stays bounded whatever the fleet's age). Sums and maxima, so buckets merge exactly.
CREATE TABLE job_metric_buckets (
    job_id              bigint NOT NULL REFERENCES jobs (id) ON DELETE RESTRICT,
    resolution_s        integer NOT NULL CHECK (resolution_s IN (10, 60)),
    bucket              timestamptz NOT NULL,
    samples             integer NOT NULL CHECK (samples > 0),
    busy_pct_sum        double precision NOT NULL,
    busy_pct_max        real NOT NULL,
    memory_used_mib_sum double precision NOT NULL,
    memory_used_mib_max bigint NOT NULL,
    PRIMARY KEY (job_id, resolution_s, bucket)
);
-- Retention deletes by age, per resolution.
CREATE INDEX job_metric_buckets_age_idx ON job_metric_buckets (resolution_s, bucket);
