//! The configured OIDC issuer: discovery (lazy, retried until it succeeds, then cached), the
//! one HTTP client, the JWKS cache behind every signature check, and users from claims.
//!
//! Key rotation: a token whose `kid` is not cached triggers a JWKS refetch, at most once per
//! `jwks_refetch_interval` ([`refetch_allowed`]), so forged key ids cannot make the server
//! hammer the provider. The cache's mutex is held across the fetch: concurrent misses wait for
//! that one fetch instead of each starting their own.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::Jwk;
use openidconnect::IssuerUrl;
use sqlx::PgPool;
use tokio::sync::{Mutex, OnceCell};

use super::config::OidcConfig;
use super::jwt::{self, Expectations, JwtError, VerifiedClaims};
use crate::db::{self, DbResult, IdentityClaims, User};

/// Discovery document, with the RP-initiated logout endpoint.
pub type Metadata = openidconnect::ProviderMetadataWithLogout;

/// Largest JWKS document accepted.
const MAX_JWKS_BYTES: usize = 1 << 20;

#[derive(Debug, Default)]
struct JwksCache {
    keys: Vec<Jwk>,
    fetched_at: Option<Instant>,
}

#[derive(Debug)]
pub struct OidcProvider {
    config: OidcConfig,
    http: reqwest::Client,
    metadata: OnceCell<Arc<Metadata>>,
    jwks: Mutex<JwksCache>,
}

/// Whether a cache miss may refetch the JWKS now.
pub fn refetch_allowed(last: Option<Instant>, now: Instant, min_interval: Duration) -> bool {
    last.is_none_or(|t| now.saturating_duration_since(t) >= min_interval)
}

impl OidcProvider {
    pub fn new(config: OidcConfig) -> Self {
        // No redirects: a provider endpoint must not bounce our requests elsewhere (SSRF).
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            // Only fails when the TLS backend cannot initialise; rustls with bundled roots can.
            .unwrap_or_default();
        OidcProvider { config, http, metadata: OnceCell::new(), jwks: Mutex::new(JwksCache::default()) }
    }

    pub fn config(&self) -> &OidcConfig {
        &self.config
    }

    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The discovery document; fetched on first use (the server starts while the provider is
    /// down) and kept for the life of the process.
    pub async fn metadata(&self) -> Result<Arc<Metadata>, JwtError> {
        self.metadata
            .get_or_try_init(|| async {
                let issuer =
                    IssuerUrl::new(self.config.issuer.clone()).map_err(|e| JwtError::Provider(e.to_string()))?;
                let m = Metadata::discover_async(issuer, &self.http)
                    .await
                    .map_err(|e| JwtError::Provider(format!("discovery: {}", error_chain(&e))))?;
                Ok(Arc::new(m))
            })
            .await
            .cloned()
    }

    async fn fetch_jwks(&self) -> Result<Vec<Jwk>, JwtError> {
        let metadata = self.metadata().await?;
        let fail = |e: &dyn std::fmt::Display| JwtError::Provider(format!("JWKS: {e}"));
        let resp = self.http.get(metadata.jwks_uri().url().clone()).send().await.map_err(|e| fail(&error_chain(&e)))?;
        if !resp.status().is_success() {
            return Err(fail(&resp.status()));
        }
        let body = resp.bytes().await.map_err(|e| fail(&e))?;
        if body.len() > MAX_JWKS_BYTES {
            return Err(fail(&"document too large"));
        }
        #[derive(serde::Deserialize)]
        struct RawSet {
            keys: Vec<serde_json::Value>,
        }
        let raw: RawSet = serde_json::from_slice(&body).map_err(|e| fail(&e))?;
        // Keys of kinds we cannot parse are skipped, not fatal: the others still verify.
        Ok(raw.keys.into_iter().filter_map(|k| serde_json::from_value::<Jwk>(k).ok()).collect())
    }

    /// The key for `kid`, refetching the JWKS on a miss when [`refetch_allowed`].
    async fn key(&self, kid: Option<&str>) -> Result<Jwk, JwtError> {
        let mut cache = self.jwks.lock().await;
        if let Some(k) = jwt::select_key(&cache.keys, kid) {
            return Ok(k.clone());
        }
        let now = Instant::now();
        if !refetch_allowed(cache.fetched_at, now, self.config.jwks_refetch_interval) {
            return Err(JwtError::UnknownKey(kid.map(str::to_owned)));
        }
        // Counted also when the fetch fails: a provider that is down is not hammered either.
        cache.fetched_at = Some(now);
        cache.keys = self.fetch_jwks().await?;
        tracing::info!(keys = cache.keys.len(), "JWKS fetched");
        jwt::select_key(&cache.keys, kid).cloned().ok_or_else(|| JwtError::UnknownKey(kid.map(str::to_owned)))
    }

    /// Verifies a token of this issuer for `audience`: bearer JWTs (the configured audience) and
    /// ID tokens (the client id, with the login's nonce).
    pub async fn verify(&self, token: &str, audience: &str, nonce: Option<&str>) -> Result<VerifiedClaims, JwtError> {
        let (alg, kid) = jwt::parse_header(token)?;
        let jwk = self.key(kid.as_deref()).await?;
        let key = jwt::decoding_key(&jwk, alg)?;
        let expect = Expectations { issuer: &self.config.issuer, audience, leeway: self.config.leeway, nonce };
        jwt::verify_with_key(token, alg, &key, &expect)
    }

    /// A bearer JWT for the API.
    pub async fn verify_bearer(&self, token: &str) -> Result<VerifiedClaims, JwtError> {
        self.verify(token, &self.config.audience, None).await
    }

    /// Creates the user on first use and refreshes the claims the token carries; the configured
    /// subject becomes platform admin.
    pub async fn upsert_user(&self, pool: &PgPool, claims: &VerifiedClaims) -> DbResult<User> {
        let platform_admin = self.config.platform_admin_subject.as_deref() == Some(claims.sub.as_str());
        let identity = IdentityClaims {
            subject: &claims.sub,
            email: claims.email.as_deref(),
            display_name: claims.name.as_deref().or(claims.preferred_username.as_deref()),
            platform_admin,
        };
        db::sign_in(pool, &identity).await
    }
}

/// An error with its sources ("a: b: c"): reqwest's top-level message alone says little.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        cur = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refetch_is_rate_limited() {
        let t0 = Instant::now();
        let min = Duration::from_secs(30);
        assert!(refetch_allowed(None, t0, min), "the first fetch is always allowed");
        assert!(!refetch_allowed(Some(t0), t0, min));
        assert!(!refetch_allowed(Some(t0), t0 + Duration::from_secs(29), min));
        assert!(refetch_allowed(Some(t0), t0 + min, min));
        assert!(refetch_allowed(Some(t0), t0, Duration::ZERO), "zero interval: every miss refetches");
        assert!(!refetch_allowed(Some(t0 + min), t0, min), "a clock read earlier than the fetch is no licence");
    }
}
