//! Jobs: the job row, its event trail, and the way in (`insert`), the way its state moves
//! (`transitions`), its tasks and replicas (`tasks`) and the lists of jobs (`list`).
//!
//! Invariant 6: [`transition_job`] is the only code that changes `jobs.state`, and it writes
//! the `job_events` row in the same transaction. The schema backs this up: a trigger refuses a
//! state change without the matching event, and another refuses UPDATE/DELETE on events. The
//! state machine itself is `crate::domain::JobState`'s. Dispatches are `db::dispatch`'s.

mod insert;
mod list;
mod tasks;
mod transitions;

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{FromRow, PgConnection, PgExecutor};

use super::{DbError, DbResult};
use crate::domain::JobState;
pub use insert::{check_insertable, insert_admitted_jobs, insert_job, AdmittedJob, NewJob, NewTask};
pub(in crate::db) use list::{job_head_at, task_at, JOB_HEAD_COLUMNS};
pub use list::{
    like_pattern, list_jobs, list_visible_jobs, JobFilter, JobHead, JobHeadPage, JobPage, PageIncludes,
    VisibleJobFilter,
};
pub use tasks::{replicas, tasks, RawJson, Replica, Task, TaskSpec};
pub use transitions::{transition_job, transition_job_from, transition_replica, transition_task, ReplicaReport};

/// A job row.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct Job {
    pub id: i64,
    pub project_id: i64,
    pub queue_id: i64,
    pub name: String,
    pub priority: i32,
    pub priority_class: String,
    pub preemptible: bool,
    pub spec: Value,
    #[sqlx(try_from = "String")]
    pub state: JobState,
    pub borrowed: bool,
    pub submitted_by: i64,
    pub submitted_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub cluster_id: Option<String>,
    pub epoch: i64,
    pub why_pending: Option<Value>,
}

/// Who or what caused an event: `user:<id>`, `agent:<cluster>`, `system:<component>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cause<'a> {
    pub cause: &'a str,
    pub actor: &'a str,
}

/// Where an event came from, when an agent reported it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventOrigin<'a> {
    /// Agent time of the change; `None`: now.
    pub at: Option<DateTime<Utc>>,
    pub cluster_id: Option<&'a str>,
    pub epoch: Option<i64>,
    /// Stream message id: a second event with the same id is ignored.
    pub message_id: Option<&'a str>,
}

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct JobEvent {
    pub id: i64,
    pub job_id: i64,
    pub task_id: Option<i64>,
    pub replica_id: Option<i64>,
    pub from_state: Option<String>,
    pub to_state: String,
    pub cause: String,
    pub actor: String,
    pub at: DateTime<Utc>,
    pub recorded_at: DateTime<Utc>,
    pub cluster_id: Option<String>,
    pub epoch: Option<i64>,
    pub message_id: Option<String>,
}

/// Appends an event that changes no state (`state` to itself): a change of the job's settings
/// (priority, aging) or a checkpoint its agent reported, recorded with its cause and actor.
/// Returns false when `origin`'s message id was already recorded (a redelivery).
pub async fn note_job_event(
    conn: &mut PgConnection,
    job_id: i64,
    state: &str,
    by: Cause<'_>,
    origin: &EventOrigin<'_>,
) -> DbResult<bool> {
    insert_event(conn, job_id, None, Some(state), state, by, origin).await
}

#[allow(clippy::too_many_arguments)]
async fn insert_event(
    conn: &mut PgConnection,
    job_id: i64,
    task: Option<(i64, Option<i64>)>,
    from: Option<&str>,
    to: &str,
    by: Cause<'_>,
    origin: &EventOrigin<'_>,
) -> DbResult<bool> {
    let done = sqlx::query(
        "INSERT INTO job_events (job_id, task_id, replica_id, from_state, to_state, cause, actor, at, cluster_id, epoch, message_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, COALESCE($8, now()), $9, $10, $11)
         ON CONFLICT (message_id) DO NOTHING",
    )
    .bind(job_id)
    .bind(task.map(|t| t.0))
    .bind(task.and_then(|t| t.1))
    .bind(from)
    .bind(to)
    .bind(by.cause)
    .bind(by.actor)
    .bind(origin.at)
    .bind(origin.cluster_id)
    .bind(origin.epoch)
    .bind(origin.message_id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Records why a pending job is not admitted or placed (no state change, so no event).
pub async fn set_why_pending(db: impl PgExecutor<'_>, job_id: i64, why: &Value) -> DbResult<()> {
    sqlx::query("UPDATE jobs SET why_pending = $2 WHERE id = $1 AND state = 'pending'")
        .bind(job_id)
        .bind(why)
        .execute(db)
        .await?;
    Ok(())
}

pub async fn get_job(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Job> {
    sqlx::query_as("SELECT * FROM jobs WHERE id = $1")
        .bind(job_id)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("job"))
}

/// Where job `job_id` stands in its queue's line (1: next), or `None` when it does not wait to
/// start (`JobState::waits_to_start`). The line is in the order the allocator serves a queue
/// (`allocator::PendingJob::order_key`): priority first, then workspaces, then age, then id.
pub async fn queue_position(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Option<i64>> {
    let waiting: Vec<&str> = JobState::ALL.into_iter().filter(|s| s.waits_to_start()).map(|s| s.as_str()).collect();
    Ok(sqlx::query_scalar(
        "SELECT (SELECT count(*) + 1 FROM jobs o
                 WHERE o.queue_id = j.queue_id AND o.state = ANY($2)
                   AND (-o.priority, o.workload_type <> 'workspace', o.submitted_at, o.id)
                     < (-j.priority, j.workload_type <> 'workspace', j.submitted_at, j.id))
         FROM jobs j WHERE j.id = $1 AND j.state = ANY($2)",
    )
    .bind(job_id)
    .bind(&waiting)
    .fetch_optional(db)
    .await?)
}

/// The event trail of a job, oldest first.
pub async fn job_events(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Vec<JobEvent>> {
    Ok(sqlx::query_as("SELECT * FROM job_events WHERE job_id = $1 ORDER BY id").bind(job_id).fetch_all(db).await?)
}
