//! Batched reads for the GraphQL DataLoaders: each function answers many keys with one
//! statement (`= ANY($1)`), so a page of 100 jobs costs one query per nested field, not 100.
//!
//! Rows come back unordered across keys; the callers group them by key. Within a key the order
//! is the one the single-row functions use (tasks by id, replicas by task then index, events
//! oldest first), so a nested list reads the same whichever path loaded it.

use std::collections::HashMap;

use sqlx::{FromRow, PgExecutor};

use super::{DbResult, Job, JobEvent, Project, Queue, Quota, Replica, Task, TaskSpec, User};
use crate::domain::Role;

/// The effective role of `user_id` in each of `project_ids`, or in every project when `None`
/// (the rule of [`super::role_in_project`]: the strongest of platform admin, tenant admin of
/// the project's tenant and a direct membership). Projects without any role are absent.
pub async fn roles_in_projects(
    db: impl PgExecutor<'_>,
    user_id: i64,
    project_ids: Option<&[i64]>,
) -> DbResult<HashMap<i64, Role>> {
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "SELECT p.id, 'platform_admin' FROM projects p JOIN users u ON u.id = $1 AND u.platform_admin
           WHERE $2::bigint[] IS NULL OR p.id = ANY($2)
         UNION ALL
         SELECT p.id, m.role FROM memberships m JOIN projects p ON p.tenant_id = m.tenant_id
           WHERE m.user_id = $1 AND ($2::bigint[] IS NULL OR p.id = ANY($2))
         UNION ALL
         SELECT m.project_id, m.role FROM memberships m
           WHERE m.user_id = $1 AND m.project_id IS NOT NULL AND ($2::bigint[] IS NULL OR m.project_id = ANY($2))",
    )
    .bind(user_id)
    .bind(project_ids)
    .fetch_all(db)
    .await?;
    let mut out: HashMap<i64, Role> = HashMap::new();
    for (project, role) in rows {
        if let Some(role) = Role::parse(&role) {
            out.entry(project).and_modify(|r| *r = (*r).max(role)).or_insert(role);
        }
    }
    Ok(out)
}

pub async fn projects(db: impl PgExecutor<'_>, ids: &[i64]) -> DbResult<Vec<Project>> {
    Ok(sqlx::query_as("SELECT * FROM projects WHERE id = ANY($1)").bind(ids).fetch_all(db).await?)
}

pub async fn queues(db: impl PgExecutor<'_>, ids: &[i64]) -> DbResult<Vec<Queue>> {
    Ok(sqlx::query_as("SELECT * FROM queues WHERE id = ANY($1)").bind(ids).fetch_all(db).await?)
}

pub async fn users(db: impl PgExecutor<'_>, ids: &[i64]) -> DbResult<Vec<User>> {
    Ok(sqlx::query_as("SELECT * FROM users WHERE id = ANY($1)").bind(ids).fetch_all(db).await?)
}

pub async fn jobs(db: impl PgExecutor<'_>, ids: &[i64]) -> DbResult<Vec<Job>> {
    Ok(sqlx::query_as("SELECT * FROM jobs WHERE id = ANY($1)").bind(ids).fetch_all(db).await?)
}

/// Tasks of the given jobs, by id.
pub async fn tasks_of_jobs(db: impl PgExecutor<'_>, job_ids: &[i64]) -> DbResult<Vec<Task>> {
    Ok(sqlx::query_as("SELECT id, job_id, name, replicas, state FROM tasks WHERE job_id = ANY($1) ORDER BY id")
        .bind(job_ids)
        .fetch_all(db)
        .await?)
}

/// Specs of the given tasks.
pub async fn task_specs(db: impl PgExecutor<'_>, task_ids: &[i64]) -> DbResult<Vec<TaskSpec>> {
    Ok(sqlx::query_as("SELECT id, spec FROM tasks WHERE id = ANY($1)").bind(task_ids).fetch_all(db).await?)
}

/// Replicas of the given jobs, by task then index.
pub async fn replicas_of_jobs(db: impl PgExecutor<'_>, job_ids: &[i64]) -> DbResult<Vec<Replica>> {
    Ok(sqlx::query_as("SELECT * FROM replicas WHERE job_id = ANY($1) ORDER BY task_id, index")
        .bind(job_ids)
        .fetch_all(db)
        .await?)
}

/// The latest resource reading of each of the given replicas that has one.
pub async fn replica_usage(db: impl PgExecutor<'_>, replica_ids: &[i64]) -> DbResult<Vec<ReplicaUsageRow>> {
    Ok(sqlx::query_as("SELECT * FROM replica_usage WHERE replica_id = ANY($1)").bind(replica_ids).fetch_all(db).await?)
}

/// One replica's latest CPU, memory, disk and network reading (migration 0034).
#[derive(Clone, Debug, sqlx::FromRow)]
pub struct ReplicaUsageRow {
    pub replica_id: i64,
    pub cpu_milli: i64,
    pub memory_mib: i64,
    pub disk_read_bps: i64,
    pub disk_write_bps: i64,
    pub net_rx_bps: i64,
    pub net_tx_bps: i64,
    pub at: chrono::DateTime<chrono::Utc>,
}

/// Replicas of the given tasks, by task then index.
pub async fn replicas_of_tasks(db: impl PgExecutor<'_>, task_ids: &[i64]) -> DbResult<Vec<Replica>> {
    Ok(sqlx::query_as("SELECT * FROM replicas WHERE task_id = ANY($1) ORDER BY task_id, index")
        .bind(task_ids)
        .fetch_all(db)
        .await?)
}

/// Events of the given jobs, oldest first.
pub async fn events_of_jobs(db: impl PgExecutor<'_>, job_ids: &[i64]) -> DbResult<Vec<JobEvent>> {
    Ok(sqlx::query_as("SELECT * FROM job_events WHERE job_id = ANY($1) ORDER BY id")
        .bind(job_ids)
        .fetch_all(db)
        .await?)
}

/// Queues of the given projects, by name.
pub async fn queues_of_projects(db: impl PgExecutor<'_>, project_ids: &[i64]) -> DbResult<Vec<Queue>> {
    Ok(sqlx::query_as("SELECT * FROM queues WHERE project_id = ANY($1) ORDER BY name")
        .bind(project_ids)
        .fetch_all(db)
        .await?)
}

/// A direct project membership with its user.
#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct Member {
    pub project_id: i64,
    #[sqlx(flatten)]
    pub user: User,
    pub role: String,
}

/// Direct members of the given projects (tenant admins are not listed), by subject.
pub async fn members_of_projects(db: impl PgExecutor<'_>, project_ids: &[i64]) -> DbResult<Vec<Member>> {
    Ok(sqlx::query_as(
        "SELECT m.project_id, m.role, u.* FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.project_id = ANY($1) ORDER BY u.subject",
    )
    .bind(project_ids)
    .fetch_all(db)
    .await?)
}

/// Quotas of the given queues, by resource.
pub async fn quotas_of_queues(db: impl PgExecutor<'_>, queue_ids: &[i64]) -> DbResult<Vec<(i64, Quota)>> {
    #[derive(FromRow)]
    struct Row {
        queue_id: i64,
        #[sqlx(flatten)]
        quota: Quota,
    }
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT queue_id, resource, guaranteed, limit_amount FROM queue_quotas
         WHERE queue_id = ANY($1) ORDER BY resource",
    )
    .bind(queue_ids)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|r| (r.queue_id, r.quota)).collect())
}

/// Usage of the given queues per resource key (the rule of [`super::queue_usage`]).
pub async fn usage_of_queues(db: impl PgExecutor<'_>, queue_ids: &[i64]) -> DbResult<Vec<(i64, String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT queue_id, resource, SUM(amount)::bigint FROM queue_usage_deltas WHERE queue_id = ANY($1)
         GROUP BY queue_id, resource HAVING SUM(amount) <> 0 ORDER BY resource",
    )
    .bind(queue_ids)
    .fetch_all(db)
    .await?)
}
