//! Queues and their quotas (DESIGN.md "Queues, quotas, fair share").
//!
//! Quota amounts for the keys `gpu` and `gpu/<model>` are GPU milli (1000 = one GPU);
//! `cpu_milli` and `memory_mib` are in their own units.

use std::collections::BTreeMap;

use sqlx::postgres::PgArguments;
use sqlx::query::QueryAs;
use sqlx::{FromRow, PgExecutor, Postgres};

use super::{DbError, DbResult};
use crate::domain::{ClassOfService, Role, SuspendWindow};

#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct Queue {
    pub id: i64,
    pub project_id: i64,
    pub name: String,
    pub weight: f64,
    pub can_borrow: bool,
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// Class of service ([`ClassOfService`]): aging and runtimes, in seconds.
    pub max_wait_s: Option<i32>,
    pub default_runtime_s: Option<i32>,
    pub max_runtime_s: Option<i32>,
    /// The window in which its borrowed work is suspended ([`SuspendWindow`]), UTC minutes.
    pub borrowed_suspend_from_min: Option<i16>,
    pub borrowed_suspend_until_min: Option<i16>,
    /// GPU milli kept for interactive workspaces (migration 0029).
    pub interactive_reserve_milli: i64,
}

impl Queue {
    pub fn class_of_service(&self) -> ClassOfService {
        let secs = |v: Option<i32>| v.and_then(|v| u32::try_from(v).ok());
        let minute = |v: Option<i16>| v.and_then(|v| u16::try_from(v).ok());
        ClassOfService {
            max_wait_s: secs(self.max_wait_s),
            default_runtime_s: secs(self.default_runtime_s),
            max_runtime_s: secs(self.max_runtime_s),
            borrowed_suspend: minute(self.borrowed_suspend_from_min)
                .zip(minute(self.borrowed_suspend_until_min))
                .map(|(from_min, until_min)| SuspendWindow { from_min, until_min }),
            interactive_reserve_milli: u64::try_from(self.interactive_reserve_milli).unwrap_or(0),
        }
    }
}

/// One quota row: `guaranteed <= limit`; a `None` limit means the queue may borrow without bound.
#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct Quota {
    pub resource: String,
    pub guaranteed: i64,
    #[sqlx(rename = "limit_amount")]
    pub limit: Option<i64>,
}

/// The queue every project is created with, where a submission that names no queue goes; it
/// cannot be deleted.
pub const DEFAULT_QUEUE: &str = "default";

/// Settings of a queue on creation or update.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSettings<'a> {
    pub name: &'a str,
    pub weight: f64,
    pub can_borrow: bool,
    pub service: ClassOfService,
}

impl<'a> QueueSettings<'a> {
    /// Weight 1, borrowing allowed, no class of service: a new project's `default` queue.
    pub fn named(name: &'a str) -> QueueSettings<'a> {
        QueueSettings { name, weight: 1.0, can_borrow: true, service: ClassOfService::default() }
    }
}

/// Binds `s` as `$2`..`$10` (name, weight, borrowing, the class of service's columns) after
/// `$1`, in the column order both statements below use.
fn bind_settings<'q, O>(
    q: QueryAs<'q, Postgres, O, PgArguments>,
    first: i64,
    s: &QueueSettings<'q>,
) -> QueryAs<'q, Postgres, O, PgArguments> {
    let secs = |v: Option<u32>| v.map(|v| v as i32);
    let window = s.service.borrowed_suspend;
    q.bind(first)
        .bind(s.name)
        .bind(s.weight)
        .bind(s.can_borrow)
        .bind(secs(s.service.max_wait_s))
        .bind(secs(s.service.default_runtime_s))
        .bind(secs(s.service.max_runtime_s))
        .bind(window.map(|w| w.from_min as i16))
        .bind(window.map(|w| w.until_min as i16))
        .bind(i64::try_from(s.service.interactive_reserve_milli).unwrap_or(i64::MAX))
}

pub async fn create_queue(db: impl PgExecutor<'_>, project_id: i64, s: &QueueSettings<'_>) -> DbResult<Queue> {
    let q = sqlx::query_as(
        "INSERT INTO queues (project_id, name, weight, can_borrow, max_wait_s, default_runtime_s, max_runtime_s,
                             borrowed_suspend_from_min, borrowed_suspend_until_min, interactive_reserve_milli)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *",
    );
    Ok(bind_settings(q, project_id, s).fetch_one(db).await?)
}

pub async fn update_queue(db: impl PgExecutor<'_>, queue_id: i64, s: &QueueSettings<'_>) -> DbResult<Queue> {
    let q = sqlx::query_as(
        "UPDATE queues SET name = $2, weight = $3, can_borrow = $4, max_wait_s = $5, default_runtime_s = $6,
           max_runtime_s = $7, borrowed_suspend_from_min = $8, borrowed_suspend_until_min = $9,
           interactive_reserve_milli = $10
         WHERE id = $1 RETURNING *",
    );
    bind_settings(q, queue_id, s).fetch_optional(db).await?.ok_or(DbError::NotFound("queue"))
}

/// A queue's weights in the node pools where they differ from its weight, by pool.
pub async fn pool_weights(db: impl PgExecutor<'_>, queue_id: i64) -> DbResult<Vec<(String, f64)>> {
    Ok(sqlx::query_as("SELECT pool, weight FROM queue_pool_weights WHERE queue_id = $1 ORDER BY pool")
        .bind(queue_id)
        .fetch_all(db)
        .await?)
}

/// Replaces a queue's per-pool weights.
pub async fn set_pool_weights(tx: &mut sqlx::PgConnection, queue_id: i64, weights: &[(String, f64)]) -> DbResult<()> {
    sqlx::query("DELETE FROM queue_pool_weights WHERE queue_id = $1").bind(queue_id).execute(&mut *tx).await?;
    let (pools, values): (Vec<&str>, Vec<f64>) = weights.iter().map(|(p, w)| (p.as_str(), *w)).unzip();
    sqlx::query(
        "INSERT INTO queue_pool_weights (queue_id, pool, weight)
         SELECT $1, p, w FROM unnest($2::text[], $3::float8[]) AS g (p, w)",
    )
    .bind(queue_id)
    .bind(&pools)
    .bind(&values)
    .execute(&mut *tx)
    .await?;
    Ok(())
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

/// Where a submission goes, read in one statement: the project named by `slug`, the caller's
/// effective role in it ([`super::role_in_project`]'s rule) and its queue `queue_name`.
#[derive(Clone, Debug, PartialEq)]
pub struct SubmissionTarget {
    pub project_id: i64,
    /// `None`: no access to the project at all.
    pub role: Option<Role>,
    /// `None`: the project has no queue of that name.
    pub queue: Option<Queue>,
}

/// Reads a [`SubmissionTarget`]; `NotFound("project")` when no project has the slug. One
/// statement instead of four (project, role, project again, queue): submissions are the
/// hottest write path.
pub async fn submission_target(
    db: impl PgExecutor<'_>,
    user_id: i64,
    slug: &str,
    queue_name: &str,
) -> DbResult<SubmissionTarget> {
    #[derive(FromRow)]
    struct Row {
        project_id: i64,
        roles: Vec<String>,
        queue_id: Option<i64>,
        queue_name: Option<String>,
        weight: Option<f64>,
        can_borrow: Option<bool>,
        created_at: Option<chrono::DateTime<chrono::Utc>>,
        max_wait_s: Option<i32>,
        default_runtime_s: Option<i32>,
        max_runtime_s: Option<i32>,
        borrowed_suspend_from_min: Option<i16>,
        borrowed_suspend_until_min: Option<i16>,
        interactive_reserve_milli: Option<i64>,
    }
    let row: Row = sqlx::query_as(
        "SELECT p.id AS project_id,
           ARRAY(SELECT 'platform_admin' FROM users u WHERE u.id = $1 AND u.platform_admin
                 UNION ALL SELECT m.role FROM memberships m WHERE m.user_id = $1 AND m.tenant_id = p.tenant_id
                 UNION ALL SELECT m.role FROM memberships m WHERE m.user_id = $1 AND m.project_id = p.id) AS roles,
           q.id AS queue_id, q.name AS queue_name, q.weight, q.can_borrow, q.created_at,
           q.max_wait_s, q.default_runtime_s, q.max_runtime_s, q.borrowed_suspend_from_min,
           q.borrowed_suspend_until_min, q.interactive_reserve_milli
         FROM projects p LEFT JOIN queues q ON q.project_id = p.id AND q.name = $3
         WHERE p.slug = $2",
    )
    .bind(user_id)
    .bind(slug)
    .bind(queue_name)
    .fetch_optional(db)
    .await?
    .ok_or(DbError::NotFound("project"))?;
    let queue = match (row.queue_id, row.queue_name, row.weight, row.can_borrow, row.created_at) {
        (Some(id), Some(name), Some(weight), Some(can_borrow), Some(created_at)) => Some(Queue {
            id,
            project_id: row.project_id,
            name,
            weight,
            can_borrow,
            created_at,
            max_wait_s: row.max_wait_s,
            default_runtime_s: row.default_runtime_s,
            max_runtime_s: row.max_runtime_s,
            borrowed_suspend_from_min: row.borrowed_suspend_from_min,
            borrowed_suspend_until_min: row.borrowed_suspend_until_min,
            interactive_reserve_milli: row.interactive_reserve_milli.unwrap_or(0),
        }),
        _ => None,
    };
    Ok(SubmissionTarget {
        project_id: row.project_id,
        role: row.roles.iter().filter_map(|r| Role::parse(r)).max(),
        queue,
    })
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

/// A queue locked for admission, with what [`crate::admission::decide`] needs.
#[derive(Clone, Debug, PartialEq)]
pub struct LockedQueue {
    pub id: i64,
    pub project_id: i64,
    pub name: String,
    pub can_borrow: bool,
    pub quotas: Vec<Quota>,
    /// [`queue_usage`], read after the lock was taken.
    pub usage: Vec<(String, i64)>,
    /// GPU milli of its `gpu` quota kept for interactive workspaces.
    pub interactive_reserve: i64,
}

/// Above this many delta rows, locking a queue for admission folds them first.
pub const FOLD_DELTAS_ABOVE: i32 = 64;

/// Locks the queue row (`FOR NO KEY UPDATE`) and reads its quotas and usage, in one round trip;
/// [`lock_queues_for_admission`] for one queue. `NotFound("queue")` when the queue is not the
/// project's.
pub async fn lock_queue_for_admission(
    conn: &mut sqlx::PgConnection,
    project_id: i64,
    queue_id: i64,
    fold_above: i32,
) -> DbResult<LockedQueue> {
    lock_queues_for_admission(conn, &[(project_id, queue_id)], fold_above)
        .await?
        .remove(&queue_id)
        .ok_or(DbError::NotFound("queue"))
}

/// Locks the queues named by `(project id, queue id)` pairs (`FOR NO KEY UPDATE`, in id order,
/// so that admissions locking overlapping sets cannot deadlock) and reads their quotas and
/// usage, in one round trip (the SQL function of migration 0008); folds the usage deltas of a
/// queue that has more than `fold_above`. The transaction must be READ COMMITTED (checked): the
/// reads need snapshots taken after the locks. A pair that names no queue of that project is
/// absent from the result.
pub async fn lock_queues_for_admission(
    conn: &mut sqlx::PgConnection,
    queues: &[(i64, i64)],
    fold_above: i32,
) -> DbResult<BTreeMap<i64, LockedQueue>> {
    #[derive(FromRow)]
    struct Row {
        q_id: i64,
        q_project_id: i64,
        q_name: String,
        q_can_borrow: bool,
        isolation: String,
        quotas: sqlx::types::Json<Vec<(String, i64, Option<i64>)>>,
        usage: sqlx::types::Json<Vec<(String, i64)>>,
        q_interactive_reserve: i64,
    }
    let (projects, queue_ids): (Vec<i64>, Vec<i64>) = queues.iter().copied().unzip();
    let rows: Vec<Row> = sqlx::query_as("SELECT * FROM lock_queues_for_admission($1, $2, $3)")
        .bind(&queue_ids)
        .bind(&projects)
        .bind(fold_above)
        .fetch_all(&mut *conn)
        .await?;
    let mut locked = BTreeMap::new();
    for row in rows {
        if row.isolation != "read committed" {
            // Not a client error: a caller bug that would silently break invariant 5.
            return Err(DbError::Internal(sqlx::Error::Protocol(format!(
                "admission needs READ COMMITTED, found {}",
                row.isolation
            ))));
        }
        let quotas = row
            .quotas
            .0
            .into_iter()
            .map(|(resource, guaranteed, limit)| Quota { resource, guaranteed, limit })
            .collect();
        let queue = LockedQueue {
            id: row.q_id,
            project_id: row.q_project_id,
            name: row.q_name,
            can_borrow: row.q_can_borrow,
            quotas,
            usage: row.usage.0,
            interactive_reserve: row.q_interactive_reserve,
        };
        locked.insert(queue.id, queue);
    }
    Ok(locked)
}
