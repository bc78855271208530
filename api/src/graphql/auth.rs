//! Authentication: turns request headers into the [`Caller`] put in the GraphQL context.
//!
//! Credentials, first match wins: `Authorization: Bearer grus_<secret>` (a personal API token,
//! looked up by its SHA-256), `Authorization: Bearer <jwt>` (verified against the OIDC issuer's
//! JWKS by `crate::auth::OidcProvider`; OIDC mode only), only in `--dev` the
//! `X-Grus-Dev-User: <name>` header (upserts the user `dev:<name>`), and the portal's
//! `grus_session` cookie. A cookie-authenticated caller comes with its session's CSRF token,
//! which the GraphQL handler requires back in `X-Grus-CSRF` ([`Authenticated::csrf_token`]).

use std::sync::Arc;

use axum::http::HeaderMap;
use sqlx::PgPool;

use super::Caller;
use crate::auth::web::hash_token;
use crate::auth::{valid_dev_name, web, AuthMode, JwtError, OidcProvider};
use crate::db;
use crate::domain::{token_allows, TokenScope};
use crate::error::{ApiError, ApiResult};

/// Prefix of personal API tokens; it tells them apart from JWTs without parsing.
pub const TOKEN_PREFIX: &str = "grus_";
/// The dev identity header, honoured only with `--dev`.
pub const DEV_USER_HEADER: &str = "x-grus-dev-user";

/// What the request presented.
#[derive(Debug, PartialEq, Eq)]
pub enum Credential<'a> {
    ApiToken(&'a str),
    Jwt(&'a str),
    DevUser(&'a str),
    /// The `grus_session` cookie.
    Session(&'a str),
}

/// Reads the credential from the headers. `Ok(None)`: anonymous.
pub fn credential(headers: &HeaderMap) -> ApiResult<Option<Credential<'_>>> {
    if let Some(value) = headers.get(axum::http::header::AUTHORIZATION) {
        let value = value.to_str().map_err(|_| ApiError::Unauthenticated)?;
        let token = value.strip_prefix("Bearer ").ok_or(ApiError::Unauthenticated)?.trim();
        return Ok(Some(if token.starts_with(TOKEN_PREFIX) {
            Credential::ApiToken(token)
        } else {
            Credential::Jwt(token)
        }));
    }
    if let Some(value) = headers.get(DEV_USER_HEADER) {
        return Ok(Some(Credential::DevUser(value.to_str().map_err(|_| ApiError::Unauthenticated)?)));
    }
    if let Some(id) = web::cookie(headers, web::SESSION_COOKIE) {
        return Ok(Some(Credential::Session(id)));
    }
    Ok(None)
}

/// An authenticated request.
#[derive(Clone, Debug)]
pub struct Authenticated {
    pub caller: Caller,
    /// `Some` when authenticated by the session cookie: state-changing requests must echo it
    /// (a cross-site page can make the browser send the cookie, not read this token).
    pub csrf_token: Option<String>,
    /// `Some` when authenticated by an API token: what it may do (`domain::token_allows`).
    pub token_scopes: Option<Vec<TokenScope>>,
}

impl Authenticated {
    /// Whether these credentials may run an operation that writes (or only reads).
    pub fn may(&self, writes: bool) -> bool {
        self.token_scopes.as_deref().is_none_or(|scopes| token_allows(scopes, writes))
    }
}

/// Checks credentials against the configured mode.
#[derive(Clone, Debug)]
pub struct Authenticator {
    mode: AuthMode,
    /// The OIDC issuer (JWKS, discovery); `None` in `--dev`.
    oidc: Option<Arc<OidcProvider>>,
    /// `--dev` only: the dev subject granted platform admin (`--platform-admin-subject`).
    dev_platform_admin: Option<String>,
}

impl Authenticator {
    pub fn new(mode: AuthMode) -> Self {
        let oidc = match &mode {
            AuthMode::Oidc(config) => Some(Arc::new(OidcProvider::new(config.clone()))),
            AuthMode::Dev => None,
        };
        Authenticator { mode, oidc, dev_platform_admin: None }
    }

    /// In `--dev`, the dev identity (`dev:<name>`) that becomes platform admin on its first
    /// request, as an OIDC subject does with `--platform-admin-subject`. Ignored in OIDC mode.
    pub fn with_dev_platform_admin(mut self, subject: Option<String>) -> Self {
        self.dev_platform_admin = subject;
        self
    }

    /// The OIDC issuer, in OIDC mode.
    pub fn oidc(&self) -> Option<&Arc<OidcProvider>> {
        self.oidc.as_ref()
    }

    /// The caller, `None` when anonymous; invalid credentials are UNAUTHENTICATED (never
    /// silently anonymous, so a typo in a token does not look like an empty account).
    pub async fn authenticate(&self, pool: &PgPool, headers: &HeaderMap) -> ApiResult<Option<Caller>> {
        Ok(self.identify(pool, headers).await?.map(|a| a.caller))
    }

    /// Like [`Self::authenticate`], with how the caller authenticated.
    pub async fn identify(&self, pool: &PgPool, headers: &HeaderMap) -> ApiResult<Option<Authenticated>> {
        let Some(cred) = credential(headers)? else { return Ok(None) };
        let mut csrf_token = None;
        let mut token_scopes = None;
        let user = match cred {
            Credential::ApiToken(token) => {
                let signed_in =
                    db::sign_in_with_api_token(pool, &hash_token(token)).await?.ok_or(ApiError::Unauthenticated)?;
                let scopes: Result<Vec<TokenScope>, _> = signed_in.token_scopes.iter().map(|s| s.parse()).collect();
                token_scopes = Some(scopes.map_err(|e| ApiError::internal(&e))?);
                signed_in.user
            }
            Credential::Jwt(token) => {
                let oidc = self.oidc.as_ref().ok_or(ApiError::Unauthenticated)?;
                let claims = oidc.verify_bearer(token).await.map_err(jwt_refused)?;
                oidc.upsert_user(pool, &claims).await?
            }
            Credential::Session(id) => {
                let (user, csrf) = db::session_user(pool, &hash_token(id)).await?.ok_or(ApiError::Unauthenticated)?;
                csrf_token = Some(csrf);
                user
            }
            Credential::DevUser(name) => {
                if self.mode != AuthMode::Dev {
                    return Err(ApiError::Unauthenticated);
                }
                if !valid_dev_name(name) {
                    return Err(ApiError::Unauthenticated);
                }
                let subject = format!("dev:{name}");
                // The same grant as an OIDC sign-in of the configured subject (never revoked).
                let platform_admin = self.dev_platform_admin.as_deref() == Some(subject.as_str());
                let claims =
                    db::IdentityClaims { subject: &subject, email: None, display_name: Some(name), platform_admin };
                db::sign_in(pool, &claims).await?
            }
        };
        Ok(Some(Authenticated { caller: Caller { user }, csrf_token, token_scopes }))
    }
}

/// A refused JWT is UNAUTHENTICATED (the reason is logged, not told); an unreachable provider
/// is our failure, not the caller's.
fn jwt_refused(e: JwtError) -> ApiError {
    match e {
        JwtError::Provider(detail) => ApiError::internal(&detail),
        other => {
            tracing::info!(reason = %other, "bearer JWT refused");
            ApiError::Unauthenticated
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_credentials() {
        let mut h = HeaderMap::new();
        assert_eq!(credential(&h).unwrap(), None);
        h.insert("authorization", "Bearer grus_abc".parse().unwrap());
        assert_eq!(credential(&h).unwrap(), Some(Credential::ApiToken("grus_abc")));
        h.insert("authorization", "Bearer eyJ.x.y".parse().unwrap());
        assert_eq!(credential(&h).unwrap(), Some(Credential::Jwt("eyJ.x.y")));
        h.insert("authorization", "Basic x".parse().unwrap());
        assert_eq!(credential(&h).unwrap_err(), ApiError::Unauthenticated);
        let mut c = HeaderMap::new();
        c.insert("cookie", "grus_session=s1".parse().unwrap());
        assert_eq!(credential(&c).unwrap(), Some(Credential::Session("s1")));
        c.insert("authorization", "Bearer grus_abc".parse().unwrap());
        assert_eq!(
            credential(&c).unwrap(),
            Some(Credential::ApiToken("grus_abc")),
            "a bearer token wins over the cookie"
        );
    }

    #[test]
    fn dev_names() {
        assert!(valid_dev_name("alice"));
        assert!(!valid_dev_name(""));
        assert!(!valid_dev_name("Alice:admin"));
    }
}
