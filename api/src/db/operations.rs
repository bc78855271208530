//! Fleet and tenancy operations: cordoning and draining clusters and nodes, retiring an
//! empty cluster, deleting an empty queue or project. Each runs in the caller's transaction,
//! which also writes its audit event (`db::audit`).
//!
//! A cordoned cluster takes no new dispatches (the allocator skips it). A cordoned node takes
//! no new replicas: its agent is told the cluster's cordoned nodes (`CordonNodes`) whenever
//! `clusters.cordons_version` moves past what it was last sent. Draining also evicts the
//! preemptible work there with a grace period; it is requeued and placed elsewhere. Work that
//! is not preemptible runs to its end. A drain lasts until the uncordon: preemptible work that
//! lands there later (dispatched before the drain, or placed before the agent learnt of it) is
//! evicted by the allocator's next round with the drain's grace ([`evict_landed_on_drains`]).

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgExecutor};

use super::dispatch::record_evict;
use super::{Cause, DbError, DbResult};
use crate::domain::{JobState, UnitState};

/// A node taken out of scheduling.
#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct NodeCordon {
    pub cluster_id: String,
    pub node: String,
    pub draining: bool,
    pub since: DateTime<Utc>,
}

fn states(pick: fn(JobState) -> bool) -> Vec<&'static str> {
    JobState::ALL.into_iter().filter(|s| pick(*s)).map(JobState::as_str).collect()
}

/// Locks the cluster's row; NOT_FOUND for an unknown or retired cluster.
async fn lock_cluster(conn: &mut PgConnection, cluster: &str) -> DbResult<()> {
    let found: Option<(String,)> =
        sqlx::query_as("SELECT id FROM clusters WHERE id = $1 AND retired_at IS NULL FOR UPDATE")
            .bind(cluster)
            .fetch_optional(&mut *conn)
            .await?;
    found.map(|_| ()).ok_or(DbError::NotFound("cluster"))
}

/// Cordons (or, with `cordoned` false, uncordons) a whole cluster; `drain_grace_s` marks a
/// drain and keeps its grace for work that lands there later ([`evict_landed_on_drains`]).
pub async fn set_cluster_cordon(
    conn: &mut PgConnection,
    cluster: &str,
    cordoned: bool,
    drain_grace_s: Option<u32>,
) -> DbResult<()> {
    lock_cluster(conn, cluster).await?;
    let drain_grace_s = drain_grace_s.filter(|_| cordoned).map(grace_column);
    sqlx::query("UPDATE clusters SET cordoned = $2, draining = $3 IS NOT NULL, drain_grace_s = $3 WHERE id = $1")
        .bind(cluster)
        .bind(cordoned)
        .bind(drain_grace_s)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Cordons a node and moves the cluster's cordon version on, so its agent is told. A drain
/// (`drain_grace_s`) is kept over a plain cordon of a node already draining; a later drain's
/// grace replaces an earlier one's.
pub async fn cordon_node(
    conn: &mut PgConnection,
    cluster: &str,
    node: &str,
    drain_grace_s: Option<u32>,
) -> DbResult<()> {
    lock_cluster(conn, cluster).await?;
    sqlx::query(
        "INSERT INTO node_cordons (cluster_id, node, draining, drain_grace_s) VALUES ($1, $2, $3 IS NOT NULL, $3)
         ON CONFLICT (cluster_id, node) DO UPDATE SET draining = node_cordons.draining OR excluded.draining,
             drain_grace_s = COALESCE(excluded.drain_grace_s, node_cordons.drain_grace_s)",
    )
    .bind(cluster)
    .bind(node)
    .bind(drain_grace_s.map(grace_column))
    .execute(&mut *conn)
    .await?;
    bump_cordons(conn, cluster).await
}

fn grace_column(grace_s: u32) -> i32 {
    i32::try_from(grace_s).unwrap_or(i32::MAX)
}

/// Uncordons a node; whether it was cordoned.
pub async fn uncordon_node(conn: &mut PgConnection, cluster: &str, node: &str) -> DbResult<bool> {
    lock_cluster(conn, cluster).await?;
    let done = sqlx::query("DELETE FROM node_cordons WHERE cluster_id = $1 AND node = $2")
        .bind(cluster)
        .bind(node)
        .execute(&mut *conn)
        .await?;
    if done.rows_affected() > 0 {
        bump_cordons(conn, cluster).await?;
    }
    Ok(done.rows_affected() > 0)
}

async fn bump_cordons(conn: &mut PgConnection, cluster: &str) -> DbResult<()> {
    sqlx::query("UPDATE clusters SET cordons_version = cordons_version + 1 WHERE id = $1")
        .bind(cluster)
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn node_cordons(db: impl PgExecutor<'_>, cluster: &str) -> DbResult<Vec<NodeCordon>> {
    Ok(sqlx::query_as("SELECT cluster_id, node, draining, since FROM node_cordons WHERE cluster_id = $1 ORDER BY node")
        .bind(cluster)
        .fetch_all(db)
        .await?)
}

/// Evicts, with `grace_s`, the preemptible jobs (preemptible, or admitted as borrowed work)
/// running or placed on `cluster`, on `node` only when given; they are requeued and go
/// elsewhere. Returns the jobs evicted.
pub async fn evict_preemptible(
    conn: &mut PgConnection,
    cluster: &str,
    node: Option<&str>,
    grace_s: u32,
    by: Cause<'_>,
) -> DbResult<Vec<i64>> {
    let targets: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT j.id, j.epoch FROM jobs j
         WHERE j.cluster_id = $1 AND j.state IN ('running', 'scheduled')
           AND (j.preemptible OR j.borrowed)
           AND ($2::text IS NULL OR EXISTS (
               SELECT 1 FROM replicas r WHERE r.job_id = j.id AND r.node = $2 AND r.cluster_id = $1
                 AND r.epoch = j.epoch))
         ORDER BY j.id",
    )
    .bind(cluster)
    .bind(node)
    .fetch_all(&mut *conn)
    .await?;
    let mut evicted = Vec::new();
    for (job, epoch) in targets {
        if record_evict(&mut *conn, job, epoch, grace_s, None, by).await? {
            evicted.push(job);
        }
    }
    Ok(evicted)
}

/// Evicts the preemptible jobs (preemptible, or admitted as borrowed work) that run or are
/// placed, under their current epoch, on a draining cluster or node: work dispatched before a
/// drain and placed after it, or placed on a node before its agent learnt of the cordon. The
/// drain's own grace is used (`default_grace_s` for a drain that kept none; the shorter where a
/// cluster and one of its nodes both drain). Returns the jobs evicted. Run by every allocator
/// round: the clusters with a drain are locked first (`FOR KEY SHARE`: an uncordon, which locks
/// its cluster for update, waits for the round rather than having its work evicted after it;
/// heartbeats do not), and without one nothing else is read.
pub async fn evict_landed_on_drains(
    conn: &mut PgConnection,
    default_grace_s: u32,
    by: Cause<'_>,
) -> DbResult<Vec<i64>> {
    let draining: Vec<(String,)> = sqlx::query_as(
        "SELECT c.id FROM clusters c
         WHERE c.draining OR EXISTS (SELECT 1 FROM node_cordons n WHERE n.cluster_id = c.id AND n.draining)
         ORDER BY c.id FOR KEY SHARE",
    )
    .fetch_all(&mut *conn)
    .await?;
    if draining.is_empty() {
        return Ok(Vec::new());
    }
    let targets: Vec<(i64, i64, i32)> = sqlx::query_as(
        "SELECT j.id, j.epoch, min(COALESCE(d.grace, $2)) FROM (
             SELECT j.id AS job_id, c.drain_grace_s AS grace
               FROM clusters c JOIN jobs j ON j.cluster_id = c.id
              WHERE c.draining AND j.state = ANY($1)
             UNION ALL
             SELECT r.job_id, n.drain_grace_s
               FROM node_cordons n
               JOIN replicas r ON r.cluster_id = n.cluster_id AND r.node = n.node AND r.state = ANY($3)
               JOIN jobs j ON j.id = r.job_id AND j.epoch = r.epoch
              WHERE n.draining AND j.state = ANY($1)
         ) d JOIN jobs j ON j.id = d.job_id
         WHERE j.preemptible OR j.borrowed
         GROUP BY j.id, j.epoch ORDER BY j.id",
    )
    .bind(states(|s| matches!(s, JobState::Scheduled | JobState::Running)))
    .bind(grace_column(default_grace_s))
    .bind(vec![UnitState::Placed.as_str(), UnitState::Running.as_str()])
    .fetch_all(&mut *conn)
    .await?;
    let mut evicted = Vec::new();
    for (job, epoch, grace_s) in targets {
        if record_evict(&mut *conn, job, epoch, u32::try_from(grace_s).unwrap_or(default_grace_s), None, by).await? {
            evicted.push(job);
        }
    }
    Ok(evicted)
}

/// Retires a cluster that holds no work: it takes nothing more, leaves the lists (and health
/// checks, ingestion, queue settings), and its agent token stops working; the token counts as
/// rotated, so the agent's Redis user is revoked too (`agent_access::revoke_rotated`). Its
/// history (jobs, usage) stays. CONFLICT while work is there.
pub async fn retire_cluster(conn: &mut PgConnection, cluster: &str) -> DbResult<()> {
    lock_cluster(conn, cluster).await?;
    let holding: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE cluster_id = $1 AND state = ANY($2)")
        .bind(cluster)
        .bind(states(JobState::holds_capacity))
        .fetch_one(&mut *conn)
        .await?;
    if holding > 0 {
        return Err(DbError::conflict(format!(
            "cluster {cluster} still holds {holding} job(s): drain it and wait for them to end before retiring it"
        )));
    }
    sqlx::query(
        "UPDATE clusters SET retired_at = now(), cordoned = true, draining = false, agent_token_hash = NULL,
             agent_token_rotated_at = now()
         WHERE id = $1",
    )
    .bind(cluster)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM node_cordons WHERE cluster_id = $1").bind(cluster).execute(&mut *conn).await?;
    Ok(())
}

/// Deletes a queue that never held a job or service; CONFLICT otherwise (naming what it
/// holds: the jobs' history is what billing is computed from, so it is never deleted), and
/// for a project's last queue.
pub async fn delete_empty_queue(conn: &mut PgConnection, queue_id: i64) -> DbResult<(i64, String)> {
    let found: Option<(i64, String)> = sqlx::query_as("SELECT project_id, name FROM queues WHERE id = $1 FOR UPDATE")
        .bind(queue_id)
        .fetch_optional(&mut *conn)
        .await?;
    let (project_id, name) = found.ok_or(DbError::NotFound("queue"))?;
    if name == super::DEFAULT_QUEUE {
        return Err(DbError::conflict(format!(
            "queue {name} takes the submissions that name no queue; it cannot be deleted"
        )));
    }
    let (live, ended, services): (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM jobs WHERE queue_id = $1 AND NOT state = ANY($2)),
                (SELECT count(*) FROM jobs WHERE queue_id = $1 AND state = ANY($2)),
                (SELECT count(*) FROM services WHERE queue_id = $1)",
    )
    .bind(queue_id)
    .bind(states(JobState::is_terminal))
    .fetch_one(&mut *conn)
    .await?;
    if let Some(why) = holds(live, ended, services) {
        return Err(DbError::conflict(format!("queue {name} {why}; only an empty queue can be deleted")));
    }
    let siblings: i64 = sqlx::query_scalar("SELECT count(*) FROM queues WHERE project_id = $1")
        .bind(project_id)
        .fetch_one(&mut *conn)
        .await?;
    if siblings <= 1 {
        return Err(DbError::conflict(format!("queue {name} is its project's last queue; delete the project instead")));
    }
    sqlx::query("DELETE FROM queues WHERE id = $1").bind(queue_id).execute(&mut *conn).await?;
    Ok((project_id, name))
}

/// Deletes a project whose queues never held a job or service, with its queues, memberships,
/// shares and budget; CONFLICT otherwise.
pub async fn delete_empty_project(conn: &mut PgConnection, project_id: i64) -> DbResult<()> {
    let found: Option<(String,)> = sqlx::query_as("SELECT slug FROM projects WHERE id = $1 FOR UPDATE")
        .bind(project_id)
        .fetch_optional(&mut *conn)
        .await?;
    let (slug,) = found.ok_or(DbError::NotFound("project"))?;
    let (live, ended, services): (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM jobs WHERE project_id = $1 AND NOT state = ANY($2)),
                (SELECT count(*) FROM jobs WHERE project_id = $1 AND state = ANY($2)),
                (SELECT count(*) FROM services WHERE project_id = $1)",
    )
    .bind(project_id)
    .bind(states(JobState::is_terminal))
    .fetch_one(&mut *conn)
    .await?;
    if let Some(why) = holds(live, ended, services) {
        return Err(DbError::conflict(format!("project {slug} {why}; only an empty project can be deleted")));
    }
    sqlx::query("DELETE FROM queues WHERE project_id = $1").bind(project_id).execute(&mut *conn).await?;
    sqlx::query("DELETE FROM projects WHERE id = $1").bind(project_id).execute(&mut *conn).await?;
    Ok(())
}

/// What keeps a queue or project from being deleted, as a phrase; `None`: nothing.
fn holds(live: i64, ended: i64, services: i64) -> Option<String> {
    if live > 0 {
        Some(format!("still has {live} unfinished job(s)"))
    } else if services > 0 {
        Some(format!("still has {services} service(s)"))
    } else if ended > 0 {
        Some(format!("keeps the history of {ended} finished job(s), which its usage and bills are computed from"))
    } else {
        None
    }
}

/// Clusters whose agent was last sent another set of cordoned nodes than the current one:
/// (cluster, cordon version, its cordoned nodes). An agent never told and with nothing
/// cordoned is owed nothing (an empty set is what it starts with), nor is one whose Hello did
/// not name `cordon-nodes` (it would not understand the command; the API refuses to cordon
/// its nodes).
pub async fn clusters_owed_cordons(conn: &mut PgConnection) -> DbResult<Vec<(String, i64, Vec<String>)>> {
    Ok(sqlx::query_as(
        "SELECT c.id, c.cordons_version,
                COALESCE(array_agg(n.node ORDER BY n.node) FILTER (WHERE n.node IS NOT NULL), '{}')
         FROM clusters c LEFT JOIN node_cordons n ON n.cluster_id = c.id
         WHERE c.retired_at IS NULL AND c.cordons_sent IS DISTINCT FROM c.cordons_version
           AND NOT (c.cordons_sent IS NULL AND c.cordons_version = 0)
           AND $1 = ANY(c.agent_capabilities)
         GROUP BY c.id ORDER BY c.id",
    )
    .bind(grus_protocol::capability::CORDON_NODES)
    .fetch_all(conn)
    .await?)
}

/// Records that `cluster`'s agent was sent cordon version `version`.
pub async fn record_cordons_sent(conn: &mut PgConnection, cluster: &str, version: i64) -> DbResult<()> {
    sqlx::query("UPDATE clusters SET cordons_sent = $2 WHERE id = $1")
        .bind(cluster)
        .bind(version)
        .execute(conn)
        .await?;
    Ok(())
}
