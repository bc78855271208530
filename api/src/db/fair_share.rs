//! The fair-share tree as stored: tenants' and projects' weights (`tenants.weight`,
//! `projects.weight`) and guarantees (`tenant_guarantees`, `project_guarantees`; queues keep
//! theirs in `queues.weight` and `queue_quotas`), and the GPUs each queue's work holds now.
//! Written by admins; read by the allocator each round it plans, and by GraphQL. Also each
//! queue's decayed past usage (`queue_usage_history`), which the allocator's leader rolls.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use grus_scheduler::fairshare::PastUsage;
use grus_scheduler::queue::{ResourceKey, ResourceVector};
use sqlx::PgConnection;

use super::{DbError, DbResult};
use crate::allocator::{ShareNode, ShareTree};
use crate::domain::{JobState, QuotaKey, QuotaLevel, GPU};

/// A tenant's or project's place in fair share.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareSettings {
    pub weight: f64,
    /// (quota key, amount), by key.
    pub guarantees: Vec<(String, i64)>,
    /// (quota key, amount), by key: what its queues together may be admitted for.
    pub limits: Vec<(String, i64)>,
}

/// The level of the tree a setting belongs to (names its tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Tenant,
    Project,
}

impl Level {
    /// Its table, its guarantees' and limits' tables, and their key column.
    fn tables(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            Level::Tenant => ("tenants", "tenant_guarantees", "tenant_limits", "tenant_id"),
            Level::Project => ("projects", "project_guarantees", "project_limits", "project_id"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Level::Tenant => "tenant",
            Level::Project => "project",
        }
    }
}

/// One tenant's or project's weight, guarantees and limits.
pub async fn share_settings(conn: &mut PgConnection, level: Level, id: i64) -> DbResult<ShareSettings> {
    let (table, guarantees, limits, key) = level.tables();
    let weight: Option<f64> = sqlx::query_scalar(&format!("SELECT weight FROM {table} WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
    let weight = weight.ok_or(DbError::NotFound(level.name()))?;
    let guarantees =
        sqlx::query_as(&format!("SELECT resource, guaranteed FROM {guarantees} WHERE {key} = $1 ORDER BY resource"))
            .bind(id)
            .fetch_all(&mut *conn)
            .await?;
    let limits =
        sqlx::query_as(&format!("SELECT resource, limit_amount FROM {limits} WHERE {key} = $1 ORDER BY resource"))
            .bind(id)
            .fetch_all(&mut *conn)
            .await?;
    Ok(ShareSettings { weight, guarantees, limits })
}

/// What [`set_share_settings`] changes: `None` keeps the stored value.
#[derive(Clone, Copy, Debug, Default)]
pub struct ShareChange<'a> {
    pub weight: Option<f64>,
    /// Replaces the guarantees (a zero amount removes the key).
    pub guarantees: Option<&'a [(String, i64)]>,
    /// Replaces the limits (a zero amount is a limit of zero).
    pub limits: Option<&'a [(String, i64)]>,
}

/// Sets a weight, and replaces the guarantees and limits when given.
pub async fn set_share_settings(tx: &mut PgConnection, level: Level, id: i64, change: ShareChange<'_>) -> DbResult<()> {
    let (table, guarantee_table, limit_table, key) = level.tables();
    let found = sqlx::query(&format!("UPDATE {table} SET weight = COALESCE($2, weight) WHERE id = $1"))
        .bind(id)
        .bind(change.weight)
        .execute(&mut *tx)
        .await?;
    if found.rows_affected() == 0 {
        return Err(DbError::NotFound(level.name()));
    }
    let replace = |table: &'static str, column: &'static str, rows: Vec<(&str, i64)>| {
        let (resources, amounts): (Vec<&str>, Vec<i64>) = rows.into_iter().unzip();
        (
            format!("DELETE FROM {table} WHERE {key} = $1"),
            format!(
                "INSERT INTO {table} ({key}, resource, {column})
                 SELECT $1, r, a FROM unnest($2::text[], $3::bigint[]) AS g (r, a)"
            ),
            resources.into_iter().map(str::to_owned).collect::<Vec<String>>(),
            amounts,
        )
    };
    let mut writes = Vec::new();
    if let Some(g) = change.guarantees {
        let rows = g.iter().filter(|(_, a)| *a > 0).map(|(r, a)| (r.as_str(), *a)).collect();
        writes.push(replace(guarantee_table, "guaranteed", rows));
    }
    if let Some(l) = change.limits {
        writes.push(replace(limit_table, "limit_amount", l.iter().map(|(r, a)| (r.as_str(), *a)).collect()));
    }
    for (delete, insert, resources, amounts) in writes {
        sqlx::query(&delete).bind(id).execute(&mut *tx).await?;
        sqlx::query(&insert).bind(id).bind(&resources).bind(&amounts).execute(&mut *tx).await?;
    }
    Ok(())
}

fn vector_of(rows: &[(String, i64)]) -> ResourceVector {
    let mut v = ResourceVector::new();
    for (resource, amount) in rows {
        if let (Some(key), Ok(amount)) = (QuotaKey::parse(resource), u64::try_from(*amount)) {
            v.set(key.resource_key(), amount);
        }
    }
    v
}

/// Groups `(owner, resource, amount)` rows by owner.
fn by_owner(rows: Vec<(i64, String, i64)>) -> BTreeMap<i64, Vec<(String, i64)>> {
    let mut out: BTreeMap<i64, Vec<(String, i64)>> = BTreeMap::new();
    for (owner, resource, amount) in rows {
        out.entry(owner).or_default().push((resource, amount));
    }
    out
}

/// GPU milli that each queue's jobs in the states `which` selects ask for, by queue id.
async fn gpus_by_queue(conn: &mut PgConnection, which: fn(JobState) -> bool) -> DbResult<BTreeMap<i64, u64>> {
    let states: Vec<&str> = JobState::ALL.into_iter().filter(|s| which(*s)).map(JobState::as_str).collect();
    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT j.queue_id, sum(d.amount)::bigint FROM jobs j JOIN job_demands d ON d.job_id = j.id AND d.resource = $2
         WHERE j.state = ANY($1) GROUP BY j.queue_id",
    )
    .bind(&states)
    .bind(GPU)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|(q, m)| (q, u64::try_from(m).unwrap_or(0))).collect())
}

/// The tree's levels, weights and guarantees, without what anyone holds or wants.
pub async fn share_levels(conn: &mut PgConnection) -> DbResult<ShareTree> {
    type Rows = Option<Vec<(String, i64)>>;
    let node = |id: i64, parent: i64, name: String, weight: f64, g: Rows, l: Rows| ShareNode {
        id,
        parent,
        name,
        weight,
        guarantees: g.map(|g| vector_of(&g)).unwrap_or_default(),
        // A vector holds no zeros (a missing key is no limit): a limit of 0 bounds the fill at
        // one milli-GPU, which admission never lets it reach anyway.
        limits: l
            .map(|l| vector_of(&l.into_iter().map(|(r, a)| (r, a.max(1))).collect::<Vec<_>>()))
            .unwrap_or_default(),
    };
    let tenant_g = by_owner(
        sqlx::query_as("SELECT tenant_id, resource, guaranteed FROM tenant_guarantees").fetch_all(&mut *conn).await?,
    );
    let project_g = by_owner(
        sqlx::query_as("SELECT project_id, resource, guaranteed FROM project_guarantees").fetch_all(&mut *conn).await?,
    );
    let queue_g = by_owner(
        sqlx::query_as("SELECT queue_id, resource, guaranteed FROM queue_quotas WHERE guaranteed > 0")
            .fetch_all(&mut *conn)
            .await?,
    );
    let tenant_l = by_owner(
        sqlx::query_as("SELECT tenant_id, resource, limit_amount FROM tenant_limits").fetch_all(&mut *conn).await?,
    );
    let project_l = by_owner(
        sqlx::query_as("SELECT project_id, resource, limit_amount FROM project_limits").fetch_all(&mut *conn).await?,
    );
    let queue_l = by_owner(
        sqlx::query_as("SELECT queue_id, resource, limit_amount FROM queue_quotas WHERE limit_amount IS NOT NULL")
            .fetch_all(&mut *conn)
            .await?,
    );
    let tenants: Vec<(i64, String, f64)> =
        sqlx::query_as("SELECT id, slug, weight FROM tenants ORDER BY id").fetch_all(&mut *conn).await?;
    let projects: Vec<(i64, i64, String, f64)> =
        sqlx::query_as("SELECT id, tenant_id, slug, weight FROM projects ORDER BY id").fetch_all(&mut *conn).await?;
    let queues: Vec<(i64, i64, String, f64)> =
        sqlx::query_as("SELECT id, project_id, name, weight FROM queues ORDER BY id").fetch_all(&mut *conn).await?;
    let mut pool_weights: BTreeMap<i64, BTreeMap<String, f64>> = BTreeMap::new();
    let rows: Vec<(i64, String, f64)> =
        sqlx::query_as("SELECT queue_id, pool, weight FROM queue_pool_weights").fetch_all(&mut *conn).await?;
    for (queue, pool, weight) in rows {
        pool_weights.entry(queue).or_default().insert(pool, weight);
    }
    let (mut tenant_g, mut project_g, mut queue_g) = (tenant_g, project_g, queue_g);
    let (mut tenant_l, mut project_l, mut queue_l) = (tenant_l, project_l, queue_l);
    Ok(ShareTree {
        tenants: tenants
            .into_iter()
            .map(|(id, slug, w)| node(id, 0, slug, w, tenant_g.remove(&id), tenant_l.remove(&id)))
            .collect(),
        projects: projects
            .into_iter()
            .map(|(id, t, slug, w)| node(id, t, slug, w, project_g.remove(&id), project_l.remove(&id)))
            .collect(),
        queues: queues
            .into_iter()
            .map(|(id, p, name, w)| node(id, p, name, w, queue_g.remove(&id), queue_l.remove(&id)))
            .collect(),
        pool_weights,
        ..ShareTree::default()
    })
}

/// The whole tree with what each queue's work holds now and what its admitted jobs waiting
/// for a cluster ask for; `capacity_milli` is the fleet's.
pub async fn share_tree(conn: &mut PgConnection, capacity_milli: u64) -> DbResult<ShareTree> {
    let levels = share_levels(conn).await?;
    let held = gpus_by_queue(conn, JobState::holds_capacity).await?;
    let wanted = gpus_by_queue(conn, |s| s.awaits_dispatch() && s.holds_quota()).await?;
    let past = usage_history(conn).await?;
    Ok(ShareTree { held, wanted, capacity_milli, past, ..levels })
}

/// Each queue's decayed past GPU usage as stored (`queue_usage_history`).
pub async fn usage_history(conn: &mut PgConnection) -> DbResult<BTreeMap<i64, PastUsage>> {
    let rows: Vec<(i64, f64, DateTime<Utc>)> =
        sqlx::query_as("SELECT queue_id, gpu_milli_s, as_of FROM queue_usage_history").fetch_all(conn).await?;
    Ok(rows
        .into_iter()
        .map(|(q, milli_s, as_of)| {
            let amounts = BTreeMap::from([(ResourceKey::Gpus, milli_s)]);
            (q, PastUsage { amounts, as_of: u64::try_from(as_of.timestamp()).unwrap_or(0) })
        })
        .collect())
}

/// Rolls every queue's history forward to `now`, each having held since its last roll what its
/// work holds now ([`crate::allocator::roll_history`]), in one transaction.
pub async fn roll_usage_history(pool: &sqlx::PgPool, now: DateTime<Utc>, half_life_s: u64) -> DbResult<()> {
    let mut tx = pool.begin().await?;
    // One roll at a time: two leaders in a fail-over would count an interval twice.
    sqlx::query("LOCK TABLE queue_usage_history IN EXCLUSIVE MODE").execute(&mut *tx).await?;
    let past = usage_history(&mut tx).await?;
    let held = gpus_by_queue(&mut tx, JobState::holds_capacity).await?;
    let now_s = u64::try_from(now.timestamp()).unwrap_or(0);
    let rolled = crate::allocator::roll_history(&past, &held, now_s, half_life_s);
    let (queues, amounts): (Vec<i64>, Vec<f64>) =
        rolled.iter().map(|(q, p)| (*q, p.amounts.get(&ResourceKey::Gpus).copied().unwrap_or(0.0))).unzip();
    sqlx::query("DELETE FROM queue_usage_history WHERE NOT (queue_id = ANY($1))")
        .bind(&queues)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO queue_usage_history (queue_id, gpu_milli_s, as_of)
         SELECT q, m, $3 FROM unnest($1::bigint[], $2::float8[]) AS h (q, m)
         ON CONFLICT (queue_id) DO UPDATE SET gpu_milli_s = excluded.gpu_milli_s, as_of = excluded.as_of",
    )
    .bind(&queues)
    .bind(&amounts)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Clusters not retired whose agent was last sent queue settings other than those of `digest`
/// (or none since it said Hello).
pub async fn clusters_owed_queues(conn: &mut PgConnection, digest: &str) -> DbResult<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM clusters WHERE retired_at IS NULL AND queues_sent IS DISTINCT FROM $1 ORDER BY id",
    )
    .bind(digest)
    .fetch_all(conn)
    .await?)
}

/// Records that `cluster`'s agent was sent the queue settings of `digest`.
pub async fn record_queues_sent(conn: &mut PgConnection, cluster: &str, digest: &str) -> DbResult<()> {
    sqlx::query("UPDATE clusters SET queues_sent = $2 WHERE id = $1").bind(cluster).bind(digest).execute(conn).await?;
    Ok(())
}

/// The GPUs, in milli, of the clusters reported healthy and not cordoned (their last capacity
/// summaries).
pub async fn fleet_capacity_milli(pool: &sqlx::PgPool) -> DbResult<u64> {
    let capacities: Vec<Option<serde_json::Value>> =
        sqlx::query_scalar("SELECT capacity FROM clusters WHERE health = $1 AND NOT cordoned")
            .bind(crate::domain::Health::Healthy.as_str())
            .fetch_all(pool)
            .await?;
    Ok(capacities
        .into_iter()
        .flatten()
        .filter_map(|v| serde_json::from_value::<grus_protocol::wire::CapacitySummary>(v).ok())
        .flat_map(|c| c.models)
        .map(|m| u64::from(m.total_gpus) * u64::from(grus_scheduler::resources::MILLI_PER_GPU))
        .sum())
}

/// The fleet's fair shares now, as GraphQL shows them: over the GPUs of the clusters reported
/// healthy and not cordoned, and the demand of every admitted job waiting for a cluster.
pub async fn fleet_shares_now(pool: &sqlx::PgPool) -> DbResult<crate::allocator::FleetShares> {
    let capacity_milli = fleet_capacity_milli(pool).await?;
    let tree = share_tree(&mut *pool.acquire().await?, capacity_milli).await?;
    crate::allocator::FleetShares::new(&tree, std::iter::empty())
        .map_err(|e| DbError::Internal(sqlx::Error::Protocol(format!("fair-share tree: {e}"))))
}

/// A project's or tenant's limit on one resource, as admission reads it.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct LimitRow {
    /// `project` or `tenant` ([`QuotaLevel::as_str`]).
    pub level: String,
    /// The project's or tenant's id.
    pub owner: i64,
    /// Its slug.
    pub name: String,
    pub resource: String,
    pub limit_amount: i64,
}

/// The limits of the given projects and of their tenants: one round trip, empty when nobody set
/// any (admission's common case).
pub async fn limits_above(conn: &mut PgConnection, projects: &[i64]) -> DbResult<Vec<LimitRow>> {
    Ok(sqlx::query_as(
        "WITH p AS (SELECT id, tenant_id, slug FROM projects WHERE id = ANY($1))
         SELECT $2 AS level, l.project_id AS owner, p.slug AS name, l.resource, l.limit_amount
           FROM project_limits l JOIN p ON p.id = l.project_id
         UNION ALL
         SELECT $3, l.tenant_id, t.slug, l.resource, l.limit_amount
           FROM tenant_limits l JOIN tenants t ON t.id = l.tenant_id
          WHERE l.tenant_id IN (SELECT tenant_id FROM p)",
    )
    .bind(projects)
    .bind(QuotaLevel::Project.as_str())
    .bind(QuotaLevel::Tenant.as_str())
    .fetch_all(conn)
    .await?)
}

/// A queue under a limited project or tenant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct QueueUnder {
    pub queue_id: i64,
    pub project_id: i64,
    pub tenant_id: i64,
}

/// Locks the rows of `tenants` and `projects` (`FOR NO KEY UPDATE`, tenants first, each in id
/// order) and then lists every queue under them: read after the locks, so no queue an admission
/// under the same limit could use is missed.
pub async fn lock_limited_levels(
    conn: &mut PgConnection,
    tenants: &[i64],
    projects: &[i64],
) -> DbResult<Vec<QueueUnder>> {
    sqlx::query("SELECT id FROM tenants WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE")
        .bind(tenants)
        .execute(&mut *conn)
        .await?;
    sqlx::query("SELECT id FROM projects WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE")
        .bind(projects)
        .execute(&mut *conn)
        .await?;
    Ok(sqlx::query_as(
        "SELECT q.id AS queue_id, q.project_id, p.tenant_id FROM queues q JOIN projects p ON p.id = q.project_id
         WHERE q.project_id = ANY($1) OR p.tenant_id = ANY($2) ORDER BY q.id",
    )
    .bind(projects)
    .bind(tenants)
    .fetch_all(conn)
    .await?)
}
