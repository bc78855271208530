-- Inference services (issue 21). A service is a named, long-running replica set in a project's
-- queue: its replicas are jobs (one replica each, `jobs.service_id`), started, replaced and
-- stopped by the api's service step, so admission, quotas, dispatch with its epochs,
-- preemption and billing treat them as any job. A changed spec is a new revision; replicas
-- carry the revision they run.
CREATE TABLE services (
    id                  bigserial PRIMARY KEY,
    project_id          bigint NOT NULL REFERENCES projects (id) ON DELETE RESTRICT,
    queue_id            bigint NOT NULL,
    name                text NOT NULL CHECK (length(name) BETWEEN 1 AND 63),
    owner_id            bigint NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
    revision            integer NOT NULL DEFAULT 1 CHECK (revision >= 1),
    min_replicas        integer NOT NULL CHECK (min_replicas >= 0),
    max_replicas        integer NOT NULL CHECK (max_replicas >= 1),
    -- The count the service runs at: set by applyService/scaleService, moved by autoscaling.
    desired_replicas    integer NOT NULL,
    -- Autoscaling: absent metric, none.
    scaling_metric      text CHECK (scaling_metric IN ('gpu_utilization', 'request_rate')),
    scaling_target      double precision CHECK (scaling_target > 0),
    scale_down_delay_s  integer NOT NULL DEFAULT 300 CHECK (scale_down_delay_s >= 0),
    max_surge           integer NOT NULL DEFAULT 1 CHECK (max_surge >= 0),
    max_unavailable     integer NOT NULL DEFAULT 0 CHECK (max_unavailable >= 0),
    -- The request rate last reported for it (requests per second), and when.
    load_rps            double precision CHECK (load_rps >= 0),
    load_at             timestamptz,
    -- Why the service is short of replicas, when the service step knows (a full quota).
    condition           text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    -- Deleted: its replicas are stopped; the row stays for billing and history.
    deleted_at          timestamptz,
    CONSTRAINT services_queue_in_project_fk FOREIGN KEY (queue_id, project_id)
        REFERENCES queues (id, project_id) ON DELETE RESTRICT,
    CHECK (min_replicas <= max_replicas),
    CHECK (desired_replicas BETWEEN min_replicas AND max_replicas),
    CHECK ((scaling_metric IS NULL) = (scaling_target IS NULL)),
    CHECK (max_surge + max_unavailable > 0)
);
CREATE UNIQUE INDEX services_live_name_idx ON services (project_id, name) WHERE deleted_at IS NULL;

-- Each revision's replica template: the validated job (spec, tasks, priority) a replica is
-- created from, as applied.
CREATE TABLE service_revisions (
    service_id          bigint NOT NULL REFERENCES services (id) ON DELETE CASCADE,
    revision            integer NOT NULL,
    template            jsonb NOT NULL CHECK (jsonb_typeof(template) = 'object'),
    created_by          bigint NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
    created_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (service_id, revision)
);

-- Every change of the desired count, with what caused it: the autoscaling history.
CREATE TABLE service_scaling_events (
    id                  bigserial PRIMARY KEY,
    service_id          bigint NOT NULL REFERENCES services (id) ON DELETE CASCADE,
    at                  timestamptz NOT NULL DEFAULT now(),
    from_replicas       integer NOT NULL,
    to_replicas         integer NOT NULL,
    -- What was measured when autoscaling moved it (absent: a manual scale or an apply).
    signal              double precision,
    reason              text NOT NULL
);
CREATE INDEX service_scaling_events_service_idx ON service_scaling_events (service_id, at DESC);

ALTER TABLE jobs ADD COLUMN service_id bigint REFERENCES services (id) ON DELETE RESTRICT;
ALTER TABLE jobs ADD COLUMN service_revision integer;
ALTER TABLE jobs ADD CONSTRAINT jobs_service_revision_check CHECK ((service_id IS NULL) = (service_revision IS NULL));
CREATE INDEX jobs_service_idx ON jobs (service_id, state) WHERE service_id IS NOT NULL;

-- A replica's spec names its service: the generated workload type gains `inference`.
DROP INDEX jobs_running_workspaces_idx;
ALTER TABLE jobs DROP COLUMN workload_type;
ALTER TABLE jobs ADD COLUMN workload_type text NOT NULL
    GENERATED ALWAYS AS (CASE WHEN spec ? 'workspace' THEN 'workspace'
                              WHEN spec ? 'service' THEN 'inference'
                              ELSE 'batch' END) STORED;
CREATE INDEX jobs_running_workspaces_idx ON jobs (id) WHERE workload_type = 'workspace' AND state = 'running';
