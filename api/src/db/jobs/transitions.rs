//! How a job's, a task's and a replica's state move: along the machines of `crate::domain`,
//! each change with its event in the same transaction; a report already applied (its message
//! id recorded) changes nothing.

use grus_protocol::wire::ReplicaExit;
use serde_json::Value;
use sqlx::PgConnection;

use super::{insert_event, Cause, EventOrigin};
use crate::db::{DbError, DbResult};
use crate::domain::{JobState, UnitState};

/// The only way to change a job's state: locks the job row, checks the state machine, appends
/// the event and updates the row, all on `conn` (a transaction). Returns the previous state.
/// A disallowed change is a CONFLICT.
pub async fn transition_job(conn: &mut PgConnection, job_id: i64, to: JobState, by: Cause<'_>) -> DbResult<JobState> {
    // Without a message id the event is always new, so the previous state is always known.
    transition_job_from(conn, job_id, to, by, &EventOrigin::default()).await.map(|prev| prev.unwrap_or(to))
}

/// Has the agent message `origin` names already been recorded as an event? Redelivered
/// messages (at-least-once delivery) are recognised by their id.
async fn already_applied(conn: &mut PgConnection, origin: &EventOrigin<'_>) -> DbResult<bool> {
    let Some(id) = origin.message_id else { return Ok(false) };
    let seen: Option<(i64,)> =
        sqlx::query_as("SELECT id FROM job_events WHERE message_id = $1").bind(id).fetch_optional(&mut *conn).await?;
    Ok(seen.is_some())
}

/// [`transition_job`] for a change reported by an agent. Returns `None` when `origin.message_id`
/// was already recorded (a redelivery): nothing changes.
pub async fn transition_job_from(
    conn: &mut PgConnection,
    job_id: i64,
    to: JobState,
    by: Cause<'_>,
    origin: &EventOrigin<'_>,
) -> DbResult<Option<JobState>> {
    let (from,): (String,) = sqlx::query_as("SELECT state FROM jobs WHERE id = $1 FOR UPDATE")
        .bind(job_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(DbError::NotFound("job"))?;
    let from: JobState = from.parse()?;
    // A redelivered agent event is a no-op even when the state has moved on since.
    if already_applied(conn, origin).await? {
        return Ok(None);
    }
    if !from.can_become(to) {
        return Err(DbError::conflict(format!("job cannot go from {from} to {to}")));
    }
    if !insert_event(&mut *conn, job_id, None, Some(from.as_str()), to.as_str(), by, origin).await? {
        return Ok(None);
    }
    // Leaving `pending` clears the explanation of why it was pending.
    sqlx::query(
        "UPDATE jobs SET state = $2, updated_at = now(),
           why_pending = CASE WHEN $2 = 'pending' THEN why_pending ELSE NULL END
         WHERE id = $1",
    )
    .bind(job_id)
    .bind(to.as_str())
    .execute(&mut *conn)
    .await?;
    Ok(Some(from))
}

/// What an agent observed about one replica.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplicaReport<'a> {
    pub state: UnitState,
    pub node: Option<&'a str>,
    pub devices: Option<&'a Value>,
    pub exit: Option<ReplicaExit>,
}

/// Changes a replica's observed state with its event (invariant 6), like
/// [`transition_job_from`]: `None` when `origin.message_id` was already recorded. The replica's
/// node, devices, cluster and epoch are overwritten with the report's (observation).
pub async fn transition_replica(
    conn: &mut PgConnection,
    replica_id: i64,
    report: &ReplicaReport<'_>,
    by: Cause<'_>,
    origin: &EventOrigin<'_>,
) -> DbResult<Option<UnitState>> {
    let (job_id, task_id, from): (i64, i64, String) =
        sqlx::query_as("SELECT job_id, task_id, state FROM replicas WHERE id = $1 FOR UPDATE")
            .bind(replica_id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(DbError::NotFound("replica"))?;
    let from: UnitState = from.parse()?;
    if already_applied(conn, origin).await? {
        return Ok(None);
    }
    if !from.can_become(report.state) {
        return Err(DbError::conflict(format!("replica cannot go from {from} to {}", report.state)));
    }
    let to = report.state.as_str();
    if !insert_event(&mut *conn, job_id, Some((task_id, Some(replica_id))), Some(from.as_str()), to, by, origin).await?
    {
        return Ok(None);
    }
    sqlx::query(
        "UPDATE replicas SET state = $2, node = $3, devices = $4, cluster_id = COALESCE($5, cluster_id),
           epoch = COALESCE($6, epoch), exit_code = $7, termination = $8, updated_at = now()
         WHERE id = $1",
    )
    .bind(replica_id)
    .bind(to)
    .bind(report.node)
    .bind(report.devices)
    .bind(origin.cluster_id)
    .bind(origin.epoch)
    .bind(report.exit.and_then(|e| e.code))
    .bind(report.exit.map(|e| e.termination.as_str()))
    .execute(&mut *conn)
    .await?;
    Ok(Some(from))
}

/// Changes a task's state with its event. Returns the previous state.
pub async fn transition_task(
    conn: &mut PgConnection,
    task_id: i64,
    to: UnitState,
    by: Cause<'_>,
) -> DbResult<UnitState> {
    let (job_id, from): (i64, String) = sqlx::query_as("SELECT job_id, state FROM tasks WHERE id = $1 FOR UPDATE")
        .bind(task_id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(DbError::NotFound("task"))?;
    let from: UnitState = from.parse()?;
    if !from.can_become(to) {
        return Err(DbError::conflict(format!("task cannot go from {from} to {to}")));
    }
    insert_event(
        &mut *conn,
        job_id,
        Some((task_id, None)),
        Some(from.as_str()),
        to.as_str(),
        by,
        &EventOrigin::default(),
    )
    .await?;
    sqlx::query("UPDATE tasks SET state = $2 WHERE id = $1")
        .bind(task_id)
        .bind(to.as_str())
        .execute(&mut *conn)
        .await?;
    Ok(from)
}
