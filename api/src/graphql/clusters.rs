//! Clusters in GraphQL: `clusters` and `cluster(id)` for any signed-in user (fleet-wide data,
//! no tenant rows: health, capacity, nodes and GPUs with allocation and live utilization),
//! `registerCluster` and `rotateAgentToken` for platform admins, and `Job.utilization`.
//!
//! Agent tokens are 256-bit random secrets shown once; only their SHA-256 is stored (the same
//! hashing as API tokens), so rotating one makes the old token useless at once.

use std::collections::BTreeMap;
use std::io::Read;

use async_graphql::{ComplexObject, Context, Json, Object, SimpleObject};
use chrono::{DateTime, Utc};
use grus_protocol::wire::{CapacitySummary, GpuInfo, ModelCapacity};
use serde_json::Value;

use super::{caller, pool};
use crate::auth::web::hash_token;
use crate::db::{self, ingest as store};
use crate::domain::{current_health, Health};
use crate::error::{ApiError, ApiResult};

/// Where the project publishes the grus-agent chart (`helm/grus-agent`).
pub const DEFAULT_AGENT_CHART: &str = "oci://ghcr.io/grus/charts/grus-agent";

/// The agent chart and the Redis URL that `registerCluster`'s install command names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentInstall {
    pub redis_url: String,
    pub chart: String,
    /// grus-api's URL as agents reach it (`--agent-api-url`): the install command then has the
    /// agent exchange its token for its own Redis user.
    pub api_url: Option<String>,
}

/// The Secret the install command expects the registration token in (`registration.*`).
pub const AGENT_TOKEN_SECRET: &str = "grus-agent-token";

impl Default for AgentInstall {
    /// The agent binary's own defaults (`--redis redis://127.0.0.1:6379`): what a schema built
    /// without server settings (tests, `grus-api schema`) names.
    fn default() -> Self {
        AgentInstall {
            redis_url: "redis://127.0.0.1:6379".to_string(),
            chart: DEFAULT_AGENT_CHART.to_string(),
            api_url: None,
        }
    }
}

/// Prefix of agent registration tokens (tells them apart from personal API tokens).
pub const AGENT_TOKEN_PREFIX: &str = "grus_agent_";

/// Free capacity of one GPU model, from the agent's last Capacity summary.
#[derive(SimpleObject)]
pub struct ModelCapacityObj {
    pub model: String,
    pub total_gpus: i64,
    /// Free whole GPUs in the cluster (sum over nodes).
    pub free_whole_gpus: i64,
    pub free_whole_per_node: Vec<i64>,
    pub free_milli_per_device: Vec<i64>,
    /// Most whole GPUs one gang can get per topology scope (`node`, `nvlink`, `rack`, `any`).
    pub largest_gang_gpus: Json<BTreeMap<String, u32>>,
}

impl From<ModelCapacity> for ModelCapacityObj {
    fn from(m: ModelCapacity) -> Self {
        ModelCapacityObj {
            model: m.model,
            total_gpus: i64::from(m.total_gpus),
            free_whole_gpus: m.free_whole_per_node.iter().map(|n| i64::from(*n)).sum(),
            free_whole_per_node: m.free_whole_per_node.into_iter().map(i64::from).collect(),
            free_milli_per_device: m.free_milli_per_device.into_iter().map(i64::from).collect(),
            largest_gang_gpus: Json(m.largest_gang_gpus),
        }
    }
}

/// A node pool of a cluster (the agent's `--node-pool` label selectors), from its last
/// Capacity summary: quotas name it as `pool/<name>`, jobs in `pools`.
#[derive(SimpleObject)]
#[graphql(name = "NodePool")]
pub struct NodePoolObj {
    pub name: String,
    pub nodes: i64,
    pub total_gpus: i64,
    pub free_whole_gpus: i64,
    /// Per GPU model, the pool's nodes only.
    pub capacity: Vec<ModelCapacityObj>,
}

#[derive(SimpleObject)]
#[graphql(name = "Gpu")]
pub struct GpuObj {
    pub index: i64,
    pub uuid: Option<String>,
    pub model: String,
    pub memory_mib: i64,
    pub healthy: bool,
    /// GPU milli held by placed and running replicas (1000 = the whole device).
    pub allocated_milli: i64,
    /// Latest profiler reading; null until one arrived.
    pub busy_pct: Option<f64>,
    pub memory_used_mib: Option<i64>,
    pub power_w: Option<f64>,
    pub temperature_c: Option<f64>,
    pub metrics_at: Option<DateTime<Utc>>,
}

#[derive(SimpleObject)]
#[graphql(name = "ClusterNode")]
pub struct ClusterNodeObj {
    pub name: String,
    pub healthy: bool,
    /// Takes no new replicas (`cordonNode`, `drainNode`); what runs there stays.
    pub cordoned: bool,
    /// Cordoned by `drainNode`: its preemptible work was sent elsewhere.
    pub draining: bool,
    pub rack: Option<String>,
    /// Its node pool; null when the cluster has none.
    pub pool: Option<String>,
    pub labels: Json<Value>,
    pub cpu_milli: i64,
    pub memory_mib: i64,
    pub gpus: Vec<GpuObj>,
    pub updated_at: DateTime<Utc>,
}

#[derive(SimpleObject)]
#[graphql(name = "Cluster", complex)]
pub struct ClusterObj {
    pub id: String,
    pub display_name: Option<String>,
    /// `unknown` (never heard from), `healthy`, `degraded` (heartbeat missing), `unreachable`
    /// (silent past the loss timeout).
    pub health: String,
    /// Takes no new work (`cordonCluster`, `drainCluster`).
    pub cordoned: bool,
    /// Cordoned by `drainCluster`: its preemptible work was sent elsewhere.
    pub draining: bool,
    /// When it was retired (`retireCluster`); retired clusters leave `clusters`.
    pub retired_at: Option<DateTime<Utc>>,
    pub last_heartbeat: Option<DateTime<Utc>>,
    pub labels: Json<Value>,
    pub created_at: DateTime<Utc>,
    #[graphql(skip)]
    pub capacity_raw: Option<Value>,
    #[graphql(skip)]
    pub control_plane_mismatch: bool,
}

impl ClusterObj {
    /// The last Capacity summary, if one arrived.
    fn summary(&self) -> Option<CapacitySummary> {
        self.capacity_raw.clone().and_then(|v| serde_json::from_value(v).ok())
    }
}

impl From<db::Cluster> for ClusterObj {
    fn from(c: db::Cluster) -> Self {
        ClusterObj {
            id: c.id,
            display_name: c.display_name,
            // Never healthy from a heartbeat the monitor saw too long ago.
            health: match c.health.parse::<Health>() {
                Ok(stored) => {
                    let age = c.last_heartbeat.map(|t| (Utc::now() - t).num_milliseconds());
                    current_health(stored, age).as_str().to_owned()
                }
                Err(_) => c.health,
            },
            cordoned: c.cordoned,
            draining: c.draining,
            retired_at: c.retired_at,
            last_heartbeat: c.last_heartbeat,
            labels: Json(c.labels),
            created_at: c.created_at,
            capacity_raw: c.capacity,
            control_plane_mismatch: c.control_plane_mismatch,
        }
    }
}

#[ComplexObject]
impl ClusterObj {
    /// Per GPU model, from the last Capacity summary (empty until one arrived).
    async fn capacity(&self) -> Vec<ModelCapacityObj> {
        let Some(summary) = self.summary() else { return Vec::new() };
        summary.models.into_iter().map(ModelCapacityObj::from).collect()
    }

    /// The node pools, from the last Capacity summary (empty when the cluster has none).
    async fn pools(&self) -> Vec<NodePoolObj> {
        let Some(summary) = self.summary() else { return Vec::new() };
        summary
            .pools
            .into_iter()
            .map(|p| {
                let capacity: Vec<ModelCapacityObj> = p.models.into_iter().map(ModelCapacityObj::from).collect();
                NodePoolObj {
                    name: p.name,
                    nodes: i64::from(p.nodes),
                    total_gpus: capacity.iter().map(|m| m.total_gpus).sum(),
                    free_whole_gpus: capacity.iter().map(|m| m.free_whole_gpus).sum(),
                    capacity,
                }
            })
            .collect()
    }

    /// When the last Capacity summary was sent.
    async fn capacity_at(&self, ctx: &Context<'_>) -> ApiResult<Option<DateTime<Utc>>> {
        Ok(store::agent_info(pool(ctx)?, &self.id).await?.capacity_at)
    }

    /// The agent's version and capabilities, from its Hello.
    async fn agent_version(&self, ctx: &Context<'_>) -> ApiResult<Option<String>> {
        Ok(store::agent_info(pool(ctx)?, &self.id).await?.agent_version)
    }

    async fn agent_capabilities(&self, ctx: &Context<'_>) -> ApiResult<Vec<String>> {
        Ok(store::agent_info(pool(ctx)?, &self.id).await?.agent_capabilities)
    }

    /// The control plane (incarnation) the agent says it serves, from its heartbeat; null until
    /// it has received a command.
    async fn agent_control_plane(&self, ctx: &Context<'_>) -> ApiResult<Option<String>> {
        Ok(store::agent_info(pool(ctx)?, &self.id).await?.agent_control_plane)
    }

    /// The agent serves another control plane (this one's database was replaced or restored):
    /// it refuses every command from here, and the cluster takes no work (health DEGRADED)
    /// until an operator re-pins it (`grus-agent --control-plane`).
    async fn control_plane_mismatch(&self) -> bool {
        self.control_plane_mismatch
    }

    /// Its GPUs' mean and peak utilization and memory per device over `[since, until)`
    /// (default: the hour before `until`, which defaults to now). VALIDATION on `since` when it
    /// is not before `until`.
    async fn metric_history(
        &self,
        ctx: &Context<'_>,
        since: Option<DateTime<Utc>>,
        until: Option<DateTime<Utc>>,
    ) -> ApiResult<super::metric_history::MetricHistoryObj> {
        super::metric_history::history(ctx, crate::db::metric_history::Subject::Cluster(&self.id), since, until).await
    }

    /// Nodes and their GPUs, from the last Inventory, with allocation and live metrics.
    async fn nodes(&self, ctx: &Context<'_>) -> ApiResult<Vec<ClusterNodeObj>> {
        let pool = pool(ctx)?;
        let nodes = store::cluster_nodes(pool, &self.id).await?;
        let metrics: BTreeMap<(String, i64), store::GpuMetricRow> = store::gpu_metrics(pool, &self.id)
            .await?
            .into_iter()
            .map(|m| ((m.node.clone(), i64::from(m.index)), m))
            .collect();
        let allocated = store::allocated_milli(pool, &self.id).await?;
        let cordons: BTreeMap<String, bool> =
            db::operations::node_cordons(pool, &self.id).await?.into_iter().map(|c| (c.node, c.draining)).collect();
        Ok(nodes
            .into_iter()
            .map(|n| {
                let gpus: Vec<GpuInfo> = serde_json::from_value(n.gpus).unwrap_or_default();
                let gpus = gpus
                    .into_iter()
                    .map(|g| {
                        let m = metrics.get(&(n.name.clone(), i64::from(g.index)));
                        GpuObj {
                            index: i64::from(g.index),
                            uuid: g.uuid,
                            model: g.model,
                            memory_mib: i64::try_from(g.memory_mib).unwrap_or(i64::MAX),
                            healthy: g.healthy,
                            allocated_milli: i64::from(allocated.get(&(n.name.clone(), g.index)).copied().unwrap_or(0)),
                            busy_pct: m.map(|m| f64::from(m.busy_pct)),
                            memory_used_mib: m.map(|m| m.memory_used_mib),
                            power_w: m.and_then(|m| m.power_w.map(f64::from)),
                            temperature_c: m.and_then(|m| m.temperature_c.map(f64::from)),
                            metrics_at: m.map(|m| m.at),
                        }
                    })
                    .collect();
                let draining = cordons.get(&n.name).copied();
                ClusterNodeObj {
                    healthy: n.healthy,
                    cordoned: draining.is_some(),
                    draining: draining.unwrap_or(false),
                    name: n.name,
                    rack: n.rack,
                    pool: n.pool,
                    labels: Json(n.labels),
                    cpu_milli: n.cpu_milli,
                    memory_mib: n.memory_mib,
                    gpus,
                    updated_at: n.updated_at,
                }
            })
            .collect())
    }
}

#[derive(Default)]
pub struct ClusterQuery;

#[Object]
impl ClusterQuery {
    /// Every registered cluster (any signed-in user: the fleet is shared).
    async fn clusters(&self, ctx: &Context<'_>) -> ApiResult<Vec<ClusterObj>> {
        caller(ctx)?;
        Ok(db::list_clusters(pool(ctx)?).await?.into_iter().map(ClusterObj::from).collect())
    }

    async fn cluster(&self, ctx: &Context<'_>, id: String) -> ApiResult<ClusterObj> {
        caller(ctx)?;
        Ok(db::get_cluster(pool(ctx)?, &id).await?.into())
    }
}

/// Result of `registerCluster` and `rotateAgentToken`: the token is shown only here.
#[derive(SimpleObject)]
pub struct AgentTokenPayload {
    pub cluster: ClusterObj,
    /// The agent's registration token. Stored hashed: it cannot be shown again.
    pub agent_token: String,
    /// Installs (or upgrades) the grus-agent chart on the cluster: its id and the Redis the
    /// agents reach (`--agent-redis-url`). Add the cluster's Redis ACL credentials with
    /// `--set redis.existingSecret=<secret>` (keys `username`, `password`) when Redis needs them.
    pub helm_install_command: String,
}

/// A fresh agent token: 256 bits from the kernel's CSPRNG, hex.
fn new_agent_token() -> ApiResult<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| ApiError::internal(&e))?;
    Ok(format!("{AGENT_TOKEN_PREFIX}{}", hex::encode(bytes)))
}

/// The install command shown with a token: the grus-agent chart (`helm/grus-agent`) with this
/// cluster's id and the Redis the agents reach. Every `--set` is a key of the chart's values.
/// Both inputs are restricted to characters that need no shell quoting (the cluster id by
/// `is_valid_cluster_id`, the URL and chart by `config`).
pub fn helm_install_command(cluster: &str, agents: &AgentInstall) -> String {
    let mut command = format!(
        "helm upgrade --install grus-agent {chart} --namespace grus-system --create-namespace \
         --set cluster.id={cluster} --set redis.url={url}",
        chart = agents.chart,
        url = agents.redis_url,
    );
    // The token itself goes in a Secret (`kubectl -n grus-system create secret generic
    // grus-agent-token --from-literal=token=<agentToken>`), never on a command line.
    if let Some(api) = &agents.api_url {
        command.push_str(&format!(
            " --set registration.apiUrl={api} --set registration.existingSecret={AGENT_TOKEN_SECRET}"
        ));
    }
    command
}

/// Every schema carries one (`graphql::build_server_schema`).
fn agent_install<'a>(ctx: &Context<'a>) -> ApiResult<&'a AgentInstall> {
    ctx.data::<AgentInstall>().map_err(|e| ApiError::internal(&e.message))
}

pub(super) fn require_platform_admin(ctx: &Context<'_>) -> ApiResult<()> {
    if caller(ctx)?.user.platform_admin {
        Ok(())
    } else {
        Err(ApiError::Forbidden)
    }
}

/// Labels must be a JSON object of string values (they select clusters, like node labels).
fn check_labels(labels: &Value) -> ApiResult<()> {
    let ok = labels.as_object().is_some_and(|m| {
        m.len() <= 64 && m.iter().all(|(k, v)| (1..=63).contains(&k.len()) && v.as_str().is_some_and(|s| s.len() <= 63))
    });
    if ok {
        Ok(())
    } else {
        Err(ApiError::field("labels", "an object of at most 64 string values, keys and values up to 63 characters"))
    }
}

#[derive(Default)]
pub struct ClusterMutation;

#[Object]
impl ClusterMutation {
    /// Platform admin only. Registers a cluster and returns its one-time agent token.
    async fn register_cluster(
        &self,
        ctx: &Context<'_>,
        id: String,
        display_name: Option<String>,
        labels: Option<Json<Value>>,
    ) -> ApiResult<AgentTokenPayload> {
        require_platform_admin(ctx)?;
        if !grus_protocol::keys::is_valid_cluster_id(&id) {
            return Err(ApiError::field("id", "1 to 63 of a-z, 0-9 and '-', not starting or ending with '-'"));
        }
        if display_name.as_ref().is_some_and(|n| n.is_empty() || n.len() > 200) {
            return Err(ApiError::field("displayName", "1 to 200 characters"));
        }
        let labels = labels.map(|l| l.0).unwrap_or_else(|| Value::Object(Default::default()));
        check_labels(&labels)?;
        let token = new_agent_token()?;
        let pool = pool(ctx)?;
        let mut tx = pool.begin().await.map_err(|e| ApiError::internal(&e))?;
        db::register_cluster(&mut *tx, &id, &labels, &hash_token(&token)).await?;
        store::set_display_name(&mut *tx, &id, display_name.as_deref()).await?;
        let cluster = db::get_cluster(&mut *tx, &id).await?;
        tx.commit().await.map_err(|e| ApiError::internal(&e))?;
        let helm_install_command = helm_install_command(&id, agent_install(ctx)?);
        Ok(AgentTokenPayload { cluster: cluster.into(), agent_token: token, helm_install_command })
    }

    /// Platform admin only. Issues a new agent token; the old one stops working. Audited.
    async fn rotate_agent_token(&self, ctx: &Context<'_>, cluster_id: String) -> ApiResult<AgentTokenPayload> {
        require_platform_admin(ctx)?;
        let token = new_agent_token()?;
        let pool = pool(ctx)?;
        let mut tx = pool.begin().await.map_err(db::DbError::from)?;
        store::rotate_agent_token(&mut *tx, &cluster_id, &hash_token(&token)).await?;
        let actor = &caller(ctx)?.user.subject;
        let target = format!("cluster/{cluster_id}");
        db::audit::record(&mut *tx, actor, crate::domain::AuditAction::AgentTokenRotate, &target, "").await?;
        tx.commit().await.map_err(db::DbError::from)?;
        let cluster = db::get_cluster(pool, &cluster_id).await?;
        let helm_install_command = helm_install_command(&cluster_id, agent_install(ctx)?);
        Ok(AgentTokenPayload { cluster: cluster.into(), agent_token: token, helm_install_command })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_prefixed() {
        let a = new_agent_token().unwrap();
        let b = new_agent_token().unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(AGENT_TOKEN_PREFIX));
        assert_eq!(a.len(), AGENT_TOKEN_PREFIX.len() + 64);
    }

    #[test]
    fn labels_must_be_string_objects() {
        assert!(check_labels(&serde_json::json!({"region": "eu"})).is_ok());
        assert!(check_labels(&serde_json::json!({"n": 1})).is_err());
        assert!(check_labels(&serde_json::json!(["x"])).is_err());
    }
}
