-- Hierarchical fair share (issue 20): tenants and projects get a weight and guarantees of their
-- own, as queues have (DESIGN.md, "Fair share is hierarchical"). A project's guarantee is what
-- its queues together are entitled to before over-quota capacity is shared by weight; a
-- tenant's, what its projects together are. Keys and units are those of `queue_quotas`
-- (`grus_api::admission::QuotaKey`; a test keeps the CHECKs in step).
ALTER TABLE tenants ADD COLUMN weight double precision NOT NULL DEFAULT 1 CHECK (weight > 0 AND weight <= 1e6);
ALTER TABLE projects ADD COLUMN weight double precision NOT NULL DEFAULT 1 CHECK (weight > 0 AND weight <= 1e6);

CREATE TABLE tenant_guarantees (
    tenant_id   bigint NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    resource    text NOT NULL CHECK (resource ~
        '^(gpu|gpu/[A-Za-z0-9][A-Za-z0-9._-]{0,63}|pool/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?|cpu_milli|memory_mib)$'),
    guaranteed  bigint NOT NULL CHECK (guaranteed > 0),
    PRIMARY KEY (tenant_id, resource)
);

CREATE TABLE project_guarantees (
    project_id  bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    resource    text NOT NULL CHECK (resource ~
        '^(gpu|gpu/[A-Za-z0-9][A-Za-z0-9._-]{0,63}|pool/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?|cpu_milli|memory_mib)$'),
    guaranteed  bigint NOT NULL CHECK (guaranteed > 0),
    PRIMARY KEY (project_id, resource)
);
