//! Fleet and tenancy operations in the API: cordon, drain and uncordon a cluster or a node,
//! retire an empty cluster (platform admins), delete an empty queue (project admins) or
//! project (tenant admins), and the audit log they write (`auditEvents`). The rules are
//! `db::operations`'.

use async_graphql::{Context, Object, SimpleObject, ID};
use chrono::{DateTime, Utc};
use grus_protocol::capability;

use super::clusters::{require_platform_admin, ClusterObj};
use super::mutation::project_admin_queue;
use super::types::ProjectObj;
use super::{authorize, caller, parse_id, pool};
use crate::db::{self, audit, operations as ops, Cause};
use crate::domain::{AuditAction, Role};
use crate::error::{ApiError, ApiResult};

/// The longest eviction grace a drain may give, in seconds.
const MAX_GRACE_S: i32 = 3600;

/// One operation recorded in the audit log.
#[derive(SimpleObject)]
#[graphql(name = "AuditEvent")]
pub struct AuditEventObj {
    pub id: ID,
    pub at: DateTime<Utc>,
    /// Who did it (the user's identity, `dev:alice` or the OIDC subject).
    pub actor: String,
    /// What was done: `cluster_cordon`, `cluster_drain`, `cluster_uncordon`, `cluster_retire`,
    /// `node_cordon`, `node_drain`, `node_uncordon`, `agent_token_rotate`, `queue_delete`,
    /// `project_delete`, `budget_set`, `budget_remove`.
    pub action: String,
    /// To what: `cluster/<id>`, `node/<cluster>/<node>`, `project/<slug>`,
    /// `queue/<project>/<name>`, `tenant/<slug>`.
    pub target: String,
    pub detail: String,
}

impl From<audit::AuditEvent> for AuditEventObj {
    fn from(e: audit::AuditEvent) -> Self {
        AuditEventObj {
            id: ID(e.id.to_string()),
            at: e.at,
            actor: e.actor,
            action: e.action,
            target: e.target,
            detail: e.detail,
        }
    }
}

fn grace(grace_seconds: i32) -> ApiResult<u32> {
    u32::try_from(grace_seconds)
        .ok()
        .filter(|g| *g <= MAX_GRACE_S as u32)
        .ok_or_else(|| ApiError::field("graceSeconds", format!("from 0 to {MAX_GRACE_S}")))
}

/// The node is in the cluster's last inventory (else NOT_FOUND), and the cluster's agent,
/// once it has said Hello, names `cordon-nodes` among its capabilities (else CONFLICT: an
/// older agent would not understand `CordonNodes`, and the cordon would silently not hold).
async fn check_node(ctx: &Context<'_>, cluster_id: &str, node: &str) -> ApiResult<()> {
    let nodes = db::ingest::cluster_nodes(pool(ctx)?, cluster_id).await?;
    if !nodes.iter().any(|n| n.name == node) {
        return Err(ApiError::NotFound("node"));
    }
    let agent = db::ingest::agent_info(pool(ctx)?, cluster_id).await?;
    match &agent.agent_version {
        Some(version) if !agent.agent_capabilities.iter().any(|c| c == capability::CORDON_NODES) => {
            Err(ApiError::Conflict(format!(
                "the agent of cluster {cluster_id} (version {version}) cannot cordon single nodes: \
                 upgrade it, or cordon or drain the whole cluster"
            )))
        }
        _ => Ok(()),
    }
}

#[derive(Default)]
pub struct OperationsQuery;

#[Object]
impl OperationsQuery {
    /// Platform admins: the newest operations on the fleet and the tenancy, newest first
    /// (`clusterId`: that cluster's and its nodes' only).
    async fn audit_events(
        &self,
        ctx: &Context<'_>,
        cluster_id: Option<String>,
        #[graphql(default = 100)] first: i32,
    ) -> ApiResult<Vec<AuditEventObj>> {
        require_platform_admin(ctx)?;
        if !(1..=1000).contains(&first) {
            return Err(ApiError::field("first", "from 1 to 1000"));
        }
        let targets = match cluster_id {
            Some(c) => vec![format!("cluster/{c}"), format!("node/{c}/")],
            None => Vec::new(),
        };
        Ok(audit::recent(pool(ctx)?, i64::from(first), &targets).await?.into_iter().map(Into::into).collect())
    }
}

#[derive(Default)]
pub struct OperationsMutation;

impl OperationsMutation {
    /// Cordons the cluster (draining: also evicts its preemptible work), audited.
    async fn cordon(ctx: &Context<'_>, id: &str, drain: Option<u32>) -> ApiResult<ClusterObj> {
        require_platform_admin(ctx)?;
        let actor = caller(ctx)?.user.subject.clone();
        let pool = pool(ctx)?;
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        ops::set_cluster_cordon(&mut tx, id, true, drain).await?;
        let (action, detail) = match drain {
            Some(grace_s) => {
                let cause = format!("cluster {id} drained by {actor}");
                let by = Cause { cause: &cause, actor: &actor };
                let evicted = ops::evict_preemptible(&mut tx, id, None, grace_s, by).await?;
                (AuditAction::ClusterDrain, format!("{} preemptible job(s) evicted, grace {grace_s}s", evicted.len()))
            }
            None => (AuditAction::ClusterCordon, String::new()),
        };
        audit::record(&mut *tx, &actor, action, &format!("cluster/{id}"), &detail).await?;
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(db::get_cluster(pool, id).await?.into())
    }

    /// Cordons a node (draining: also evicts its preemptible work), audited.
    async fn cordon_one(ctx: &Context<'_>, cluster_id: &str, node: &str, drain: Option<u32>) -> ApiResult<ClusterObj> {
        require_platform_admin(ctx)?;
        check_node(ctx, cluster_id, node).await?;
        let actor = caller(ctx)?.user.subject.clone();
        let pool = pool(ctx)?;
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        ops::cordon_node(&mut tx, cluster_id, node, drain).await?;
        let (action, detail) = match drain {
            Some(grace_s) => {
                let cause = format!("node {node} drained by {actor}");
                let by = Cause { cause: &cause, actor: &actor };
                let evicted = ops::evict_preemptible(&mut tx, cluster_id, Some(node), grace_s, by).await?;
                (AuditAction::NodeDrain, format!("{} preemptible job(s) evicted, grace {grace_s}s", evicted.len()))
            }
            None => (AuditAction::NodeCordon, String::new()),
        };
        audit::record(&mut *tx, &actor, action, &format!("node/{cluster_id}/{node}"), &detail).await?;
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(db::get_cluster(pool, cluster_id).await?.into())
    }
}

#[Object]
impl OperationsMutation {
    /// Platform admin. The cluster takes no new work; what runs there stays. Audited.
    async fn cordon_cluster(&self, ctx: &Context<'_>, id: String) -> ApiResult<ClusterObj> {
        Self::cordon(ctx, &id, None).await
    }

    /// Platform admin. Cordons the cluster and evicts its preemptible work after
    /// `graceSeconds` (0-3600); the work is requeued and goes to other clusters. Work that is
    /// not preemptible runs to its end. Until the uncordon, preemptible work placed there
    /// later (dispatched before the drain) is evicted the same way. Audited.
    async fn drain_cluster(
        &self,
        ctx: &Context<'_>,
        id: String,
        #[graphql(default = 30)] grace_seconds: i32,
    ) -> ApiResult<ClusterObj> {
        Self::cordon(ctx, &id, Some(grace(grace_seconds)?)).await
    }

    /// Platform admin. The cluster takes new work again. Audited.
    async fn uncordon_cluster(&self, ctx: &Context<'_>, id: String) -> ApiResult<ClusterObj> {
        require_platform_admin(ctx)?;
        let actor = caller(ctx)?.user.subject.clone();
        let pool = pool(ctx)?;
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        ops::set_cluster_cordon(&mut tx, &id, false, None).await?;
        audit::record(&mut *tx, &actor, AuditAction::ClusterUncordon, &format!("cluster/{id}"), "").await?;
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(db::get_cluster(pool, &id).await?.into())
    }

    /// Platform admin. Retires a cluster that holds no work (else CONFLICT): it leaves
    /// `clusters`, takes nothing more, and its agent token stops working. Its history stays.
    /// Audited.
    async fn retire_cluster(&self, ctx: &Context<'_>, id: String) -> ApiResult<ClusterObj> {
        require_platform_admin(ctx)?;
        let actor = caller(ctx)?.user.subject.clone();
        let pool = pool(ctx)?;
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        ops::retire_cluster(&mut tx, &id).await?;
        audit::record(&mut *tx, &actor, AuditAction::ClusterRetire, &format!("cluster/{id}"), "").await?;
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(db::get_cluster(pool, &id).await?.into())
    }

    /// Platform admin. The node (of the cluster's last inventory) takes no new replicas; what
    /// runs there stays. Audited.
    async fn cordon_node(&self, ctx: &Context<'_>, cluster_id: String, node: String) -> ApiResult<ClusterObj> {
        Self::cordon_one(ctx, &cluster_id, &node, None).await
    }

    /// Platform admin. Cordons the node and evicts the preemptible work on it after
    /// `graceSeconds` (0-3600); the work is requeued and placed elsewhere. Until the uncordon,
    /// preemptible work placed there later (before its agent learnt of the drain) is evicted
    /// the same way. Audited.
    async fn drain_node(
        &self,
        ctx: &Context<'_>,
        cluster_id: String,
        node: String,
        #[graphql(default = 30)] grace_seconds: i32,
    ) -> ApiResult<ClusterObj> {
        Self::cordon_one(ctx, &cluster_id, &node, Some(grace(grace_seconds)?)).await
    }

    /// Platform admin. The node takes new replicas again (a node that was not cordoned is
    /// left as it is). Audited.
    async fn uncordon_node(&self, ctx: &Context<'_>, cluster_id: String, node: String) -> ApiResult<ClusterObj> {
        require_platform_admin(ctx)?;
        let actor = caller(ctx)?.user.subject.clone();
        let pool = pool(ctx)?;
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        if ops::uncordon_node(&mut tx, &cluster_id, &node).await? {
            let target = format!("node/{cluster_id}/{node}");
            audit::record(&mut *tx, &actor, AuditAction::NodeUncordon, &target, "").await?;
        }
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(db::get_cluster(pool, &cluster_id).await?.into())
    }

    /// Project admin. Deletes a queue that never held a job or service, is not the project's
    /// last and is not `default` (else CONFLICT, saying why). Audited.
    async fn delete_queue(&self, ctx: &Context<'_>, queue_id: ID) -> ApiResult<bool> {
        let pool = pool(ctx)?;
        let queue = project_admin_queue(ctx, &queue_id).await?;
        let project = db::get_project(pool, queue.project_id).await?;
        let actor = caller(ctx)?.user.subject.clone();
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        ops::delete_empty_queue(&mut tx, queue.id).await?;
        let target = format!("queue/{}/{}", project.slug, queue.name);
        audit::record(&mut *tx, &actor, AuditAction::QueueDelete, &target, "").await?;
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(true)
    }

    /// Tenant admin of its tenant. Deletes a project none of whose queues ever held a job or
    /// service (else CONFLICT), with its queues, members, shares and budget. Audited.
    async fn delete_project(&self, ctx: &Context<'_>, project_id: ID) -> ApiResult<ProjectObj> {
        let (project, role) = authorize(ctx, parse_id(&project_id, "project")?, Role::TenantAdmin).await?;
        let actor = caller(ctx)?.user.subject.clone();
        let pool = pool(ctx)?;
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        ops::delete_empty_project(&mut tx, project.id).await?;
        audit::record(&mut *tx, &actor, AuditAction::ProjectDelete, &format!("project/{}", project.slug), "").await?;
        tx.commit().await.map_err(db::DbError::from)?;
        Ok(ProjectObj::new(project, role))
    }
}
