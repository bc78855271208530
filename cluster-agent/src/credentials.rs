//! The agent's own Redis credentials: exchanged once for the cluster's registration token at
//! grus-api (`POST /api/agent/credentials`, which creates the cluster's Redis ACL user) and kept
//! where [`CredentialStore`] says: under Kubernetes a Secret in the agent's namespace
//! (`--credentials-secret`), else the state directory (`redis-credentials.json`, mode 0600).
//! Stored credentials that Redis refuses (the token was rotated) are exchanged again, once,
//! with the token the agent was started with.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::ByteString;
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

/// The Secret that keeps the credentials under Kubernetes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretRef {
    pub namespace: String,
    pub name: String,
}

/// Where the agent keeps its credentials.
pub enum CredentialStore {
    /// `redis-credentials.json` (mode 0600) in this directory: sim and dev.
    File(PathBuf),
    /// A Secret of this name (keys `cluster`, `username`, `password`): under Kubernetes, where
    /// RBAC, not a volume's file mode, decides who reads it.
    Secret { api: Box<kube::Api<Secret>>, name: String },
}

impl std::fmt::Debug for CredentialStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CredentialStore::File(dir) => write!(f, "file {}", path(dir).display()),
            CredentialStore::Secret { name, .. } => write!(f, "secret {name}"),
        }
    }
}

/// The keys of the credentials Secret.
const SECRET_KEYS: [&str; 3] = ["cluster", "username", "password"];

impl CredentialStore {
    /// The Secret `name` in `namespace`.
    pub fn secret(client: kube::Client, namespace: &str, name: &str) -> CredentialStore {
        CredentialStore::Secret { api: Box::new(kube::Api::namespaced(client, namespace)), name: name.to_owned() }
    }

    pub async fn load(&self) -> anyhow::Result<Option<StoredCredentials>> {
        match self {
            CredentialStore::File(dir) => load(dir),
            CredentialStore::Secret { api, name } => {
                let Some(secret) = api.get_opt(name).await.with_context(|| format!("read Secret {name}"))? else {
                    return Ok(None);
                };
                let data = secret.data.unwrap_or_default();
                // The chart creates the Secret empty: nothing kept yet.
                if SECRET_KEYS.iter().all(|k| !data.contains_key(*k)) {
                    return Ok(None);
                }
                let field = |key: &str| -> anyhow::Result<String> {
                    let bytes = data.get(key).with_context(|| format!("Secret {name} has no `{key}`"))?;
                    String::from_utf8(bytes.0.clone()).with_context(|| format!("Secret {name}: `{key}` is not UTF-8"))
                };
                Ok(Some(StoredCredentials {
                    cluster: field("cluster")?,
                    username: field("username")?,
                    password: field("password")?,
                }))
            }
        }
    }

    /// Keeps `credentials`, replacing what was kept (a Secret by server-side apply: created
    /// when missing, its keys replaced when present).
    pub async fn store(&self, credentials: &StoredCredentials) -> anyhow::Result<()> {
        match self {
            CredentialStore::File(dir) => store(dir, credentials),
            CredentialStore::Secret { api, name } => {
                let values = [&credentials.cluster, &credentials.username, &credentials.password];
                let data = SECRET_KEYS
                    .iter()
                    .zip(values)
                    .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                    .collect();
                let secret = Secret {
                    metadata: ObjectMeta {
                        name: Some(name.clone()),
                        labels: Some(
                            [("app.kubernetes.io/managed-by".to_string(), "grus-agent".to_string())]
                                .into_iter()
                                .collect(),
                        ),
                        ..ObjectMeta::default()
                    },
                    type_: Some("Opaque".into()),
                    data: Some(data),
                    ..Secret::default()
                };
                let params = kube::api::PatchParams::apply("grus-agent").force();
                api.patch(name, &params, &kube::api::Patch::Apply(&secret))
                    .await
                    .with_context(|| format!("write Secret {name}"))?;
                Ok(())
            }
        }
    }
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
    kept: &CredentialStore,
    cluster: &str,
    token: Option<&TokenExchange>,
) -> anyhow::Result<RedisSettings> {
    let with = |c: &StoredCredentials| RedisSettings {
        url: base.url.clone(),
        username: Some(c.username.clone()),
        password: Some(c.password.clone()),
    };
    if let Some(stored) = kept.load().await? {
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
    kept.store(&fresh).await?;
    tracing::info!(user = fresh.username, kept = ?kept, "agent credentials obtained from grus-api");
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
