//! The audit log: what operators did to the fleet and the tenancy (cordons, drains, retired
//! clusters, rotated tokens, deleted queues and projects, budgets), one row per action,
//! written in the transaction of the action itself.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgExecutor};

use super::DbResult;
use crate::domain::AuditAction;

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct AuditEvent {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub detail: String,
}

/// Records that `actor` did `action` to `target` (`cluster/a`, `node/a/n1`, `project/ml`).
pub async fn record(
    db: impl PgExecutor<'_>,
    actor: &str,
    action: AuditAction,
    target: &str,
    detail: &str,
) -> DbResult<()> {
    sqlx::query("INSERT INTO audit_events (actor, action, target, detail) VALUES ($1, $2, $3, $4)")
        .bind(actor)
        .bind(action.as_str())
        .bind(target)
        .bind(detail)
        .execute(db)
        .await?;
    Ok(())
}

/// The newest `limit` events, newest first; with `targets`, only those whose target starts
/// with one of them (a cluster's events: `cluster/a` and `node/a/`).
pub async fn recent(db: impl PgExecutor<'_>, limit: i64, targets: &[String]) -> DbResult<Vec<AuditEvent>> {
    Ok(sqlx::query_as(
        "SELECT id, at, actor, action, target, detail FROM audit_events
         WHERE cardinality($2::text[]) = 0 OR target LIKE ANY($2)
         ORDER BY at DESC, id DESC LIMIT $1",
    )
    .bind(limit)
    .bind(targets.iter().map(|t| format!("{}%", t.replace('%', "\\%").replace('_', "\\_"))).collect::<Vec<_>>())
    .fetch_all(db)
    .await?)
}
