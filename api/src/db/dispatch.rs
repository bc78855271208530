//! Dispatches and the storage of the allocator loop: a dispatch row (its epoch) and its answer,
//! what a round loads (jobs waiting for a cluster, their earlier attempts, unanswered
//! dispatches and their reservations, running jobs for reclaim) and what it writes (a dispatch
//! with its event, a timeout, an eviction, owed commands, whyPending), plus job priority
//! changes and the dispatch history the API shows.
//!
//! Every function that changes a job's state runs on a caller's transaction (`&mut *tx`) and
//! goes through [`transition_job`], so the event row is written with it (invariant 6). Each
//! write re-checks, under the job row's lock, the state and epoch the round planned with, so
//! a job cancelled or answered meanwhile is left alone instead of being overwritten.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use sqlx::{FromRow, PgConnection, PgExecutor, PgPool};

use super::jobs::{note_job_event, transition_job, Cause, EventOrigin, RawJson};
use super::{DbError, DbResult};
use crate::allocator::GpuTake;
use crate::domain::JobState;

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct Dispatch {
    pub id: i64,
    pub job_id: i64,
    pub epoch: i64,
    pub cluster_id: String,
    pub dispatched_at: DateTime<Utc>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub outcome: String,
    pub reason: Option<String>,
}

/// Records the intent to run `job_id` on `cluster_id` under the next epoch (fencing token,
/// invariant 2): bumps `jobs.epoch`, points `jobs.cluster_id` at the cluster and marks older
/// unanswered dispatches superseded. The state change to `dispatched` is the caller's
/// [`transition_job`] in the same transaction.
pub async fn insert_dispatch(conn: &mut PgConnection, job_id: i64, cluster_id: &str) -> DbResult<Dispatch> {
    let (epoch,): (i64,) = sqlx::query_as(
        "UPDATE jobs SET epoch = epoch + 1, cluster_id = $2, updated_at = now() WHERE id = $1 RETURNING epoch",
    )
    .bind(job_id)
    .bind(cluster_id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(DbError::NotFound("job"))?;
    sqlx::query("UPDATE dispatches SET outcome = 'superseded' WHERE job_id = $1 AND outcome = 'pending'")
        .bind(job_id)
        .execute(&mut *conn)
        .await?;
    Ok(sqlx::query_as("INSERT INTO dispatches (job_id, epoch, cluster_id) VALUES ($1, $2, $3) RETURNING *")
        .bind(job_id)
        .bind(epoch)
        .bind(cluster_id)
        .fetch_one(&mut *conn)
        .await?)
}

/// Keeps `(job, epoch, predicted run time in seconds)` with each dispatch (migration 0037), in
/// one statement.
pub async fn record_predicted_runtimes(db: impl PgExecutor<'_>, predicted: &[(i64, i64, u64)]) -> DbResult<()> {
    let jobs: Vec<i64> = predicted.iter().map(|p| p.0).collect();
    let epochs: Vec<i64> = predicted.iter().map(|p| p.1).collect();
    let seconds: Vec<i64> = predicted.iter().map(|p| i64::try_from(p.2.max(1)).unwrap_or(i64::MAX)).collect();
    sqlx::query(
        "UPDATE dispatches d SET predicted_runtime_s = u.s
         FROM UNNEST($1::bigint[], $2::bigint[], $3::bigint[]) AS u(j, e, s)
         WHERE d.job_id = u.j AND d.epoch = u.e",
    )
    .bind(&jobs)
    .bind(&epochs)
    .bind(&seconds)
    .execute(db)
    .await?;
    Ok(())
}

/// An agent's answer to a dispatch. A rejection may follow an acknowledgement (accepted, then
/// not placed within the agent's deadline); answers for a stale epoch change nothing (returns false).
pub async fn answer_dispatch(
    db: impl PgExecutor<'_>,
    job_id: i64,
    epoch: i64,
    accepted: bool,
    reason: Option<&str>,
) -> DbResult<bool> {
    let done = sqlx::query(
        "UPDATE dispatches SET outcome = CASE WHEN $3 THEN 'acknowledged' ELSE 'rejected' END,
           acknowledged_at = COALESCE(acknowledged_at, now()), reason = $4
         WHERE job_id = $1 AND epoch = $2
           AND (outcome = 'pending' OR (NOT $3 AND outcome = 'acknowledged'))
           AND epoch = (SELECT epoch FROM jobs WHERE id = $1)",
    )
    .bind(job_id)
    .bind(epoch)
    .bind(accepted)
    .bind(reason)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// An admitted or rejected job that needs a cluster.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct WaitingJob {
    pub id: i64,
    pub priority: i32,
    pub submitted_at: DateTime<Utc>,
    /// Decoded straight into the wire spec by the round (no tree in between).
    pub spec: RawJson,
    pub epoch: i64,
    pub borrowed: bool,
    pub why_pending: Option<Value>,
    /// Moves with every change of the row but a whyPending write (see the allocator's cache).
    pub updated_at: DateTime<Utc>,
}

/// The cheap columns of a waiting job (state `admitted` or `rejected`), read every round.
#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct WaitingHead {
    pub id: i64,
    pub updated_at: DateTime<Utc>,
}

/// Whether a job in `state` waits for a cluster: the states [`waiting_heads`] selects.
pub fn is_waiting_state(state: &str) -> bool {
    matches!(state, "admitted" | "rejected")
}

/// Every waiting job's [`WaitingHead`], by id.
pub async fn waiting_heads(db: impl PgExecutor<'_>) -> DbResult<Vec<WaitingHead>> {
    Ok(sqlx::query_as("SELECT id, updated_at FROM jobs WHERE state IN ('admitted', 'rejected') ORDER BY id")
        .fetch_all(db)
        .await?)
}

/// The waiting jobs among `ids`, whole, by id.
pub async fn waiting_jobs(db: impl PgExecutor<'_>, ids: &[i64]) -> DbResult<Vec<WaitingJob>> {
    Ok(sqlx::query_as(
        "SELECT id, priority, submitted_at, spec, epoch, borrowed, why_pending, updated_at FROM jobs
         WHERE id = ANY($1) AND state IN ('admitted', 'rejected') ORDER BY id",
    )
    .bind(ids)
    .fetch_all(db)
    .await?)
}

/// The newest job event's id (0 without any): every change of a job appends one, so the
/// allocator knows from it whether any job changed since its last plan.
pub async fn last_job_event_id(db: impl PgExecutor<'_>) -> DbResult<i64> {
    let (id,): (i64,) = sqlx::query_as("SELECT COALESCE(max(id), 0) FROM job_events").fetch_one(db).await?;
    Ok(id)
}

/// A failed earlier dispatch of a job.
#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct FailedAttempt {
    pub job_id: i64,
    pub cluster_id: String,
    pub epoch: i64,
    /// `rejected` or `timed_out`.
    pub outcome: String,
    pub reason: Option<String>,
}

/// The rejected and timed-out dispatches of `jobs`, by job then epoch (oldest first).
pub async fn failed_attempts(db: impl PgExecutor<'_>, jobs: &[i64]) -> DbResult<Vec<FailedAttempt>> {
    Ok(sqlx::query_as(
        "SELECT job_id, cluster_id, epoch, outcome, reason FROM dispatches
         WHERE job_id = ANY($1) AND outcome IN ('rejected', 'timed_out') ORDER BY job_id, epoch",
    )
    .bind(jobs)
    .fetch_all(db)
    .await?)
}

/// A dispatch the agent has not answered, of a job still `dispatched` under that epoch.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct OpenDispatch {
    pub job_id: i64,
    pub epoch: i64,
    pub cluster_id: String,
    pub dispatched_at: DateTime<Utc>,
    /// The answer deadline the Dispatch carried; `None` for dispatches recorded before it
    /// existed (their deadline is `dispatched_at` plus the dispatch timeout).
    pub answer_by: Option<DateTime<Utc>>,
    pub reservation: Option<Value>,
}

/// Every `pending` dispatch (reservations are derived from these, so they survive a leader
/// fail-over), with whether its job still waits on it.
pub async fn open_dispatches(db: impl PgExecutor<'_>) -> DbResult<Vec<OpenDispatch>> {
    Ok(sqlx::query_as(
        "SELECT d.job_id, d.epoch, d.cluster_id, d.dispatched_at, d.answer_by, d.reservation
         FROM dispatches d JOIN jobs j ON j.id = d.job_id AND j.epoch = d.epoch
         WHERE d.outcome = 'pending' AND j.state = 'dispatched' ORDER BY d.job_id",
    )
    .fetch_all(db)
    .await?)
}

/// [`open_dispatches`] of the jobs `ids` only (at most one each: the current epoch's).
pub async fn open_dispatches_of(db: impl PgExecutor<'_>, ids: &[i64]) -> DbResult<Vec<OpenDispatch>> {
    Ok(sqlx::query_as(
        "SELECT d.job_id, d.epoch, d.cluster_id, d.dispatched_at, d.answer_by, d.reservation
         FROM UNNEST($1::bigint[]) AS u(id)
         CROSS JOIN LATERAL (SELECT id, epoch FROM jobs j WHERE j.id = u.id AND j.state = 'dispatched' LIMIT 1) j
         CROSS JOIN LATERAL (
           SELECT * FROM dispatches d WHERE d.job_id = j.id AND d.epoch = j.epoch AND d.outcome = 'pending' LIMIT 1
         ) d
         ORDER BY d.job_id",
    )
    .bind(ids)
    .fetch_all(db)
    .await?)
}

/// A dispatch whose answer deadline has passed on the api's clock while its job still waits
/// for the agent's placement (answered `Pending` or not at all).
#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct OverdueDispatch {
    pub job_id: i64,
    pub epoch: i64,
    pub cluster_id: String,
    pub deadline: DateTime<Utc>,
}

/// Dispatches past their answer deadline at `now`, of jobs still `dispatched` under that
/// epoch. A dispatch recorded before deadlines were stored has `dispatched_at + timeout` and
/// only while unanswered (an agent of that time that acknowledged it rejects it itself).
pub async fn overdue_dispatches(
    db: impl PgExecutor<'_>,
    now: DateTime<Utc>,
    timeout: chrono::Duration,
) -> DbResult<Vec<OverdueDispatch>> {
    Ok(sqlx::query_as(
        "SELECT d.job_id, d.epoch, d.cluster_id, COALESCE(d.answer_by, d.dispatched_at + $2) AS deadline
         FROM dispatches d JOIN jobs j ON j.id = d.job_id AND j.epoch = d.epoch
         WHERE j.state = 'dispatched' AND d.outcome IN ('pending', 'acknowledged')
           AND ((d.answer_by IS NOT NULL AND d.answer_by <= $1)
                OR (d.answer_by IS NULL AND d.outcome = 'pending' AND d.dispatched_at <= $1 - $2))
         ORDER BY d.job_id",
    )
    .bind(now)
    .bind(timeout)
    .fetch_all(db)
    .await?)
}

/// Capacity held in a cluster for a waiting job (migration 0009, `capacity_holds`).
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct HoldRow {
    pub job_id: i64,
    pub cluster_id: String,
    pub reservation: Value,
    pub expires_at: DateTime<Utc>,
}

/// Holds reclaim made for a job: the capacity it freed in `cluster_id` stays the job's until
/// `expires_at` (a second eviction for the same job and cluster extends it).
pub async fn record_hold(db: impl PgExecutor<'_>, hold: &HoldRow) -> DbResult<()> {
    sqlx::query(
        "INSERT INTO capacity_holds (job_id, cluster_id, reservation, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (job_id, cluster_id) DO UPDATE
           SET reservation = EXCLUDED.reservation, expires_at = GREATEST(capacity_holds.expires_at, EXCLUDED.expires_at)",
    )
    .bind(hold.job_id)
    .bind(&hold.cluster_id)
    .bind(&hold.reservation)
    .bind(hold.expires_at)
    .execute(db)
    .await?;
    Ok(())
}

/// The holds in force: unexpired, of jobs still waiting for a cluster. Expired ones are
/// deleted first (a hold outlives its use by minutes at most).
pub async fn active_holds(conn: &mut PgConnection) -> DbResult<Vec<HoldRow>> {
    sqlx::query("DELETE FROM capacity_holds WHERE expires_at < now()").execute(&mut *conn).await?;
    Ok(sqlx::query_as(
        "SELECT h.job_id, h.cluster_id, h.reservation, h.expires_at
         FROM capacity_holds h JOIN jobs j ON j.id = h.job_id
         WHERE j.state IN ('admitted', 'rejected') ORDER BY h.job_id, h.cluster_id",
    )
    .fetch_all(&mut *conn)
    .await?)
}

/// One dispatch a round decided.
#[derive(Clone, Debug, PartialEq)]
pub struct NewDispatch {
    pub job_id: i64,
    pub cluster: String,
    /// Must be the job's epoch + 1 (the fencing token the command carries).
    pub epoch: i64,
    pub reservation: Value,
    pub cause: String,
    /// The answer deadline the Dispatch carries (see [`OpenDispatch::answer_by`]).
    pub answer_by: DateTime<Utc>,
}

/// Records a batch of dispatches in the caller's transaction, set-based so that a round of
/// thousands costs a few statements: each job row is locked (in id order) and kept only if it
/// still waits (`admitted`/`rejected`) under `epoch - 1` — a job cancelled or dispatched by
/// another leader meanwhile is left alone; then older unanswered dispatches are superseded,
/// the dispatch rows (with reservation) and the `dispatched` events are inserted, and the
/// jobs move to `dispatched` with their new epoch and cluster. The same rules as
/// [`insert_dispatch`] + [`transition_job`] (the state trigger checks each event). Returns
/// the jobs recorded.
pub async fn record_dispatches(conn: &mut PgConnection, batch: &[NewDispatch], actor: &str) -> DbResult<Vec<i64>> {
    if batch.is_empty() {
        return Ok(vec![]);
    }
    let ids: Vec<i64> = batch.iter().map(|d| d.job_id).collect();
    let epochs: Vec<i64> = batch.iter().map(|d| d.epoch).collect();
    let locked: Vec<(i64, String)> = sqlx::query_as(
        "SELECT j.id, j.state FROM jobs j JOIN UNNEST($1::bigint[], $2::bigint[]) AS u(id, epoch) ON u.id = j.id
         WHERE j.state IN ('admitted', 'rejected') AND j.epoch + 1 = u.epoch
         ORDER BY j.id FOR UPDATE OF j",
    )
    .bind(&ids)
    .bind(&epochs)
    .fetch_all(&mut *conn)
    .await?;
    let from: std::collections::HashMap<i64, String> = locked.into_iter().collect();
    let keep: Vec<&NewDispatch> = batch.iter().filter(|d| from.contains_key(&d.job_id)).collect();
    if keep.is_empty() {
        return Ok(vec![]);
    }
    let ids: Vec<i64> = keep.iter().map(|d| d.job_id).collect();
    let epochs: Vec<i64> = keep.iter().map(|d| d.epoch).collect();
    let clusters: Vec<&str> = keep.iter().map(|d| d.cluster.as_str()).collect();
    let reservations: Vec<String> = keep.iter().map(|d| d.reservation.to_string()).collect();
    let states: Vec<&str> = keep.iter().map(|d| from[&d.job_id].as_str()).collect();
    let causes: Vec<&str> = keep.iter().map(|d| d.cause.as_str()).collect();
    let answer_by: Vec<DateTime<Utc>> = keep.iter().map(|d| d.answer_by).collect();
    sqlx::query("UPDATE dispatches SET outcome = 'superseded' WHERE job_id = ANY($1) AND outcome = 'pending'")
        .bind(&ids)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO dispatches (job_id, epoch, cluster_id, reservation, answer_by)
         SELECT id, epoch, cluster, res::jsonb, by
         FROM UNNEST($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::timestamptz[])
           AS u(id, epoch, cluster, res, by)",
    )
    .bind(&ids)
    .bind(&epochs)
    .bind(&clusters)
    .bind(&reservations)
    .bind(&answer_by)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO job_events (job_id, from_state, to_state, cause, actor, cluster_id, epoch)
         SELECT id, st, 'dispatched', cause, $6, cluster, epoch
         FROM UNNEST($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[]) AS u(id, st, cause, cluster, epoch)",
    )
    .bind(&ids)
    .bind(&states)
    .bind(&causes)
    .bind(&clusters)
    .bind(&epochs)
    .bind(actor)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE jobs j SET state = 'dispatched', epoch = u.epoch, cluster_id = u.cluster, updated_at = now(),
           why_pending = NULL
         FROM UNNEST($1::bigint[], $2::bigint[], $3::text[]) AS u(id, epoch, cluster) WHERE j.id = u.id",
    )
    .bind(&ids)
    .bind(&epochs)
    .bind(&clusters)
    .execute(&mut *conn)
    .await?;
    Ok(ids)
}

/// Marks the dispatch `job_id@epoch` `timed_out` and moves the job back to `rejected`, so the
/// next plan re-dispatches it elsewhere. A Cancel for the old epoch is then owed (see
/// [`owed_cancels`]). Returns false, writing nothing, when the agent placed the job (or
/// rejected it) meanwhile.
pub async fn time_out(conn: &mut PgConnection, job_id: i64, epoch: i64, reason: &str, by: Cause<'_>) -> DbResult<bool> {
    let row: Option<(String, i64)> = sqlx::query_as("SELECT state, epoch FROM jobs WHERE id = $1 FOR UPDATE")
        .bind(job_id)
        .fetch_optional(&mut *conn)
        .await?;
    if row.as_ref().is_none_or(|(s, e)| s != "dispatched" || *e != epoch) {
        return Ok(false);
    }
    let done = sqlx::query(
        "UPDATE dispatches SET outcome = 'timed_out', reason = $3
         WHERE job_id = $1 AND epoch = $2 AND outcome IN ('pending', 'acknowledged')",
    )
    .bind(job_id)
    .bind(epoch)
    .bind(reason)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() != 1 {
        return Ok(false);
    }
    transition_job(&mut *conn, job_id, JobState::Rejected, by).await?;
    Ok(true)
}

/// A command that must reach a cluster and has not been confirmed sent.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct OwedCommand {
    pub job_id: i64,
    pub epoch: i64,
    pub cluster_id: String,
    /// The job as stored (Dispatch only; other commands carry the id alone).
    pub spec: Value,
    pub priority: i32,
    pub submitted_at: DateTime<Utc>,
    /// Evict only.
    pub grace_s: Option<i32>,
    /// Evict only: the job the eviction makes room for, and until when its hold lasts.
    pub hold_for: Option<i64>,
    pub hold_until: Option<DateTime<Utc>>,
    /// Dispatch only: its answer deadline (`None` for dispatches recorded before it existed).
    pub answer_by: Option<DateTime<Utc>>,
}

/// Dispatches committed but not confirmed appended to the command stream.
pub async fn unsent_dispatches(db: impl PgExecutor<'_>) -> DbResult<Vec<OwedCommand>> {
    Ok(sqlx::query_as(
        "SELECT d.job_id, d.epoch, d.cluster_id, j.spec, j.priority, j.submitted_at, NULL::int AS grace_s,
                NULL::bigint AS hold_for, NULL::timestamptz AS hold_until, d.answer_by
         FROM dispatches d JOIN jobs j ON j.id = d.job_id AND j.epoch = d.epoch
         WHERE d.outcome = 'pending' AND d.sent_at IS NULL AND j.state = 'dispatched' ORDER BY d.job_id",
    )
    .fetch_all(db)
    .await?)
}

/// Cancels owed to agents: every timed-out dispatch (fences a late placement), and the live
/// dispatch of every cancelled job (so the agent stops it, also after an api restart). The
/// cancellation marks that dispatch `cancel_owed` (a trigger, migration 0013), so the
/// statement reads only what is owed through a partial index, not every dispatch in history.
pub async fn owed_cancels(db: impl PgExecutor<'_>) -> DbResult<Vec<OwedCommand>> {
    Ok(sqlx::query_as(
        "SELECT d.job_id, d.epoch, d.cluster_id, j.spec, j.priority, j.submitted_at, NULL::int AS grace_s,
                NULL::bigint AS hold_for, NULL::timestamptz AS hold_until, NULL::timestamptz AS answer_by
         FROM dispatches d JOIN jobs j ON j.id = d.job_id
         WHERE d.cancel_sent_at IS NULL AND (d.outcome = 'timed_out' OR d.cancel_owed)
           AND (d.outcome = 'timed_out'
                OR (j.state = 'cancelled' AND d.epoch = j.epoch AND d.outcome IN ('pending', 'acknowledged')))
         ORDER BY d.job_id, d.epoch",
    )
    .fetch_all(db)
    .await?)
}

/// Evictions decided and not confirmed sent, of jobs still preempting under that epoch.
pub async fn owed_evicts(db: impl PgExecutor<'_>) -> DbResult<Vec<OwedCommand>> {
    Ok(sqlx::query_as(
        "SELECT d.job_id, d.epoch, d.cluster_id, j.spec, j.priority, j.submitted_at, d.evict_grace_s AS grace_s,
                d.evict_for_job AS hold_for, h.expires_at AS hold_until, NULL::timestamptz AS answer_by
         FROM dispatches d JOIN jobs j ON j.id = d.job_id AND j.epoch = d.epoch
         LEFT JOIN capacity_holds h ON h.job_id = d.evict_for_job AND h.cluster_id = d.cluster_id
         WHERE d.evict_grace_s IS NOT NULL AND d.evict_sent_at IS NULL AND j.state = 'preempting'
         ORDER BY d.job_id",
    )
    .fetch_all(db)
    .await?)
}

/// Redis lost its data (it restarted empty): commands it held and agents may not have read
/// are owed again — unanswered dispatches, evictions in progress, and the cancels of the last
/// hour (timed-out dispatches, cancelled jobs' live ones). They go out with their first
/// message ids, so an agent that read one before drops the copy. Returns how many.
pub async fn owe_again_after_redis_loss(conn: &mut PgConnection) -> DbResult<u64> {
    let dispatches = sqlx::query(
        "UPDATE dispatches d SET sent_at = NULL FROM jobs j
         WHERE j.id = d.job_id AND j.epoch = d.epoch AND j.state = 'dispatched'
           AND d.outcome = 'pending' AND d.sent_at IS NOT NULL",
    )
    .execute(&mut *conn)
    .await?;
    let evicts = sqlx::query(
        "UPDATE dispatches d SET evict_sent_at = NULL FROM jobs j
         WHERE j.id = d.job_id AND j.epoch = d.epoch AND j.state = 'preempting'
           AND d.evict_grace_s IS NOT NULL AND d.evict_sent_at IS NOT NULL",
    )
    .execute(&mut *conn)
    .await?;
    let cancels =
        sqlx::query("UPDATE dispatches SET cancel_sent_at = NULL WHERE cancel_sent_at > now() - interval '1 hour'")
            .execute(&mut *conn)
            .await?;
    Ok(dispatches.rows_affected() + evicts.rows_affected() + cancels.rows_affected())
}

/// Which command of a dispatch reached the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    Dispatch,
    Cancel,
    Evict,
}

/// Records that commands of these `(job, epoch)`s were appended to their clusters' streams.
pub async fn mark_sent(db: impl PgExecutor<'_>, sent: &[(i64, i64)], what: Sent) -> DbResult<()> {
    if sent.is_empty() {
        return Ok(());
    }
    let column = match what {
        Sent::Dispatch => "sent_at",
        Sent::Cancel => "cancel_sent_at",
        Sent::Evict => "evict_sent_at",
    };
    let (jobs, epochs): (Vec<i64>, Vec<i64>) = sent.iter().copied().unzip();
    sqlx::query(&format!(
        "UPDATE dispatches d SET {column} = COALESCE(d.{column}, now())
         FROM UNNEST($1::bigint[], $2::bigint[]) AS u(job, epoch) WHERE d.job_id = u.job AND d.epoch = u.epoch"
    ))
    .bind(&jobs)
    .bind(&epochs)
    .execute(db)
    .await?;
    Ok(())
}

/// A job running in a cluster, as reclaim needs it.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct RunningRow {
    pub id: i64,
    /// The project's slug and the queue's name.
    pub project: String,
    pub queue: String,
    pub cluster_id: String,
    pub epoch: i64,
    pub priority: i32,
    pub borrowed: bool,
    pub preemptible: bool,
    pub started_at: DateTime<Utc>,
    pub min_runtime_s: Option<i64>,
    pub reservation: Option<Value>,
}

/// Jobs `scheduled` or `running` under an acknowledged or pending dispatch of their epoch.
/// Started = the latest `running` event, else the dispatch time.
pub async fn running_jobs(db: impl PgExecutor<'_>) -> DbResult<Vec<RunningRow>> {
    Ok(sqlx::query_as(
        "SELECT j.id, j.spec->>'project' AS project, j.spec->>'queue' AS queue, d.cluster_id, j.epoch, j.priority,
           j.borrowed, j.preemptible,
           COALESCE((SELECT max(e.at) FROM job_events e
                     WHERE e.job_id = j.id AND e.task_id IS NULL AND e.to_state = 'running'), d.dispatched_at)
             AS started_at,
           (j.spec->>'min_runtime_s')::bigint AS min_runtime_s, d.reservation
         FROM jobs j JOIN dispatches d ON d.job_id = j.id AND d.epoch = j.epoch
         WHERE j.state IN ('scheduled', 'running') ORDER BY j.id",
    )
    .fetch_all(db)
    .await?)
}

/// A running elastic job above its minimum, as the plan of room from shrinking needs it.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct ElasticRow {
    pub id: i64,
    /// The project's slug and the queue's name.
    pub project: String,
    pub queue: String,
    pub cluster_id: String,
    pub priority: i32,
    pub borrowed: bool,
    pub preemptible: bool,
    pub started_at: DateTime<Utc>,
    pub min_runtime_s: Option<i64>,
    /// Its elastic minimum, and the node of each replica of its epoch placed or running now.
    pub elastic_min: i64,
    pub live_nodes: Vec<String>,
    /// The task's resources (an elastic job has one task), as the spec stores them.
    pub resources: Value,
    pub reservation: Option<Value>,
}

/// Running elastic jobs with more replicas placed or running than their minimum.
pub async fn elastic_above_minimum(db: impl PgExecutor<'_>) -> DbResult<Vec<ElasticRow>> {
    Ok(sqlx::query_as(
        "SELECT * FROM (
           SELECT j.id, j.spec->>'project' AS project, j.spec->>'queue' AS queue, d.cluster_id, j.priority,
             j.borrowed, j.preemptible,
             COALESCE((SELECT max(e.at) FROM job_events e
                       WHERE e.job_id = j.id AND e.task_id IS NULL AND e.to_state = 'running'), d.dispatched_at)
               AS started_at,
             (j.spec->>'min_runtime_s')::bigint AS min_runtime_s,
             (j.spec->'elastic'->>'min')::bigint AS elastic_min,
             ARRAY(SELECT COALESCE(r.node, '') FROM replicas r
                   WHERE r.job_id = j.id AND r.epoch = j.epoch AND r.state IN ('placed', 'running')) AS live_nodes,
             j.spec->'tasks'->0->'resources' AS resources, d.reservation
           FROM jobs j JOIN dispatches d ON d.job_id = j.id AND d.epoch = j.epoch
           WHERE j.state = 'running' AND jsonb_typeof(j.spec->'elastic') = 'object'
         ) e
         WHERE cardinality(e.live_nodes) > e.elastic_min AND e.resources IS NOT NULL ORDER BY e.id",
    )
    .fetch_all(db)
    .await?)
}

/// Jobs `preempting` because reclaim evicted them (their capacity is about to be freed), in
/// the shape of [`running_jobs`].
pub async fn evicting_jobs(db: impl PgExecutor<'_>) -> DbResult<Vec<RunningRow>> {
    Ok(sqlx::query_as(
        "SELECT j.id, j.spec->>'project' AS project, j.spec->>'queue' AS queue, d.cluster_id, j.epoch, j.priority,
           j.borrowed, j.preemptible, d.dispatched_at AS started_at,
           (j.spec->>'min_runtime_s')::bigint AS min_runtime_s, d.reservation
         FROM jobs j JOIN dispatches d ON d.job_id = j.id AND d.epoch = j.epoch
         WHERE j.state = 'preempting' AND d.evict_grace_s IS NOT NULL ORDER BY j.id",
    )
    .fetch_all(db)
    .await?)
}

/// Decides to evict `job_id` running under `epoch`: the `preempting` event and the owed Evict.
/// Returns false, writing nothing, when the job is no longer running under that epoch (so a
/// second round never evicts it twice).
pub async fn record_evict(
    conn: &mut PgConnection,
    job_id: i64,
    epoch: i64,
    grace_s: u32,
    for_job: Option<i64>,
    by: Cause<'_>,
) -> DbResult<bool> {
    let row: Option<(String, i64)> = sqlx::query_as("SELECT state, epoch FROM jobs WHERE id = $1 FOR UPDATE")
        .bind(job_id)
        .fetch_optional(&mut *conn)
        .await?;
    if row.as_ref().is_none_or(|(s, e)| !(s == "running" || s == "scheduled") || *e != epoch) {
        return Ok(false);
    }
    let grace = i32::try_from(grace_s).unwrap_or(i32::MAX);
    sqlx::query("UPDATE dispatches SET evict_grace_s = $3, evict_for_job = $4 WHERE job_id = $1 AND epoch = $2")
        .bind(job_id)
        .bind(epoch)
        .bind(grace)
        .bind(for_job)
        .execute(&mut *conn)
        .await?;
    transition_job(&mut *conn, job_id, JobState::Preempting, by).await?;
    Ok(true)
}

/// Stores the whyPending of job shapes (`dispatcher::why`): each `(shape, value)` inserted or
/// updated, in statements whose texts add up to a bounded size. Returns each shape's row id.
pub async fn record_why_shapes(db: &PgPool, shapes: &[(String, Value)]) -> DbResult<Vec<(String, i64)>> {
    let texts: Vec<String> = shapes.iter().map(|(_, v)| v.to_string()).collect();
    let sizes: Vec<usize> = shapes.iter().zip(&texts).map(|((k, _), t)| k.len() + t.len()).collect();
    let mut out = Vec::with_capacity(shapes.len());
    for range in by_size(&sizes, WHY_PENDING_STATEMENT_BYTES) {
        let keys: Vec<&str> = shapes[range.clone()].iter().map(|(k, _)| k.as_str()).collect();
        let values: Vec<&str> = texts[range].iter().map(String::as_str).collect();
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "INSERT INTO why_pending_shapes (shape, value)
             SELECT k, v::jsonb FROM UNNEST($1::text[], $2::text[]) AS u(k, v)
             ON CONFLICT (shape) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
             RETURNING shape, id",
        )
        .bind(&keys)
        .bind(&values)
        .fetch_all(db)
        .await?;
        out.extend(rows);
    }
    Ok(out)
}

/// The `why_pending` value that refers to shape `id`'s row.
pub fn reference(id: i64) -> Value {
    json!({ "shape": id })
}

/// The shape a stored `why_pending` refers to, if it is a reference.
pub fn referenced_shape(stored: &Value) -> Option<i64> {
    stored.get("shape")?.as_i64()
}

/// Points waiting jobs' whyPending at their shape's row: `(job, shape id)`.
pub async fn refer_why_pending(db: &PgPool, jobs: &[(i64, i64)]) -> DbResult<()> {
    for chunk in jobs.chunks(50_000) {
        let (ids, shapes): (Vec<i64>, Vec<i64>) = chunk.iter().copied().unzip();
        sqlx::query(
            "UPDATE jobs j SET why_pending = jsonb_build_object('shape', u.s)
             FROM UNNEST($1::bigint[], $2::bigint[]) AS u(id, s)
             WHERE j.id = u.id AND j.state IN ('admitted', 'rejected')",
        )
        .bind(&ids)
        .bind(&shapes)
        .execute(db)
        .await?;
    }
    Ok(())
}

/// The stored whyPending of shapes, by id (a pruned one is missing).
pub async fn why_shapes(db: impl PgExecutor<'_>, ids: &[i64]) -> DbResult<Vec<(i64, Value)>> {
    Ok(sqlx::query_as("SELECT id, value FROM why_pending_shapes WHERE id = ANY($1)").bind(ids).fetch_all(db).await?)
}

/// A job's whyPending as the API shows it: its own value, or its shape's.
pub async fn why_pending_of(db: &PgPool, job_id: i64) -> DbResult<Option<Value>> {
    let (stored,): (Option<Value>,) = sqlx::query_as("SELECT why_pending FROM jobs WHERE id = $1")
        .bind(job_id)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("job"))?;
    match stored.as_ref().and_then(referenced_shape) {
        Some(shape) => Ok(why_shapes(db, &[shape]).await?.pop().map(|(_, v)| v)),
        None => Ok(stored),
    }
}

/// Deletes shape rows no waiting job refers to and not written for ten minutes. Returns how
/// many went.
pub async fn prune_why_shapes(db: &PgPool) -> DbResult<u64> {
    let done = sqlx::query(
        "DELETE FROM why_pending_shapes s WHERE s.updated_at < now() - interval '10 minutes'
           AND to_jsonb(s.id) NOT IN (SELECT DISTINCT j.why_pending -> 'shape' FROM jobs j
                                      WHERE j.state IN ('admitted', 'rejected') AND j.why_pending ? 'shape')",
    )
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// The most whyPending text one statement carries. A round's whyPending for 100,000 waiting
/// jobs with a reason per cluster of 100 was over a gigabyte when every job's text was sent:
/// as one statement, PostgreSQL dropped the connection ("invalid message length").
const WHY_PENDING_STATEMENT_BYTES: usize = 4 << 20;

/// Ranges of consecutive items whose `sizes` add up to at most `max_bytes` (a larger item
/// alone in its range).
fn by_size(sizes: &[usize], max_bytes: usize) -> Vec<std::ops::Range<usize>> {
    let mut chunks = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, size) in sizes.iter().enumerate() {
        if i > start && bytes + size > max_bytes {
            chunks.push(start..i);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < sizes.len() {
        chunks.push(start..sizes.len());
    }
    chunks
}

#[cfg(test)]
mod why_pending_tests {
    use super::by_size;

    #[test]
    fn why_pending_of_a_huge_backlog_is_written_in_bounded_statements() {
        let sizes = vec![30; 10];
        assert_eq!(by_size(&sizes, 100), [0..3, 3..6, 6..9, 9..10], "every value once, in order");
        assert_eq!(by_size(&[500, 1], 100), [0..1, 1..2], "a larger value alone");
        assert!(by_size(&[], 100).is_empty());
    }
}

/// A dispatch as the API shows it.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct DispatchRecord {
    pub id: i64,
    pub job_id: i64,
    pub epoch: i64,
    pub cluster_id: String,
    pub dispatched_at: DateTime<Utc>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub outcome: String,
    pub reason: Option<String>,
    pub sent_at: Option<DateTime<Utc>>,
}

/// The dispatch history of a job, oldest first.
pub async fn dispatch_history(db: impl PgExecutor<'_>, job_id: i64) -> DbResult<Vec<DispatchRecord>> {
    Ok(sqlx::query_as(
        "SELECT id, job_id, epoch, cluster_id, dispatched_at, acknowledged_at, outcome, reason, sent_at
         FROM dispatches WHERE job_id = $1 ORDER BY epoch",
    )
    .bind(job_id)
    .fetch_all(db)
    .await?)
}

/// Changes a live job's priority (value and class, and the stored spec the next Dispatch
/// carries) with an event row recording the change; the state stays as it is. A finished
/// job is a CONFLICT. Returns the previous (value, class).
pub async fn set_priority(
    conn: &mut PgConnection,
    job_id: i64,
    priority: i32,
    class: &str,
    by: Cause<'_>,
) -> DbResult<(i32, String)> {
    let (state, old, old_class): (String, i32, String) =
        sqlx::query_as("SELECT state, priority, priority_class FROM jobs WHERE id = $1 FOR UPDATE")
            .bind(job_id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or(DbError::NotFound("job"))?;
    let st: JobState = state.parse()?;
    if st.is_terminal() {
        return Err(DbError::conflict(format!("job is {st}; its priority can no longer change")));
    }
    sqlx::query(
        "UPDATE jobs SET priority = $2, priority_class = $3, updated_at = now(),
           spec = jsonb_set(spec, '{priority}', to_jsonb($2::int))
         WHERE id = $1",
    )
    .bind(job_id)
    .bind(priority)
    .bind(class)
    .execute(&mut *conn)
    .await?;
    note_job_event(conn, job_id, &state, by, &EventOrigin::default()).await?;
    Ok((old, old_class))
}

/// The reservation column: GPU takes per model, CPU and memory. Written by hand rather than
/// derived so the pure allocator types stay free of serde (STYLE "avoid" 1).
pub fn reservation_json(gpus: &[GpuTake], cpu_milli: u64, memory_mib: u64) -> Value {
    json!({
        "gpus": gpus.iter().map(|t| json!({
            "model": t.model, "per_node": t.per_node, "shares": t.shares, "mig": t.mig,
        })).collect::<Vec<_>>(),
        "cpu_milli": cpu_milli,
        "memory_mib": memory_mib,
    })
}

/// Reads [`reservation_json`] back; `None` when the value is not one (nothing is deducted).
pub fn reservation_from_json(v: &Value) -> Option<(Vec<GpuTake>, u64, u64)> {
    fn u32s(v: &Value) -> Option<Vec<u32>> {
        v.as_array()?.iter().map(|x| x.as_u64().and_then(|n| u32::try_from(n).ok())).collect()
    }
    let gpus = v
        .get("gpus")?
        .as_array()?
        .iter()
        .map(|t| {
            Some(GpuTake {
                model: t.get("model")?.as_str()?.to_owned(),
                per_node: u32s(t.get("per_node")?)?,
                shares: u32s(t.get("shares")?)?,
                // Written since MIG; a reservation from before has none.
                mig: match t.get("mig") {
                    None => Vec::new(),
                    Some(m) => m.as_array()?.iter().map(|p| p.as_str().map(str::to_owned)).collect::<Option<_>>()?,
                },
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some((gpus, v.get("cpu_milli")?.as_u64()?, v.get("memory_mib")?.as_u64()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservation_round_trips_and_rejects_garbage() {
        let takes = vec![
            GpuTake { model: "A100".into(), per_node: vec![8, 8], shares: vec![], mig: vec![] },
            GpuTake { model: "T4".into(), per_node: vec![], shares: vec![250, 500], mig: vec![] },
            GpuTake {
                model: "H100".into(),
                per_node: vec![],
                shares: vec![],
                mig: vec!["1g.10gb".into(), "3g.40gb".into()],
            },
        ];
        let v = reservation_json(&takes, 3000, 4096);
        assert_eq!(reservation_from_json(&v), Some((takes, 3000, 4096)));
        assert_eq!(reservation_from_json(&json!({ "gpus": [{ "model": "A100" }] })), None);
        assert_eq!(reservation_from_json(&json!({ "gpus": [], "cpu_milli": -1, "memory_mib": 0 })), None);
    }
}
