//! Suspending and resuming a job (`suspendJob`, `resumeJob`). A job no cluster holds is
//! suspended at once; a scheduled or running one is evicted, and its eviction ends in
//! `suspended` instead of a requeue (`jobs.suspend_requested_at`, read by ingestion). A
//! suspended job holds no capacity and no quota; resuming it is admission's
//! (`admission::resume`: its stored demand against the queue's current usage), and the
//! allocator then dispatches it under a new epoch.
//!
//! Asked while the job is on its way to a cluster (dispatched, unanswered), the suspension is
//! deferred (`jobs.suspend_requested_at`, `suspend_grace_s`, migration 0019) and the
//! dispatcher carries it out once the cluster answers ([`deferred_suspensions`]).
//!
//! By policy: a queue's window (`ClassOfService::borrowed_suspend`) suspends its borrowed work
//! while open (`jobs.suspended_by_policy`, migration 0018) and resumes it once closed; the
//! dispatcher's window step reads and marks those jobs here.

use sqlx::{PgConnection, PgExecutor};

use crate::db::dispatch::record_evict;
use crate::db::jobs::transition_job;
use crate::db::{Cause, DbError, DbResult, Queue};
use crate::domain::JobState;

/// What a suspension did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Suspension {
    /// No cluster held it: it is suspended now.
    Suspended,
    /// Its cluster stops it after `grace_s`; it ends `suspended`.
    Stopping { cluster: String },
    /// On its way to `cluster` (dispatched, unanswered): stopped after `grace_s` as soon as the
    /// cluster places it, or suspended at once if the cluster refuses it
    /// ([`deferred_suspensions`]).
    Deferred { cluster: String },
}

/// Suspends job `job_id` (locked for the transaction), evicting it with `grace_s` where a
/// cluster runs it, or once the cluster it is on its way to answers. Refused for a job that
/// ended, is suspended already, is still being admitted (pending, for a moment), or is lost
/// with its cluster (unknown: nothing could stop it there now).
pub async fn suspend_job(conn: &mut PgConnection, job_id: i64, grace_s: u32, by: Cause<'_>) -> DbResult<Suspension> {
    let (state, epoch, cluster): (String, i64, Option<String>) =
        sqlx::query_as("SELECT state, epoch, cluster_id FROM jobs WHERE id = $1 FOR UPDATE")
            .bind(job_id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(DbError::NotFound("job"))?;
    let state: JobState = state.parse()?;
    if state == JobState::Pending {
        return Err(DbError::conflict("the job is being admitted: suspend it once it is admitted"));
    }
    if !state.may_suspend() {
        return Err(DbError::conflict(format!("the job is {state}: there is nothing to suspend")));
    }
    if state.can_become(JobState::Suspended) {
        transition_job(&mut *conn, job_id, JobState::Suspended, by).await?;
        return Ok(Suspension::Suspended);
    }
    let cluster = cluster.unwrap_or_default();
    match state {
        JobState::Scheduled | JobState::Running => {
            if !record_evict(&mut *conn, job_id, epoch, grace_s, None, by).await? {
                return Err(DbError::conflict("the job changed meanwhile; try again"));
            }
        }
        // Its eviction is under way already: it now ends suspended.
        JobState::Preempting => {}
        JobState::Dispatched => {
            sqlx::query("UPDATE jobs SET suspend_requested_at = now(), suspend_grace_s = $2 WHERE id = $1")
                .bind(job_id)
                .bind(i32::try_from(grace_s).unwrap_or(i32::MAX))
                .execute(&mut *conn)
                .await?;
            return Ok(Suspension::Deferred { cluster });
        }
        _ => {
            return Err(DbError::conflict(format!(
                "the job is {state} (cluster {cluster}): suspend it once it is scheduled or running"
            )))
        }
    }
    sqlx::query("UPDATE jobs SET suspend_requested_at = now() WHERE id = $1").bind(job_id).execute(&mut *conn).await?;
    Ok(Suspension::Stopping { cluster })
}

/// Whether a suspension was asked for job `job_id` while a cluster held it: its preemption
/// then ends in `suspended` rather than a requeue.
pub async fn suspension_requested(conn: &mut PgConnection, job_id: i64) -> DbResult<bool> {
    Ok(sqlx::query_scalar("SELECT suspend_requested_at IS NOT NULL FROM jobs WHERE id = $1")
        .bind(job_id)
        .fetch_optional(&mut *conn)
        .await?
        .unwrap_or(false))
}

/// A suspension asked while its job was on its way to a cluster, whose answer has come.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct DeferredSuspension {
    pub id: i64,
    pub state: String,
    pub epoch: i64,
    /// The grace it was asked with.
    pub suspend_grace_s: Option<i32>,
}

/// The suspensions asked while their jobs were dispatched and unanswered, now that the
/// cluster answered: placed (`scheduled`, `running`: evict them) or refused or requeued
/// (`rejected`, `admitted`: suspend them at once). Oldest first.
pub async fn deferred_suspensions(db: impl PgExecutor<'_>) -> DbResult<Vec<DeferredSuspension>> {
    Ok(sqlx::query_as(
        "SELECT id, state, epoch, suspend_grace_s FROM jobs
         WHERE suspend_requested_at IS NOT NULL AND state IN ('admitted', 'rejected', 'scheduled', 'running')
         ORDER BY id",
    )
    .fetch_all(db)
    .await?)
}

/// Carries out one deferred suspension (see [`deferred_suspensions`]) with `default_grace_s`
/// where none was kept. Returns whether it did (false: the job changed meanwhile).
pub async fn carry_out_deferred(
    conn: &mut PgConnection,
    s: &DeferredSuspension,
    default_grace_s: u32,
    by: Cause<'_>,
) -> DbResult<bool> {
    let grace = s.suspend_grace_s.and_then(|g| u32::try_from(g).ok()).unwrap_or(default_grace_s);
    match s.state.parse::<JobState>()? {
        JobState::Scheduled | JobState::Running => record_evict(&mut *conn, s.id, s.epoch, grace, None, by).await,
        state if state.can_become(JobState::Suspended) => {
            transition_job(&mut *conn, s.id, JobState::Suspended, by).await?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The queues with a window for their borrowed work.
pub async fn queues_with_windows(db: impl PgExecutor<'_>) -> DbResult<Vec<Queue>> {
    Ok(sqlx::query_as("SELECT * FROM queues WHERE borrowed_suspend_from_min IS NOT NULL ORDER BY id")
        .fetch_all(db)
        .await?)
}

/// The borrowed jobs of `queues` that a suspension can take (waiting for a cluster, on its way
/// to one and not yet asked to suspend, scheduled or running), oldest first, with their queue.
pub async fn borrowed_jobs_in(db: impl PgExecutor<'_>, queues: &[i64]) -> DbResult<Vec<(i64, i64)>> {
    Ok(sqlx::query_as(
        "SELECT id, queue_id FROM jobs
         WHERE queue_id = ANY($1) AND borrowed
           AND (state IN ('admitted', 'rejected', 'scheduled', 'running')
                OR (state = 'dispatched' AND suspend_requested_at IS NULL))
         ORDER BY id",
    )
    .bind(queues)
    .fetch_all(db)
    .await?)
}

/// Jobs suspended by their queue's window whose queue is not among `open` (its window closed,
/// or was removed), oldest first.
pub async fn policy_suspended_outside(db: impl PgExecutor<'_>, open: &[i64]) -> DbResult<Vec<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM jobs WHERE suspended_by_policy AND state = 'suspended' AND NOT (queue_id = ANY($1))
         ORDER BY id",
    )
    .bind(open)
    .fetch_all(db)
    .await?)
}

/// Marks a job as suspended by its queue's window (resumed when it closes).
pub async fn mark_suspended_by_policy(conn: &mut PgConnection, job_id: i64) -> DbResult<()> {
    sqlx::query("UPDATE jobs SET suspended_by_policy = true WHERE id = $1").bind(job_id).execute(conn).await?;
    Ok(())
}
