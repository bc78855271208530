//! Aging (a queue's `max_wait_s`, migration 0016): the waiting jobs due for a raise, and the
//! raise itself. Which class a job is raised to is `domain::aged_class`'s decision.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgConnection, PgExecutor};

use super::jobs::{note_job_event, Cause, EventOrigin};
use super::DbResult;

/// A job waiting for a cluster in a queue that ages its jobs, past one period since it began
/// waiting or was last raised.
#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct AgingCandidate {
    pub job_id: i64,
    pub priority_class: String,
    /// Seconds since it began waiting or was last raised.
    pub waited_s: i64,
    pub max_wait_s: i32,
    /// Its tenant's highest class.
    pub tenant_max_class: String,
    pub queue: String,
}

/// At most this many raises per call; the rest wait for the next.
const BATCH: i64 = 500;

/// The waiting jobs (admitted, or given back by a cluster) that have waited a whole period of
/// their queue's `max_wait_s` since they began waiting or were last raised, below `high`.
pub async fn aging_candidates(db: impl PgExecutor<'_>, now: DateTime<Utc>) -> DbResult<Vec<AgingCandidate>> {
    Ok(sqlx::query_as(
        "SELECT j.id AS job_id, j.priority_class,
                EXTRACT(EPOCH FROM $1 - GREATEST(j.waiting_since, j.aged_at))::bigint AS waited_s,
                q.max_wait_s, t.max_priority_class AS tenant_max_class, q.name AS queue
         FROM jobs j
         JOIN queues q ON q.id = j.queue_id
         JOIN projects p ON p.id = j.project_id
         JOIN tenants t ON t.id = p.tenant_id
         WHERE j.state IN ('admitted', 'rejected') AND q.max_wait_s IS NOT NULL
           AND j.priority_class IN ('low', 'normal')
           AND GREATEST(j.waiting_since, j.aged_at) <= $1 - make_interval(secs => q.max_wait_s)
         ORDER BY j.id LIMIT $2",
    )
    .bind(now)
    .bind(BATCH)
    .fetch_all(db)
    .await?)
}

/// Raises a job still waiting at class `from` to (`priority`, `class`), stamps `aged_at` with
/// `at` (the round's clock, which the next [`aging_candidates`] measures from) and appends the
/// event; false (nothing written) when it is no longer waiting at `from`.
pub async fn raise_waiting(
    conn: &mut PgConnection,
    job_id: i64,
    from: &str,
    (priority, class): (i32, &str),
    at: DateTime<Utc>,
    by: Cause<'_>,
) -> DbResult<bool> {
    let state: Option<String> = sqlx::query_scalar(
        "UPDATE jobs SET priority = $3, priority_class = $4, aged_at = $5, updated_at = now(),
           spec = jsonb_set(spec, '{priority}', to_jsonb($3::int))
         WHERE id = $1 AND priority_class = $2 AND state IN ('admitted', 'rejected')
         RETURNING state",
    )
    .bind(job_id)
    .bind(from)
    .bind(priority)
    .bind(class)
    .bind(at)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(state) = state else { return Ok(false) };
    note_job_event(conn, job_id, &state, by, &EventOrigin::default()).await?;
    Ok(true)
}
