//! What the in-process jobs window (`crate::job_cache`) reads: each project's newest jobs with
//! their tasks, and the jobs changed by the transactions that committed since the last read.
//!
//! The change source is `job_events`: every change of a job's listed fields or of its tasks is
//! made in a transaction that also appends an event of that job (state changes are enforced by
//! the `jobs_state_event` and `*_state_event` triggers; priority, dispatch and borrowing go
//! with an event or a transition). Each event row carries its transaction's id (`xid`,
//! migration 0007). A read takes a snapshot; the next read takes the events of transactions
//! visible in its snapshot and not in the previous one, so a change is seen by the first read
//! whose snapshot shows it, however long a transaction stayed open, and reloading a job's
//! current row makes seeing a change twice harmless.

use sqlx::{PgConnection, PgExecutor};

use super::jobs::{job_head_at, task_at, JOB_HEAD_COLUMNS};
use super::{DbError, DbResult, JobHead, Task};

/// Where a reader of changes stands: the snapshot of its last read (`pg_snapshot` as text) and
/// that snapshot's oldest running transaction (`xid8` as text), below which every
/// transaction had ended then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeCursor {
    xmin: String,
    snapshot: String,
}

/// A job with its tasks in insertion order.
pub type JobWithTasks = (JobHead, Vec<Task>);

/// Columns after [`JOB_HEAD_COLUMNS`] (14 of them) in both statements.
const TASK_COLUMNS: &str = "t.id, t.name, t.replicas, t.state";

/// A read-only transaction of one snapshot, and that snapshot's cursor: what is read in it and
/// the changes read from the cursor on never miss or skip a change between them.
async fn snapshot_with_cursor(
    conn: &mut PgConnection,
) -> DbResult<(sqlx::Transaction<'_, sqlx::Postgres>, ChangeCursor)> {
    use sqlx::Connection;
    let mut tx = conn.begin().await?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
    let (xmin, snapshot): (String, String) =
        sqlx::query_as("SELECT pg_snapshot_xmin(pg_current_snapshot())::text, pg_current_snapshot()::text")
            .fetch_one(&mut *tx)
            .await?;
    Ok((tx, ChangeCursor { xmin, snapshot }))
}

/// The newest `per_project + 1` jobs of every project, one snapshot, and the cursor of that
/// snapshot. Jobs come newest first within each project.
pub async fn newest_jobs_per_project(
    conn: &mut PgConnection,
    per_project: u32,
) -> DbResult<(ChangeCursor, Vec<JobWithTasks>)> {
    let (mut tx, cursor) = snapshot_with_cursor(conn).await?;
    let rows = sqlx::query(&format!(
        "SELECT j.*, {TASK_COLUMNS} FROM projects p CROSS JOIN LATERAL (
           SELECT {JOB_HEAD_COLUMNS} FROM jobs j WHERE j.project_id = p.id ORDER BY j.id DESC LIMIT $1
         ) j LEFT JOIN tasks t ON t.job_id = j.id
         ORDER BY j.project_id, j.id DESC, t.id"
    ))
    .bind(i64::from(per_project) + 1)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok((cursor, jobs_of(&rows)?))
}

/// The jobs (current rows, with tasks) named by events of transactions that committed after
/// `cursor`'s snapshot and before this statement's, and the cursor of this statement.
pub async fn jobs_changed_since(
    db: impl PgExecutor<'_>,
    cursor: &ChangeCursor,
) -> DbResult<(ChangeCursor, Vec<JobWithTasks>)> {
    use sqlx::Row;
    let rows = sqlx::query(&format!(
        "WITH s AS (SELECT pg_current_snapshot() AS snap), changed AS (
           SELECT DISTINCT e.job_id FROM job_events e, s
           WHERE e.xid >= $1::xid8 AND pg_visible_in_snapshot(e.xid, s.snap)
             AND NOT pg_visible_in_snapshot(e.xid, $2::pg_snapshot)
         )
         SELECT j.*, {TASK_COLUMNS}, pg_snapshot_xmin(s.snap)::text, s.snap::text
         FROM s LEFT JOIN (
           changed c CROSS JOIN LATERAL (SELECT {JOB_HEAD_COLUMNS} FROM jobs j WHERE j.id = c.job_id LIMIT 1) j
           LEFT JOIN LATERAL (SELECT {TASK_COLUMNS} FROM tasks t WHERE t.job_id = j.id OFFSET 0) t ON true
         ) ON true
         ORDER BY j.id, t.id"
    ))
    // The plan is generic (`db::connect`): the LIMIT and OFFSET keep the subqueries from being
    // flattened, so each changed job is two index probes, never a hash join over all jobs
    // and tasks.
    .bind(&cursor.xmin)
    .bind(&cursor.snapshot)
    .fetch_all(db)
    .await?;
    let first = rows.first().ok_or(DbError::Internal(sqlx::Error::RowNotFound))?;
    let next = ChangeCursor { xmin: first.try_get(18)?, snapshot: first.try_get(19)? };
    // Without changes the one row has only the snapshot.
    if first.try_get::<Option<i64>, _>(0)?.is_none() {
        return Ok((next, Vec::new()));
    }
    Ok((next, jobs_of(&rows)?))
}

/// Rows of [`JOB_HEAD_COLUMNS`] then [`TASK_COLUMNS`], a job's rows consecutive.
fn jobs_of(rows: &[sqlx::postgres::PgRow]) -> DbResult<Vec<JobWithTasks>> {
    use sqlx::Row;
    let mut jobs: Vec<JobWithTasks> = Vec::new();
    for row in rows {
        let id: i64 = row.try_get(0)?;
        if jobs.last().is_none_or(|(j, _)| j.id != id) {
            jobs.push((job_head_at(row)?, Vec::new()));
        }
        if let (Some((_, tasks)), Some(task)) = (jobs.last_mut(), task_at(row, id, 14)?) {
            tasks.push(task);
        }
    }
    Ok(jobs)
}

/// Every waiting job's head (`admitted` or `rejected`: it needs a cluster), by id, and the
/// cursor of the same snapshot: the allocator's starting point, which it then keeps current
/// with [`job_states_changed_since`] instead of reading the whole backlog each round.
pub async fn waiting_heads_at(conn: &mut PgConnection) -> DbResult<(ChangeCursor, Vec<super::dispatch::WaitingHead>)> {
    let (mut tx, cursor) = snapshot_with_cursor(conn).await?;
    let heads = super::dispatch::waiting_heads(&mut *tx).await?;
    tx.commit().await?;
    Ok((cursor, heads))
}

/// Every open dispatch ([`super::dispatch::open_dispatches`]) and the cursor of the same
/// snapshot, for a reader that then follows the jobs changed since.
pub async fn open_dispatches_at(
    conn: &mut PgConnection,
) -> DbResult<(ChangeCursor, Vec<super::dispatch::OpenDispatch>)> {
    let (mut tx, cursor) = snapshot_with_cursor(conn).await?;
    let open = super::dispatch::open_dispatches(&mut *tx).await?;
    tx.commit().await?;
    Ok((cursor, open))
}

/// A job's state and `updated_at` as of now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobStateNow {
    pub id: i64,
    pub state: String,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// The jobs named by events of transactions that committed after `cursor`'s snapshot and
/// before this statement's (their current state), and the cursor of this statement: what
/// changed since the last read, however long a transaction stayed open (see the module
/// comment).
pub async fn job_states_changed_since(
    db: impl PgExecutor<'_>,
    cursor: &ChangeCursor,
) -> DbResult<(ChangeCursor, Vec<JobStateNow>)> {
    use sqlx::Row;
    let rows = sqlx::query(
        "WITH s AS (SELECT pg_current_snapshot() AS snap), changed AS (
           SELECT DISTINCT e.job_id FROM job_events e, s
           WHERE e.xid >= $1::xid8 AND pg_visible_in_snapshot(e.xid, s.snap)
             AND NOT pg_visible_in_snapshot(e.xid, $2::pg_snapshot)
         )
         SELECT j.id, j.state, j.updated_at, pg_snapshot_xmin(s.snap)::text, s.snap::text
         FROM s LEFT JOIN (
           changed c CROSS JOIN LATERAL (SELECT id, state, updated_at FROM jobs j WHERE j.id = c.job_id LIMIT 1) j
         ) ON true
         ORDER BY j.id",
    )
    .bind(&cursor.xmin)
    .bind(&cursor.snapshot)
    .fetch_all(db)
    .await?;
    let first = rows.first().ok_or(DbError::Internal(sqlx::Error::RowNotFound))?;
    let next = ChangeCursor { xmin: first.try_get(3)?, snapshot: first.try_get(4)? };
    let mut jobs = Vec::with_capacity(rows.len());
    for row in &rows {
        if let Some(id) = row.try_get::<Option<i64>, _>(0)? {
            jobs.push(JobStateNow { id, state: row.try_get(1)?, updated_at: row.try_get(2)? });
        }
    }
    Ok((next, jobs))
}
