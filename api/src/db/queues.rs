//! Queues and their quotas (DESIGN.md "Queues, quotas, fair share").
//!
//! Quota amounts for the keys `gpu` and `gpu/<model>` are GPU milli (1000 = one GPU);
//! `cpu_milli` and `memory_mib` are in their own units.

use sqlx::{FromRow, PgExecutor};

use super::{DbError, DbResult};

#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct Queue {
    pub id: i64,
    pub project_id: i64,
    pub name: String,
    pub weight: f64,
    pub can_borrow: bool,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

/// One quota row: `guaranteed <= limit`; a `None` limit means the queue may borrow without bound.
#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct Quota {
    pub resource: String,
    pub guaranteed: i64,
    #[sqlx(rename = "limit_amount")]
    pub limit: Option<i64>,
}

/// Settings of a queue on creation or update.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSettings<'a> {
    pub name: &'a str,
    pub weight: f64,
    pub can_borrow: bool,
}

pub async fn create_queue(db: impl PgExecutor<'_>, project_id: i64, s: &QueueSettings<'_>) -> DbResult<Queue> {
    Ok(sqlx::query_as("INSERT INTO queues (project_id, name, weight, can_borrow) VALUES ($1, $2, $3, $4) RETURNING *")
        .bind(project_id)
        .bind(s.name)
        .bind(s.weight)
        .bind(s.can_borrow)
        .fetch_one(db)
        .await?)
}

pub async fn update_queue(db: impl PgExecutor<'_>, queue_id: i64, s: &QueueSettings<'_>) -> DbResult<Queue> {
    sqlx::query_as("UPDATE queues SET name = $2, weight = $3, can_borrow = $4 WHERE id = $1 RETURNING *")
        .bind(queue_id)
        .bind(s.name)
        .bind(s.weight)
        .bind(s.can_borrow)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("queue"))
}

/// Deletes a queue; refused (VALIDATION) while jobs still reference it.
pub async fn delete_queue(db: impl PgExecutor<'_>, queue_id: i64) -> DbResult<()> {
    let done = sqlx::query("DELETE FROM queues WHERE id = $1").bind(queue_id).execute(db).await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound("queue"));
    }
    Ok(())
}

pub async fn get_queue(db: impl PgExecutor<'_>, queue_id: i64) -> DbResult<Queue> {
    sqlx::query_as("SELECT * FROM queues WHERE id = $1")
        .bind(queue_id)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("queue"))
}

pub async fn get_queue_by_name(db: impl PgExecutor<'_>, project_id: i64, name: &str) -> DbResult<Queue> {
    sqlx::query_as("SELECT * FROM queues WHERE project_id = $1 AND name = $2")
        .bind(project_id)
        .bind(name)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("queue"))
}

pub async fn list_queues(db: impl PgExecutor<'_>, project_id: i64) -> DbResult<Vec<Queue>> {
    Ok(sqlx::query_as("SELECT * FROM queues WHERE project_id = $1 ORDER BY name")
        .bind(project_id)
        .fetch_all(db)
        .await?)
}

/// Sets (inserts or replaces) one quota of a queue.
pub async fn set_quota(db: impl PgExecutor<'_>, queue_id: i64, quota: &Quota) -> DbResult<()> {
    sqlx::query(
        "INSERT INTO queue_quotas (queue_id, resource, guaranteed, limit_amount) VALUES ($1, $2, $3, $4)
         ON CONFLICT (queue_id, resource) DO UPDATE
           SET guaranteed = EXCLUDED.guaranteed, limit_amount = EXCLUDED.limit_amount",
    )
    .bind(queue_id)
    .bind(&quota.resource)
    .bind(quota.guaranteed)
    .bind(quota.limit)
    .execute(db)
    .await?;
    Ok(())
}

pub async fn remove_quota(db: impl PgExecutor<'_>, queue_id: i64, resource: &str) -> DbResult<()> {
    sqlx::query("DELETE FROM queue_quotas WHERE queue_id = $1 AND resource = $2")
        .bind(queue_id)
        .bind(resource)
        .execute(db)
        .await?;
    Ok(())
}

pub async fn quotas(db: impl PgExecutor<'_>, queue_id: i64) -> DbResult<Vec<Quota>> {
    Ok(sqlx::query_as(
        "SELECT resource, guaranteed, limit_amount FROM queue_quotas WHERE queue_id = $1 ORDER BY resource",
    )
    .bind(queue_id)
    .fetch_all(db)
    .await?)
}

/// Current usage of a queue per resource key: the demands of its jobs that hold quota, as the
/// triggers of migration 0007 record them (deltas appended whenever a job starts or stops
/// holding quota).
pub async fn queue_usage(db: impl PgExecutor<'_>, queue_id: i64) -> DbResult<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT resource, SUM(amount)::bigint FROM queue_usage_deltas WHERE queue_id = $1
         GROUP BY resource HAVING SUM(amount) <> 0 ORDER BY resource",
    )
    .bind(queue_id)
    .fetch_all(db)
    .await?)
}

/// [`queue_usage`] that also folds the queue's deltas into one row per resource, so that the
/// next read is short again. Only with the queue row locked (admission holds it): then no other
/// fold runs, and a delta committed after this statement began can only be a release (charging
/// a queue needs its lock), which makes the returned usage at most an over-estimate.
pub async fn fold_queue_usage(db: impl PgExecutor<'_>, queue_id: i64) -> DbResult<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "WITH gone AS (DELETE FROM queue_usage_deltas WHERE queue_id = $1 RETURNING resource, amount),
         sums AS (SELECT resource, SUM(amount)::bigint AS amount FROM gone GROUP BY resource)
         INSERT INTO queue_usage_deltas (queue_id, resource, amount)
         SELECT $1, resource, amount FROM sums WHERE amount <> 0
         RETURNING resource, amount",
    )
    .bind(queue_id)
    .fetch_all(db)
    .await?)
}
