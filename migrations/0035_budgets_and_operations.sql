-- Monthly budgets, and the fleet operations platform admins carry out (issue 23).
--
-- A budget belongs to one project or one tenant; admission reads it in the transaction that
-- checks quotas (`billing::budget`, `db::budgets`).
CREATE TABLE budgets (
    id             bigserial PRIMARY KEY,
    project_id     bigint UNIQUE REFERENCES projects (id) ON DELETE CASCADE,
    tenant_id      bigint UNIQUE REFERENCES tenants (id) ON DELETE CASCADE,
    unit           text NOT NULL CHECK (unit IN ('currency', 'gpu_hours')),
    -- Micro-units of the currency, or micro GPU-hours, per calendar month (UTC).
    amount_micros  bigint NOT NULL CHECK (amount_micros > 0),
    soft_percent   smallint NOT NULL CHECK (soft_percent BETWEEN 1 AND 100),
    hard           boolean NOT NULL,
    -- With hard: while the budget is spent, the scope's borrowed work is suspended too.
    suspend_borrowed boolean NOT NULL DEFAULT false,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CHECK ((project_id IS NULL) <> (tenant_id IS NULL))
);

-- What operators did to the fleet and its tenancy: one row per action (`db::audit`).
CREATE TABLE audit_events (
    id        bigserial PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT now(),
    actor     text NOT NULL CHECK (length(actor) BETWEEN 1 AND 300),
    action    text NOT NULL CHECK (action IN ('cluster_cordon', 'cluster_drain', 'cluster_uncordon',
        'cluster_retire', 'node_cordon', 'node_drain', 'node_uncordon', 'agent_token_rotate',
        'queue_delete', 'project_delete', 'budget_set', 'budget_remove')),
    target    text NOT NULL CHECK (length(target) BETWEEN 1 AND 300),
    detail    text NOT NULL DEFAULT '' CHECK (length(detail) <= 2000)
);
CREATE INDEX audit_events_at_idx ON audit_events (at DESC, id DESC);

-- Nodes an operator took out of scheduling; `draining`: their preemptible work was sent away.
-- The agent learns the set through `CordonNodes`, sent while `cordons_sent` differs from
-- `cordons_version` (reset when the agent says Hello).
CREATE TABLE node_cordons (
    cluster_id  text NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    node        text NOT NULL CHECK (length(node) BETWEEN 1 AND 253),
    draining    boolean NOT NULL,
    since       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (cluster_id, node)
);

ALTER TABLE clusters
    ADD COLUMN draining boolean NOT NULL DEFAULT false,
    ADD COLUMN retired_at timestamptz,
    ADD COLUMN cordons_version bigint NOT NULL DEFAULT 0,
    ADD COLUMN cordons_sent bigint;
