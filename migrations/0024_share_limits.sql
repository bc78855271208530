-- Limits of tenants and projects (issue 20: each level of the fair-share tree with a weight, a
-- guarantee and a limit). A project's limit bounds what its queues together may be admitted
-- for, a tenant's what its projects together may; admission checks them in the transaction
-- that checks queue quotas, holding the tenant's and project's rows locked. Keys and units are
-- those of `queue_quotas` (`grus_api::admission::QuotaKey`; a test keeps the CHECKs in step).
-- A limit of 0 admits nothing; no row: unlimited.
CREATE TABLE tenant_limits (
    tenant_id     bigint NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    resource      text NOT NULL CHECK (resource ~
        '^(gpu|gpu/[A-Za-z0-9][A-Za-z0-9._-]{0,63}|pool/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?|cpu_milli|memory_mib)$'),
    limit_amount  bigint NOT NULL CHECK (limit_amount >= 0),
    PRIMARY KEY (tenant_id, resource)
);

CREATE TABLE project_limits (
    project_id    bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    resource      text NOT NULL CHECK (resource ~
        '^(gpu|gpu/[A-Za-z0-9][A-Za-z0-9._-]{0,63}|pool/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?|cpu_milli|memory_mib)$'),
    limit_amount  bigint NOT NULL CHECK (limit_amount >= 0),
    PRIMARY KEY (project_id, resource)
);
