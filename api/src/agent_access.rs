//! Agents' own Redis credentials. An agent presents its cluster's registration token once
//! (`POST /api/agent/credentials`, `Authorization: Bearer <token>`); grus-api creates that
//! cluster's Redis ACL user, limited to the cluster's keys (`grus:{cluster}:*`) and to the
//! commands an agent sends, and returns its name and password, which the agent stores. Asking
//! again with the same token issues a new password (the old one stops working). After
//! `rotateAgentToken` the health monitor deletes the user and closes its connections
//! ([`revoke_rotated`]): the agent is cut off until it presents the new token.
//!
//! grus-api's own Redis user needs the `acl` and `client` command categories for this.

use serde::{Deserialize, Serialize};
use sqlx::PgPool;

use crate::auth::web::{hash_token, random_secret};
use crate::db::DbResult;

/// The ACL user of `cluster`'s agent.
pub fn agent_user(cluster: &str) -> String {
    format!("grus-agent-{cluster}")
}

/// The commands an agent sends: its streams (read its commands as group `agent`, append
/// events and dead letters, acknowledge), its heartbeat key, and what a client says on
/// connecting.
pub const AGENT_COMMANDS: &[&str] =
    &["+xreadgroup", "+xgroup|create", "+xack", "+xadd", "+set", "+setex", "+ping", "+select", "+client|setname"];

/// Allowed where the server knows it (Redis 7.2 and later; clients send it on connecting).
const NEWER_COMMANDS: &[&str] = &["+client|setinfo"];

/// `ACL SETUSER` arguments that (re)define `cluster`'s agent user with `password`: every
/// earlier rule and password reset, only the cluster's keys, no channels.
pub fn acl_rules(cluster: &str, password: &str) -> Vec<String> {
    let mut rules = vec![
        agent_user(cluster),
        "reset".into(),
        "on".into(),
        format!(">{password}"),
        format!("~{}", grus_protocol::keys::acl_key_pattern(cluster)),
        "resetchannels".into(),
        "-@all".into(),
    ];
    rules.extend(AGENT_COMMANDS.iter().map(|c| c.to_string()));
    rules
}

/// What the agent receives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentCredentials {
    pub cluster: String,
    pub username: String,
    pub password: String,
}

/// Why credentials were not issued.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    #[error("unknown or rotated agent token")]
    UnknownToken,
    #[error("could not create the agent's Redis user (does grus-api's own user have +acl?): {0}")]
    Redis(#[from] redis::RedisError),
    #[error("database: {0}")]
    Db(#[from] crate::db::DbError),
}

/// Issues `token`'s cluster a Redis user and a new password.
pub async fn issue(pool: &PgPool, redis: &redis::Client, token: &str) -> Result<AgentCredentials, IssueError> {
    let cluster = crate::db::cluster_by_token_hash(pool, &hash_token(token)).await?.ok_or(IssueError::UnknownToken)?.id;
    let password = random_secret();
    let mut conn = redis.get_multiplexed_async_connection().await?;
    redis::cmd("ACL").arg("SETUSER").arg(acl_rules(&cluster, &password)).query_async::<()>(&mut conn).await?;
    for rule in NEWER_COMMANDS {
        let added: redis::RedisResult<()> =
            redis::cmd("ACL").arg("SETUSER").arg(agent_user(&cluster)).arg(*rule).query_async(&mut conn).await;
        if let Err(e) = added {
            tracing::debug!(rule, error = %e, "this Redis does not know the command; not needed");
        }
    }
    record_issued(pool, &cluster).await?;
    tracing::info!(cluster, "agent credentials issued");
    Ok(AgentCredentials { username: agent_user(&cluster), cluster, password })
}

async fn record_issued(pool: &PgPool, cluster: &str) -> DbResult<()> {
    sqlx::query("UPDATE clusters SET agent_redis_user = $2, agent_credentials_at = now() WHERE id = $1")
        .bind(cluster)
        .bind(agent_user(cluster))
        .execute(pool)
        .await?;
    Ok(())
}

/// Deletes the Redis users of clusters whose token was rotated after their credentials were
/// issued, and closes their connections. Returns the clusters cut off.
pub async fn revoke_rotated(
    pool: &PgPool,
    conn: &mut impl redis::aio::ConnectionLike,
) -> Result<Vec<String>, RevokeError> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT id, agent_redis_user FROM clusters
         WHERE agent_redis_user IS NOT NULL AND agent_token_rotated_at > agent_credentials_at ORDER BY id",
    )
    .fetch_all(pool)
    .await
    .map_err(crate::db::DbError::from)?;
    let mut out = Vec::new();
    for (cluster, user) in rows {
        redis::cmd("ACL").arg("DELUSER").arg(&user).query_async::<i64>(conn).await?;
        // Connections already authenticated as the user outlive it: close them.
        redis::cmd("CLIENT").arg("KILL").arg("USER").arg(&user).query_async::<redis::Value>(conn).await.ok();
        sqlx::query("UPDATE clusters SET agent_redis_user = NULL WHERE id = $1 AND agent_redis_user = $2")
            .bind(&cluster)
            .bind(&user)
            .execute(pool)
            .await
            .map_err(crate::db::DbError::from)?;
        tracing::warn!(cluster, user, "agent token rotated: its Redis user is deleted");
        out.push(cluster);
    }
    Ok(out)
}

#[derive(Debug, thiserror::Error)]
pub enum RevokeError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("database: {0}")]
    Db(#[from] crate::db::DbError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_user_reaches_its_own_keys_only() {
        let rules = acl_rules("east", "s3cret");
        assert_eq!(rules[0], "grus-agent-east");
        assert!(rules.contains(&"~grus:{east}:*".to_owned()));
        assert!(rules.contains(&">s3cret".to_owned()));
        let reset = rules.iter().position(|r| r == "reset").unwrap();
        let all_off = rules.iter().position(|r| r == "-@all").unwrap();
        assert!(reset < all_off && rules[all_off + 1..].iter().all(|r| r.starts_with('+')), "{rules:?}");
        assert!(!rules.iter().any(|r| r.contains("@all") && r.starts_with('+')));
    }
}
