//! The running workspaces the dispatcher's idle step looks at, and the warnings it gives
//! (`workspace_idle_warnings`, migration 0026). The rule itself is `domain::idle_verdict`.

use chrono::{DateTime, Utc};
use grus_protocol::wire::WorkspaceSpec;
use sqlx::{PgConnection, PgExecutor};

use crate::db::jobs::{note_job_event, EventOrigin};
use crate::db::{Cause, DbResult};
use crate::domain::IdleWarning;

/// A running workspace with what its idle rule needs.
#[derive(Clone, Debug)]
pub struct RunningWorkspace {
    pub job_id: i64,
    /// `spec.workspace`: port, idle timeout, action.
    pub settings: WorkspaceSpec,
    /// When it last became running.
    pub running_since: DateTime<Utc>,
    /// When its GPUs were last busy, if ever.
    pub last_active_at: Option<DateTime<Utc>>,
    pub warning: Option<IdleWarning>,
}

type Row = (
    i64,
    serde_json::Value,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
);

/// Every running workspace.
pub async fn running_workspaces(db: impl PgExecutor<'_>) -> DbResult<Vec<RunningWorkspace>> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT j.id, j.spec->'workspace',
                (SELECT max(e.at) FROM job_events e WHERE e.job_id = j.id AND e.task_id IS NULL AND e.to_state = 'running'
                   AND e.from_state IS DISTINCT FROM 'running'),
                u.last_active_at, w.active_at, w.warned_at
         FROM jobs j
         LEFT JOIN job_utilization u ON u.job_id = j.id
         LEFT JOIN workspace_idle_warnings w ON w.job_id = j.id
         WHERE j.workload_type = 'workspace' AND j.state = 'running'
         ORDER BY j.id",
    )
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(job_id, settings, since, last_active_at, active_at, warned_at)| {
            Some(RunningWorkspace {
                job_id,
                // Written by the api from the same type; one that does not read is not culled.
                settings: serde_json::from_value(settings).ok()?,
                running_since: since?,
                last_active_at,
                warning: active_at.zip(warned_at).map(|(active_at, warned_at)| IdleWarning { active_at, warned_at }),
            })
        })
        .collect())
}

/// Records the warning given to a running workspace, with its event (the state unchanged).
pub async fn warn(conn: &mut PgConnection, job_id: i64, warning: IdleWarning, by: Cause<'_>) -> DbResult<()> {
    sqlx::query(
        "INSERT INTO workspace_idle_warnings (job_id, active_at, warned_at) VALUES ($1, $2, $3)
         ON CONFLICT (job_id) DO UPDATE SET active_at = EXCLUDED.active_at, warned_at = EXCLUDED.warned_at",
    )
    .bind(job_id)
    .bind(warning.active_at)
    .bind(warning.warned_at)
    .execute(&mut *conn)
    .await?;
    note_job_event(conn, job_id, "running", by, &EventOrigin::default()).await?;
    Ok(())
}
