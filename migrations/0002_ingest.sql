-- Event ingestion (agents -> api): idempotency, cluster observations, live GPU metrics and the
-- `unknown` job state (a running job whose cluster stopped answering).
--
-- Everything here is observation (STYLE habit 3): rebuilt from the agents' next Inventory,
-- Metrics or Snapshot, except `ingested_messages` and `stale_cancels`, which make redelivery
-- and fencing idempotent.

-- A running job whose cluster has been silent longer than the loss timeout: neither
-- re-dispatched (it may still run there) nor counted as running (nobody confirms it).
ALTER TABLE jobs DROP CONSTRAINT jobs_state_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_state_check CHECK (state IN (
    'pending', 'admitted', 'dispatched', 'rejected', 'scheduled', 'running',
    'preempting', 'preempted', 'succeeded', 'failed', 'cancelled', 'unknown'));

-- Every agent message applied (or deliberately ignored), by its envelope id, written in the
-- transaction that applies it: a redelivered message finds its row and changes nothing.
CREATE TABLE ingested_messages (
    cluster_id   text NOT NULL REFERENCES clusters (id) ON DELETE RESTRICT,
    message_id   text NOT NULL CHECK (length(message_id) BETWEEN 1 AND 200),
    kind         text NOT NULL,
    -- 'applied' | 'stale' (an older epoch) | 'ignored' (nothing to do, e.g. unknown job).
    outcome      text NOT NULL CHECK (outcome IN ('applied', 'stale', 'ignored')),
    ingested_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (cluster_id, message_id)
);
CREATE INDEX ingested_messages_age_idx ON ingested_messages (ingested_at);

-- A Cancel sent to a cluster that still reported a job under a fenced-off epoch: one per
-- (job, epoch, cluster), so a chatty stale agent does not flood its command stream.
CREATE TABLE stale_cancels (
    job_id      bigint NOT NULL REFERENCES jobs (id) ON DELETE RESTRICT,
    epoch       bigint NOT NULL CHECK (epoch > 0),
    cluster_id  text NOT NULL REFERENCES clusters (id) ON DELETE RESTRICT,
    sent_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, epoch, cluster_id)
);

-- The agent's Hello, and when the last Capacity summary arrived.
ALTER TABLE clusters
    ADD COLUMN agent_version       text,
    ADD COLUMN agent_capabilities  text[] NOT NULL DEFAULT '{}',
    ADD COLUMN capacity_at         timestamptz,
    ADD COLUMN inventory_at        timestamptz;

-- Nodes as the last Inventory (or Snapshot) listed them; `gpus` is the grus-protocol
-- `GpuInfo` list. Replaced as a whole per cluster on each Inventory.
CREATE TABLE cluster_nodes (
    cluster_id  text NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 253),
    labels      jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(labels) = 'object'),
    rack        text,
    cpu_milli   bigint NOT NULL CHECK (cpu_milli >= 0),
    memory_mib  bigint NOT NULL CHECK (memory_mib >= 0),
    healthy     boolean NOT NULL,
    gpus        jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(gpus) = 'array'),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (cluster_id, name)
);

-- Latest profiler reading per device (grus-protocol GpuMetrics), overwritten by each Metrics.
CREATE TABLE gpu_metrics (
    cluster_id       text NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    node             text NOT NULL,
    index            integer NOT NULL CHECK (index >= 0),
    busy_pct         real NOT NULL CHECK (busy_pct >= 0 AND busy_pct <= 100),
    memory_used_mib  bigint NOT NULL CHECK (memory_used_mib >= 0),
    power_w          real,
    temperature_c    real,
    at               timestamptz NOT NULL,
    PRIMARY KEY (cluster_id, node, index)
);

-- Per-job utilization aggregates over every Metrics sample of the devices its running
-- replicas held (mapped through replicas.node + devices).
CREATE TABLE job_utilization (
    job_id               bigint PRIMARY KEY REFERENCES jobs (id) ON DELETE RESTRICT,
    samples              bigint NOT NULL DEFAULT 0 CHECK (samples >= 0),
    busy_pct_sum         double precision NOT NULL DEFAULT 0,
    busy_pct_max         real NOT NULL DEFAULT 0,
    memory_used_mib_sum  double precision NOT NULL DEFAULT 0,
    memory_used_mib_max  bigint NOT NULL DEFAULT 0,
    last_busy_pct        real,
    last_memory_used_mib bigint,
    updated_at           timestamptz NOT NULL DEFAULT now()
);
