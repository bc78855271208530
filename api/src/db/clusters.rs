//! Clusters (registered agents) and personal API tokens: the two kinds of stored credentials.
//!
//! Only hashes are stored. Hashing the secret (SHA-256) is the caller's job, so this module
//! never sees a secret and cannot log one.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{FromRow, PgExecutor};

use super::{DbError, DbResult};

#[derive(Clone, Debug, PartialEq, FromRow)]
pub struct Cluster {
    pub id: String,
    pub display_name: Option<String>,
    pub labels: Value,
    /// Observed: 'unknown' until the first heartbeat, then 'healthy' | 'degraded' | 'unreachable'.
    pub health: String,
    pub cordoned: bool,
    /// Cordoned by a drain: its preemptible work was sent elsewhere.
    pub draining: bool,
    /// Retired (empty, its agent token void): kept for history, left out of the lists.
    pub retired_at: Option<DateTime<Utc>>,
    pub last_heartbeat: Option<DateTime<Utc>>,
    pub capacity: Option<Value>,
    pub created_at: DateTime<Utc>,
    /// The agent names a control plane other than this database's. Read with `health` in one
    /// row, which the health monitor writes in one statement, so the two never disagree.
    pub control_plane_mismatch: bool,
}

const CLUSTER_COLUMNS: &str =
    "id, display_name, labels, health, cordoned, draining, retired_at, last_heartbeat, capacity, created_at,
    COALESCE(agent_control_plane <> (SELECT incarnation FROM control_plane), false) AS control_plane_mismatch";

/// Registers a cluster with the hash of its agent registration token.
pub async fn register_cluster(
    db: impl PgExecutor<'_>,
    id: &str,
    labels: &Value,
    agent_token_hash: &[u8; 32],
) -> DbResult<Cluster> {
    Ok(sqlx::query_as(&format!(
        "INSERT INTO clusters (id, labels, agent_token_hash) VALUES ($1, $2, $3) RETURNING {CLUSTER_COLUMNS}"
    ))
    .bind(id)
    .bind(labels)
    .bind(&agent_token_hash[..])
    .fetch_one(db)
    .await?)
}

/// The cluster whose agent token hashes to `hash`, if any.
pub async fn cluster_by_token_hash(db: impl PgExecutor<'_>, hash: &[u8; 32]) -> DbResult<Option<Cluster>> {
    Ok(sqlx::query_as(&format!("SELECT {CLUSTER_COLUMNS} FROM clusters WHERE agent_token_hash = $1"))
        .bind(&hash[..])
        .fetch_optional(db)
        .await?)
}

pub async fn get_cluster(db: impl PgExecutor<'_>, id: &str) -> DbResult<Cluster> {
    sqlx::query_as(&format!("SELECT {CLUSTER_COLUMNS} FROM clusters WHERE id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?
        .ok_or(DbError::NotFound("cluster"))
}

pub async fn list_clusters(db: impl PgExecutor<'_>) -> DbResult<Vec<Cluster>> {
    Ok(sqlx::query_as(&format!("SELECT {CLUSTER_COLUMNS} FROM clusters WHERE retired_at IS NULL ORDER BY id"))
        .fetch_all(db)
        .await?)
}

/// Records a heartbeat (and the latest capacity summary when one came with it).
pub async fn record_heartbeat(
    db: impl PgExecutor<'_>,
    id: &str,
    health: &str,
    at: DateTime<Utc>,
    capacity: Option<&Value>,
) -> DbResult<()> {
    // GREATEST: a late, reordered heartbeat never moves the clock back.
    let done = sqlx::query(
        "UPDATE clusters SET health = $2, last_heartbeat = GREATEST(last_heartbeat, $3),
           capacity = COALESCE($4, capacity)
         WHERE id = $1",
    )
    .bind(id)
    .bind(health)
    .bind(at)
    .bind(capacity)
    .execute(db)
    .await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound("cluster"));
    }
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct ApiToken {
    pub id: i64,
    pub user_id: i64,
    pub name: String,
    pub prefix: String,
    pub scopes: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
}

const TOKEN_COLUMNS: &str = "id, user_id, name, prefix, scopes, created_at, expires_at, revoked_at, last_used_at";

/// A token about to be stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewApiToken<'a> {
    pub user_id: i64,
    pub name: &'a str,
    pub hash: [u8; 32],
    pub prefix: &'a str,
    pub scopes: &'a [String],
    pub expires_at: Option<DateTime<Utc>>,
}

pub async fn create_api_token(db: impl PgExecutor<'_>, t: &NewApiToken<'_>) -> DbResult<ApiToken> {
    Ok(sqlx::query_as(&format!(
        "INSERT INTO api_tokens (user_id, name, token_hash, prefix, scopes, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING {TOKEN_COLUMNS}"
    ))
    .bind(t.user_id)
    .bind(t.name)
    .bind(&t.hash[..])
    .bind(t.prefix)
    .bind(t.scopes)
    .bind(t.expires_at)
    .fetch_one(db)
    .await?)
}

/// How stale `api_tokens.last_used_at` may be. Writing it on every request made each
/// token-authenticated read a write (a WAL flush at commit) and serialized concurrent requests
/// of one token on its row; a token's last use is shown to the minute.
pub const TOKEN_USE_RESOLUTION_SECS: i64 = 60;

/// A token's user and what the token may do (its stored scope names; none: everything).
#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct TokenSignIn {
    #[sqlx(flatten)]
    pub user: super::User,
    pub token_scopes: Vec<String>,
}

/// Authenticates a bearer token by its hash, in one statement: its user when the token is
/// neither revoked nor expired (`None` otherwise). Records the use in `last_used_at` when the
/// recorded one is older than [`TOKEN_USE_RESOLUTION_SECS`].
pub async fn sign_in_with_api_token(db: impl PgExecutor<'_>, hash: &[u8; 32]) -> DbResult<Option<TokenSignIn>> {
    Ok(sqlx::query_as(
        "WITH token AS (
           SELECT id, user_id, last_used_at, scopes FROM api_tokens
           WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
         ), touched AS (
           UPDATE api_tokens t SET last_used_at = now() FROM token
           WHERE t.id = token.id
             AND (token.last_used_at IS NULL OR token.last_used_at < now() - make_interval(secs => $2))
         )
         SELECT u.*, token.scopes AS token_scopes FROM users u JOIN token ON u.id = token.user_id",
    )
    .bind(&hash[..])
    .bind(TOKEN_USE_RESOLUTION_SECS as f64)
    .fetch_optional(db)
    .await?)
}

pub async fn list_api_tokens(db: impl PgExecutor<'_>, user_id: i64) -> DbResult<Vec<ApiToken>> {
    Ok(sqlx::query_as(&format!("SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE user_id = $1 ORDER BY id"))
        .bind(user_id)
        .fetch_all(db)
        .await?)
}

/// Revokes one of the user's tokens (a token of another user is NOT_FOUND).
pub async fn revoke_api_token(db: impl PgExecutor<'_>, user_id: i64, token_id: i64) -> DbResult<()> {
    let done =
        sqlx::query("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND user_id = $2")
            .bind(token_id)
            .bind(user_id)
            .execute(db)
            .await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound("token"));
    }
    Ok(())
}
