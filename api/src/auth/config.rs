//! What identity needs to be configured with: the authentication mode (dev or OIDC), the
//! OIDC issuer and the portal login. `crate::config` parses the flags into these; nothing here
//! reads flags or the environment.

use std::time::Duration;

/// OIDC settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OidcConfig {
    /// Issuer URL, exactly as the discovery document and the tokens name it.
    pub issuer: String,
    /// `aud` required in bearer JWTs.
    pub audience: String,
    /// Portal login; `None` when no client id is configured.
    pub login: Option<LoginConfig>,
    pub platform_admin_subject: Option<String>,
    pub jwks_refetch_interval: Duration,
    pub leeway: Duration,
}

impl OidcConfig {
    /// Bearer-only settings with the flags' defaults.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        OidcConfig {
            issuer: issuer.into(),
            audience: audience.into(),
            login: None,
            platform_admin_subject: None,
            jwks_refetch_interval: Duration::from_secs(30),
            leeway: Duration::from_secs(30),
        }
    }
}

/// The portal's authorization-code login.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoginConfig {
    pub client_id: String,
    pub client_secret: Option<Secret>,
    /// Base URL without a trailing slash; logout returns there.
    pub public_url: String,
    pub redirect_url: String,
    /// Requested besides `openid`.
    pub scopes: Vec<String>,
    pub session_ttl: Duration,
    /// Cookies get `Secure` (the public URL is https).
    pub secure_cookies: bool,
}

/// A string kept out of `Debug` output, hence out of logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// How callers authenticate. Encodes "dev or OIDC" in the type, so no code path runs
/// without one of them. (Built once per process, hence not boxed.)
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthMode {
    /// Dev identity header accepted (plus API tokens). Loopback only.
    Dev,
    /// API tokens, OIDC bearer JWTs and (with a client id) the portal login.
    Oidc(OidcConfig),
}

/// A dev identity's name: what follows `dev:` in its subject.
pub fn valid_dev_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.'))
}
