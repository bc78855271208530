//! The control plane's identity: its incarnation, created once with the database (migration
//! 0009) and carried by every command. Replaced only by an operator, after restoring a backup
//! (`grus-api migrate --new-incarnation`): agents then refuse this control plane until they
//! are re-pinned, which is the point: the restored database reuses job ids and epochs the
//! agents have already seen.

use sqlx::PgExecutor;

use super::DbResult;

/// This database's incarnation.
pub async fn incarnation(db: impl PgExecutor<'_>) -> DbResult<String> {
    Ok(sqlx::query_scalar("SELECT incarnation FROM control_plane").fetch_one(db).await?)
}

/// Gives this database a new incarnation and returns it.
pub async fn new_incarnation(db: impl PgExecutor<'_>) -> DbResult<String> {
    Ok(sqlx::query_scalar(
        "UPDATE control_plane SET incarnation = gen_random_uuid()::text, created_at = now() RETURNING incarnation",
    )
    .fetch_one(db)
    .await?)
}
