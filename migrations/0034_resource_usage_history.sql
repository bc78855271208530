-- Each replica's CPU, memory, disk and network use, and each cluster's GPU metrics over time
-- (issue 22).
--
-- The latest reading per running replica (`replica_usage`, replaced by each Metrics event);
-- a job's totals over its replicas folded into the same 10 s / 1 min buckets as its GPU
-- metrics (`usage_samples` counts them: a CPU-only job has buckets with no GPU sample); the
-- job's whole-run aggregates beside its GPU ones (`job_utilization`); and per cluster the mean
-- busy % and total memory of its devices, in buckets pruned like the jobs' own.
CREATE TABLE replica_usage (
    replica_id     bigint PRIMARY KEY REFERENCES replicas (id) ON DELETE RESTRICT,
    cpu_milli      bigint NOT NULL CHECK (cpu_milli >= 0),
    memory_mib     bigint NOT NULL CHECK (memory_mib >= 0),
    disk_read_bps  bigint NOT NULL CHECK (disk_read_bps >= 0),
    disk_write_bps bigint NOT NULL CHECK (disk_write_bps >= 0),
    net_rx_bps     bigint NOT NULL CHECK (net_rx_bps >= 0),
    net_tx_bps     bigint NOT NULL CHECK (net_tx_bps >= 0),
    at             timestamptz NOT NULL
);

ALTER TABLE job_metric_buckets DROP CONSTRAINT job_metric_buckets_samples_check;
ALTER TABLE job_metric_buckets
    ADD COLUMN usage_samples      integer NOT NULL DEFAULT 0 CHECK (usage_samples >= 0),
    ADD COLUMN cpu_milli_sum      double precision NOT NULL DEFAULT 0,
    ADD COLUMN cpu_milli_max      bigint NOT NULL DEFAULT 0,
    ADD COLUMN memory_mib_sum     double precision NOT NULL DEFAULT 0,
    ADD COLUMN memory_mib_max     bigint NOT NULL DEFAULT 0,
    ADD COLUMN disk_read_bps_sum  double precision NOT NULL DEFAULT 0,
    ADD COLUMN disk_write_bps_sum double precision NOT NULL DEFAULT 0,
    ADD COLUMN net_rx_bps_sum     double precision NOT NULL DEFAULT 0,
    ADD COLUMN net_tx_bps_sum     double precision NOT NULL DEFAULT 0,
    ADD CONSTRAINT job_metric_buckets_some_sample CHECK (samples >= 0 AND (samples > 0 OR usage_samples > 0));

ALTER TABLE job_utilization
    ADD COLUMN usage_samples  bigint NOT NULL DEFAULT 0 CHECK (usage_samples >= 0),
    ADD COLUMN cpu_milli_sum  double precision NOT NULL DEFAULT 0,
    ADD COLUMN cpu_milli_max  bigint NOT NULL DEFAULT 0,
    ADD COLUMN memory_mib_sum double precision NOT NULL DEFAULT 0,
    ADD COLUMN memory_mib_max bigint NOT NULL DEFAULT 0;

CREATE TABLE cluster_metric_buckets (
    cluster_id          text NOT NULL REFERENCES clusters (id) ON DELETE RESTRICT,
    resolution_s        integer NOT NULL CHECK (resolution_s IN (10, 60)),
    bucket              timestamptz NOT NULL,
    samples             integer NOT NULL CHECK (samples > 0),
    busy_pct_sum        double precision NOT NULL,
    busy_pct_max        real NOT NULL,
    memory_used_mib_sum double precision NOT NULL,
    memory_used_mib_max bigint NOT NULL,
    PRIMARY KEY (cluster_id, resolution_s, bucket)
);
CREATE INDEX cluster_metric_buckets_age_idx ON cluster_metric_buckets (resolution_s, bucket);
