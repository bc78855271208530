-- Grus control plane schema (DESIGN.md: PostgreSQL is the source of truth).
--
-- Conventions:
-- * Money is numeric, time is timestamptz, free-form documents are jsonb objects.
-- * Rows that other data points at (tenants, projects, users, clusters, jobs) are never
--   deleted from under that data: foreign keys use ON DELETE RESTRICT unless the child is
--   pure configuration of its parent (quotas of a queue, memberships).
-- * Intent and observation are kept apart (STYLE habit 3): `jobs.cluster_id/epoch` and
--   `dispatches` are what the control plane wants; `replicas.state/node/devices` and
--   `job_events` rows with a `message_id` are what agents reported. A NULL observation means
--   "not reported yet", never "absent".
-- * Quota amounts: keys 'gpu' and 'gpu/<model>' are in GPU milli (1000 = one whole GPU),
--   'cpu_milli' in CPU milli, 'memory_mib' in MiB.

CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE tenants (
    id          bigserial PRIMARY KEY,
    slug        text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
    id          bigserial PRIMARY KEY,
    tenant_id   bigint NOT NULL REFERENCES tenants (id) ON DELETE RESTRICT,
    -- Globally unique: job YAML names a project by slug alone.
    slug        text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_tenant_idx ON projects (tenant_id);

CREATE TABLE users (
    id              bigserial PRIMARY KEY,
    -- The OIDC `sub` (qualified by issuer when several issuers are trusted).
    subject         text NOT NULL UNIQUE CHECK (length(subject) BETWEEN 1 AND 512),
    email           text,
    display_name    text,
    platform_admin  boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    id          bigserial PRIMARY KEY,
    user_id     bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tenant_id   bigint REFERENCES tenants (id) ON DELETE CASCADE,
    project_id  bigint REFERENCES projects (id) ON DELETE CASCADE,
    role        text NOT NULL CHECK (role IN ('tenant_admin', 'project_admin', 'member', 'viewer')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- Exactly one scope; tenant_admin only on a tenant, the other roles only on a project.
    CONSTRAINT memberships_one_scope CHECK ((tenant_id IS NULL) <> (project_id IS NULL)),
    CONSTRAINT memberships_role_scope CHECK (
        (role = 'tenant_admin') = (tenant_id IS NOT NULL)
    ),
    -- NULLs are distinct, so these only bind rows of the matching scope.
    CONSTRAINT memberships_user_tenant_key UNIQUE (user_id, tenant_id),
    CONSTRAINT memberships_user_project_key UNIQUE (user_id, project_id)
);
CREATE INDEX memberships_project_idx ON memberships (project_id);

CREATE TABLE api_tokens (
    id            bigserial PRIMARY KEY,
    user_id       bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name          text NOT NULL DEFAULT '',
    -- SHA-256 of the secret; the secret itself is shown once and never stored.
    token_hash    bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    -- The first characters of the secret, shown in listings so users can tell tokens apart.
    prefix        text NOT NULL CHECK (length(prefix) BETWEEN 4 AND 16),
    scopes        text[] NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz,
    revoked_at    timestamptz,
    last_used_at  timestamptz,
    CHECK (expires_at IS NULL OR expires_at > created_at)
);
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id);

CREATE TABLE clusters (
    id                text PRIMARY KEY CHECK (id ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
    display_name      text,
    -- SHA-256 of the per-cluster registration token.
    agent_token_hash  bytea UNIQUE CHECK (agent_token_hash IS NULL OR length(agent_token_hash) = 32),
    labels            jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(labels) = 'object'),
    -- Observed: 'unknown' until the first heartbeat.
    health            text NOT NULL DEFAULT 'unknown'
                      CHECK (health IN ('unknown', 'healthy', 'degraded', 'unreachable')),
    cordoned          boolean NOT NULL DEFAULT false,
    last_heartbeat    timestamptz,
    -- Last capacity summary (grus-protocol CapacitySummary); NULL = never reported.
    capacity          jsonb CHECK (capacity IS NULL OR jsonb_typeof(capacity) = 'object'),
    created_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE queues (
    id          bigserial PRIMARY KEY,
    project_id  bigint NOT NULL REFERENCES projects (id) ON DELETE RESTRICT,
    name        text NOT NULL CHECK (name ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
    weight      double precision NOT NULL DEFAULT 1 CHECK (weight > 0 AND weight <= 1e6),
    can_borrow  boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT queues_project_name_key UNIQUE (project_id, name),
    -- Target of jobs' composite key: a job's queue belongs to the job's project.
    CONSTRAINT queues_id_project_key UNIQUE (id, project_id)
);

CREATE TABLE queue_quotas (
    queue_id      bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
    resource      text NOT NULL
                  CHECK (resource ~ '^(gpu|gpu/[A-Za-z0-9][A-Za-z0-9._-]{0,63}|cpu_milli|memory_mib)$'),
    guaranteed    bigint NOT NULL DEFAULT 0 CHECK (guaranteed >= 0),
    -- NULL: no limit beyond what can be borrowed.
    limit_amount  bigint CHECK (limit_amount IS NULL OR limit_amount >= guaranteed),
    PRIMARY KEY (queue_id, resource)
);

CREATE TABLE jobs (
    id              bigserial PRIMARY KEY,
    project_id      bigint NOT NULL REFERENCES projects (id) ON DELETE RESTRICT,
    queue_id        bigint NOT NULL,
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 253),
    priority        integer NOT NULL,
    priority_class  text NOT NULL,
    preemptible     boolean NOT NULL DEFAULT false,
    -- The submitted job (DESIGN.md job model), as validated by the api.
    spec            jsonb NOT NULL CHECK (jsonb_typeof(spec) = 'object'),
    state           text NOT NULL DEFAULT 'pending' CHECK (state IN (
                        'pending', 'admitted', 'dispatched', 'rejected', 'scheduled', 'running',
                        'preempting', 'preempted', 'succeeded', 'failed', 'cancelled')),
    -- Admitted beyond the queue's guarantee: preemptible whatever `preemptible` says.
    borrowed        boolean NOT NULL DEFAULT false,
    submitted_by    bigint NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
    submitted_at    timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    -- Intent: the cluster the job is dispatched to and the current fencing epoch.
    cluster_id      text REFERENCES clusters (id) ON DELETE RESTRICT,
    epoch           bigint NOT NULL DEFAULT 0 CHECK (epoch >= 0),
    why_pending     jsonb,
    CONSTRAINT jobs_queue_in_project_fk FOREIGN KEY (queue_id, project_id)
        REFERENCES queues (id, project_id) ON DELETE RESTRICT
);
CREATE INDEX jobs_project_state_idx ON jobs (project_id, state);
-- Keyset pagination: newest first within a project.
CREATE INDEX jobs_project_id_idx ON jobs (project_id, id DESC);
-- Admission sums the live jobs of one queue.
CREATE INDEX jobs_queue_state_idx ON jobs (queue_id, state);
CREATE INDEX jobs_cluster_idx ON jobs (cluster_id) WHERE cluster_id IS NOT NULL;

-- What an admitted job charges against its queue's quotas, per resource key (units as in
-- queue_quotas). Written once at admission so usage never depends on re-parsing `spec`.
CREATE TABLE job_demands (
    job_id    bigint NOT NULL REFERENCES jobs (id) ON DELETE RESTRICT,
    resource  text NOT NULL,
    amount    bigint NOT NULL CHECK (amount > 0),
    PRIMARY KEY (job_id, resource)
);

CREATE TABLE tasks (
    id        bigserial PRIMARY KEY,
    job_id    bigint NOT NULL REFERENCES jobs (id) ON DELETE RESTRICT,
    name      text NOT NULL CHECK (name ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
    replicas  integer NOT NULL CHECK (replicas BETWEEN 1 AND 100000),
    spec      jsonb NOT NULL CHECK (jsonb_typeof(spec) = 'object'),
    state     text NOT NULL DEFAULT 'pending' CHECK (state IN (
                  'pending', 'placed', 'running', 'succeeded', 'failed', 'evicted', 'cancelled')),
    CONSTRAINT tasks_job_name_key UNIQUE (job_id, name)
);

CREATE TABLE replicas (
    id          bigserial PRIMARY KEY,
    job_id      bigint NOT NULL REFERENCES jobs (id) ON DELETE RESTRICT,
    task_id     bigint NOT NULL REFERENCES tasks (id) ON DELETE RESTRICT,
    index       integer NOT NULL CHECK (index >= 0),
    -- Observed (agent reports); NULL node/devices = not placed or not reported.
    state       text NOT NULL DEFAULT 'pending' CHECK (state IN (
                    'pending', 'placed', 'running', 'succeeded', 'failed', 'evicted', 'cancelled')),
    node        text,
    devices     jsonb,
    cluster_id  text REFERENCES clusters (id) ON DELETE RESTRICT,
    epoch       bigint CHECK (epoch IS NULL OR epoch >= 0),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT replicas_task_index_key UNIQUE (task_id, index)
);
CREATE INDEX replicas_job_idx ON replicas (job_id);

-- Invariant 6: every state change of a job, task or replica, append-only.
CREATE TABLE job_events (
    id           bigserial PRIMARY KEY,
    job_id       bigint NOT NULL REFERENCES jobs (id) ON DELETE RESTRICT,
    task_id      bigint REFERENCES tasks (id) ON DELETE RESTRICT,
    replica_id   bigint REFERENCES replicas (id) ON DELETE RESTRICT,
    from_state   text,
    to_state     text NOT NULL,
    cause        text NOT NULL CHECK (length(cause) BETWEEN 1 AND 2000),
    -- 'user:<id>', 'agent:<cluster>', 'system:<component>'.
    actor        text NOT NULL CHECK (length(actor) BETWEEN 1 AND 300),
    -- When it happened (agent time for reported events) and when it was recorded here.
    at           timestamptz NOT NULL DEFAULT now(),
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    cluster_id   text REFERENCES clusters (id) ON DELETE RESTRICT,
    epoch        bigint,
    -- Stream message id of the agent event: ingestion is idempotent on it.
    message_id   text UNIQUE,
    CHECK (replica_id IS NULL OR task_id IS NOT NULL)
);
CREATE INDEX job_events_job_idx ON job_events (job_id, id);

CREATE FUNCTION job_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'job_events is append-only' USING ERRCODE = 'GR001';
END;
$$;
CREATE TRIGGER job_events_no_update BEFORE UPDATE OR DELETE ON job_events
    FOR EACH ROW EXECUTE FUNCTION job_events_append_only();
CREATE TRIGGER job_events_no_truncate BEFORE TRUNCATE ON job_events
    FOR EACH STATEMENT EXECUTE FUNCTION job_events_append_only();

-- Defence in depth for invariant 6: a job's state may only change in a transaction that
-- also recorded the matching event (recorded_at = now() is the transaction's start time).
CREATE FUNCTION jobs_state_needs_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state IS DISTINCT FROM OLD.state AND NOT EXISTS (
        SELECT 1 FROM job_events e
        WHERE e.job_id = NEW.id AND e.task_id IS NULL AND e.to_state = NEW.state
          AND e.from_state IS NOT DISTINCT FROM OLD.state AND e.recorded_at = now()
    ) THEN
        RAISE EXCEPTION 'job state change without an event' USING ERRCODE = 'GR002';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER jobs_state_event BEFORE UPDATE OF state ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobs_state_needs_event();

CREATE FUNCTION units_state_needs_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state IS DISTINCT FROM OLD.state AND NOT EXISTS (
        SELECT 1 FROM job_events e
        WHERE e.job_id = NEW.job_id AND e.to_state = NEW.state
          AND e.from_state IS NOT DISTINCT FROM OLD.state AND e.recorded_at = now()
          AND CASE TG_TABLE_NAME
                WHEN 'tasks' THEN e.task_id = NEW.id AND e.replica_id IS NULL
                ELSE e.replica_id = NEW.id
              END
    ) THEN
        RAISE EXCEPTION '% state change without an event', TG_TABLE_NAME USING ERRCODE = 'GR002';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER tasks_state_event BEFORE UPDATE OF state ON tasks
    FOR EACH ROW EXECUTE FUNCTION units_state_needs_event();
CREATE TRIGGER replicas_state_event BEFORE UPDATE OF state ON replicas
    FOR EACH ROW EXECUTE FUNCTION units_state_needs_event();

-- Intent: each dispatch of a job to a cluster, fenced by an epoch that only grows.
CREATE TABLE dispatches (
    id               bigserial PRIMARY KEY,
    job_id           bigint NOT NULL REFERENCES jobs (id) ON DELETE RESTRICT,
    epoch            bigint NOT NULL CHECK (epoch > 0),
    cluster_id       text NOT NULL REFERENCES clusters (id) ON DELETE RESTRICT,
    dispatched_at    timestamptz NOT NULL DEFAULT now(),
    acknowledged_at  timestamptz,
    outcome          text NOT NULL DEFAULT 'pending' CHECK (outcome IN (
                         'pending', 'acknowledged', 'rejected', 'timed_out', 'superseded')),
    reason           text,
    CONSTRAINT dispatches_job_epoch_key UNIQUE (job_id, epoch)
);

CREATE TABLE price_book (
    id                             bigserial PRIMARY KEY,
    gpu_model                      text NOT NULL CHECK (length(gpu_model) BETWEEN 1 AND 64),
    list_price_per_gpu_hour        numeric(18, 6) NOT NULL CHECK (list_price_per_gpu_hour >= 0),
    contracted_price_per_gpu_hour  numeric(18, 6) NOT NULL CHECK (contracted_price_per_gpu_hour >= 0),
    currency                       text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
    effective_from                 timestamptz NOT NULL,
    -- NULL: open-ended.
    effective_to                   timestamptz,
    CHECK (effective_to IS NULL OR effective_to > effective_from),
    -- At most one price per model at any instant.
    CONSTRAINT price_book_no_overlap EXCLUDE USING gist (
        gpu_model WITH =,
        tstzrange(effective_from, effective_to, '[)') WITH &&
    )
);

-- One row per replica run interval (ended_at NULL while running).
CREATE TABLE usage_ledger (
    id                   bigserial PRIMARY KEY,
    project_id           bigint NOT NULL REFERENCES projects (id) ON DELETE RESTRICT,
    queue_id             bigint NOT NULL REFERENCES queues (id) ON DELETE RESTRICT,
    cluster_id           text NOT NULL REFERENCES clusters (id) ON DELETE RESTRICT,
    gpu_model            text NOT NULL,
    -- GPU milli held by the replica (8 whole GPUs = 8000; a quarter GPU = 250).
    gpu_milli            bigint NOT NULL CHECK (gpu_milli > 0),
    started_at           timestamptz NOT NULL,
    ended_at             timestamptz,
    job_id               bigint NOT NULL REFERENCES jobs (id) ON DELETE RESTRICT,
    task_id              bigint NOT NULL REFERENCES tasks (id) ON DELETE RESTRICT,
    replica_id           bigint NOT NULL REFERENCES replicas (id) ON DELETE RESTRICT,
    user_id              bigint NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
    ended_by_preemption  boolean NOT NULL DEFAULT false,
    CHECK (ended_at IS NULL OR ended_at >= started_at),
    -- Re-delivered agent events must not open a second interval.
    CONSTRAINT usage_ledger_replica_start_key UNIQUE (replica_id, started_at)
);
CREATE INDEX usage_ledger_period_idx ON usage_ledger (started_at, ended_at);
CREATE INDEX usage_ledger_project_idx ON usage_ledger (project_id, started_at);

CREATE TABLE exports (
    id            bigserial PRIMARY KEY,
    period_start  timestamptz NOT NULL,
    period_end    timestamptz NOT NULL,
    format        text NOT NULL CHECK (format IN ('csv', 'jsonl')),
    sha256        text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    content       bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (period_end > period_start),
    -- Idempotent per period: exporting the same period again returns the stored file.
    CONSTRAINT exports_period_format_key UNIQUE (period_start, period_end, format)
);
