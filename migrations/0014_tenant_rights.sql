-- Tenant rights (issue 20): what a tenant's members may do to others' work, inherited by every
-- project of the tenant. A new tenant may submit up to `high` (members can no longer raise
-- their own jobs to `critical` unless a platform admin allows it) and may preempt, from anyone.

ALTER TABLE tenants
    ADD COLUMN max_priority_class text NOT NULL DEFAULT 'high'
        CONSTRAINT tenants_max_priority_class_check CHECK (max_priority_class IN ('low', 'normal', 'high', 'critical')),
    ADD COLUMN may_preempt boolean NOT NULL DEFAULT true,
    -- true: its jobs may reclaim borrowed work of any tenant; false: only of its own and of the
    -- tenants listed in tenant_reclaim_rights.
    ADD COLUMN reclaim_from_any boolean NOT NULL DEFAULT true;

CREATE TABLE tenant_reclaim_rights (
    tenant_id       bigint NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    from_tenant_id  bigint NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    PRIMARY KEY (tenant_id, from_tenant_id)
);
