//! The agent's own Redis credentials: exchanged once for the cluster's registration token at
//! grus-api (`POST /api/agent/credentials`, which creates the cluster's Redis ACL user) and kept
//! in the state directory (`redis-credentials.json`, mode 0600; under Kubernetes the state
//! directory is the agent's volume). Stored credentials that Redis refuses (the token was
//! rotated) are exchanged again, once, with the token the agent was started with.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::transport::RedisSettings;

const FILE: &str = "redis-credentials.json";

/// Where to exchange the registration token, and the token.
#[derive(Clone)]
pub struct TokenExchange {
    /// grus-api's base URL (`https://grus.example.com`).
    pub api_url: String,
    pub token: String,
}

impl std::fmt::Debug for TokenExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenExchange").field("api_url", &self.api_url).field("token", &"<redacted>").finish()
    }
}

/// What grus-api returns and the agent keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCredentials {
    pub cluster: String,
    pub username: String,
    pub password: String,
}

fn path(state_dir: &Path) -> PathBuf {
    state_dir.join(FILE)
}

/// The credentials kept in `state_dir`, if any.
pub fn load(state_dir: &Path) -> anyhow::Result<Option<StoredCredentials>> {
    let p = path(state_dir);
    match std::fs::read(&p) {
        Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes).with_context(|| format!("{} is not valid", p.display()))?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("read {}", p.display())),
    }
}

/// Keeps `credentials` in `state_dir`, readable by this user only (written whole, then renamed).
pub fn store(state_dir: &Path, credentials: &StoredCredentials) -> anyhow::Result<()> {
    std::fs::create_dir_all(state_dir)?;
    let tmp = state_dir.join(format!("{FILE}.tmp"));
    let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
    f.write_all(&serde_json::to_vec(credentials)?)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path(state_dir))?;
    Ok(())
}

/// Presents the token to grus-api for this cluster's credentials.
pub async fn exchange(exchange: &TokenExchange, cluster: &str) -> anyhow::Result<StoredCredentials> {
    let url = format!("{}/api/agent/credentials", exchange.api_url.trim_end_matches('/'));
    let response = reqwest::Client::new()
        .post(&url)
        .bearer_auth(&exchange.token)
        .send()
        .await
        .with_context(|| format!("reach grus-api at {url}"))?;
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        anyhow::bail!("grus-api refused the agent token ({status}): {body}");
    }
    let credentials: StoredCredentials = response.json().await.context("grus-api's credentials do not decode")?;
    if credentials.cluster != cluster {
        anyhow::bail!("the token belongs to cluster `{}`, this agent is `{cluster}`", credentials.cluster);
    }
    Ok(credentials)
}

/// `base` with this agent's own credentials: the stored ones if Redis takes them, else (with a
/// token) new ones from grus-api; without either, `base` as it is.
pub async fn redis_settings(
    base: &RedisSettings,
    state_dir: &Path,
    cluster: &str,
    token: Option<&TokenExchange>,
) -> anyhow::Result<RedisSettings> {
    let with = |c: &StoredCredentials| RedisSettings {
        url: base.url.clone(),
        username: Some(c.username.clone()),
        password: Some(c.password.clone()),
    };
    if let Some(stored) = load(state_dir)? {
        let settings = with(&stored);
        match token {
            Some(_) if !accepted(&settings).await => {
                tracing::warn!("Redis refuses the stored agent credentials; exchanging the token again")
            }
            _ => return Ok(settings),
        }
    }
    let Some(token) = token else { return Ok(base.clone()) };
    let fresh = exchange(token, cluster).await?;
    store(state_dir, &fresh)?;
    tracing::info!(user = fresh.username, "agent credentials obtained from grus-api");
    Ok(with(&fresh))
}

/// Whether Redis accepts `settings` (a PING authenticates).
async fn accepted(settings: &RedisSettings) -> bool {
    let Ok(client) = settings.client() else { return false };
    match client.get_multiplexed_async_connection().await {
        Ok(mut conn) => redis::cmd("PING").query_async::<String>(&mut conn).await.is_ok(),
        Err(e) => e.kind() != redis::ErrorKind::AuthenticationFailed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_credentials_are_private_to_the_agent() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()).unwrap(), None);
        let c = StoredCredentials { cluster: "east".into(), username: "grus-agent-east".into(), password: "p".into() };
        store(dir.path(), &c).unwrap();
        assert_eq!(load(dir.path()).unwrap(), Some(c));
        let mode = std::fs::metadata(dir.path().join(FILE)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(!format!("{:?}", TokenExchange { api_url: "u".into(), token: "t0ken".into() }).contains("t0ken"));
    }
}
