//! Authentication: turns request headers into the [`Caller`] put in the GraphQL context.
//!
//! Credentials today: personal API tokens (`Authorization: Bearer grus_<secret>`, looked up by
//! their SHA-256) and, only in `--dev`, the `X-Grus-Dev-User: <name>` header that upserts the
//! user `dev:<name>`. Bearer JWTs from the OIDC issuer are the seam for the next task:
//! [`Credential::Jwt`] is recognized and refused until [`Authenticator`] gets a verifier.

use axum::http::HeaderMap;
use sha2::{Digest, Sha256};
use sqlx::PgPool;

use super::Caller;
use crate::config::AuthMode;
use crate::db::{self, UserProfile};
use crate::error::{ApiError, ApiResult};

/// Prefix of personal API tokens; it tells them apart from JWTs without parsing.
pub const TOKEN_PREFIX: &str = "grus_";
/// The dev identity header, honoured only with `--dev`.
pub const DEV_USER_HEADER: &str = "x-grus-dev-user";

/// The stored hash of an API token: SHA-256 of the whole token, prefix included. The tokens
/// are 256-bit random, so a fast unsalted hash is enough (no dictionary to attack).
pub fn hash_token(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// What the request presented.
#[derive(Debug, PartialEq, Eq)]
pub enum Credential<'a> {
    ApiToken(&'a str),
    Jwt(&'a str),
    DevUser(&'a str),
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
    Ok(None)
}

/// Checks credentials against the configured mode.
#[derive(Clone, Debug)]
pub struct Authenticator {
    mode: AuthMode,
}

impl Authenticator {
    pub fn new(mode: AuthMode) -> Self {
        Authenticator { mode }
    }

    /// The caller, `None` when anonymous; invalid credentials are UNAUTHENTICATED (never
    /// silently anonymous, so a typo in a token does not look like an empty account).
    pub async fn authenticate(&self, pool: &PgPool, headers: &HeaderMap) -> ApiResult<Option<Caller>> {
        let Some(cred) = credential(headers)? else { return Ok(None) };
        let user = match cred {
            Credential::ApiToken(token) => {
                let stored = db::use_api_token(pool, &hash_token(token)).await?.ok_or(ApiError::Unauthenticated)?;
                db::get_user(pool, stored.user_id).await?
            }
            // Seam for OIDC: verify issuer, audience, expiry and algorithm against the JWKS.
            Credential::Jwt(_) => return Err(ApiError::Unauthenticated),
            Credential::DevUser(name) => {
                if self.mode != AuthMode::Dev {
                    return Err(ApiError::Unauthenticated);
                }
                if !valid_dev_name(name) {
                    return Err(ApiError::Unauthenticated);
                }
                let subject = format!("dev:{name}");
                db::upsert_user(pool, &UserProfile { subject: &subject, email: None, display_name: Some(name) }).await?
            }
        };
        Ok(Some(Caller { user }))
    }
}

fn valid_dev_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.'))
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
    }

    #[test]
    fn dev_names() {
        assert!(valid_dev_name("alice"));
        assert!(!valid_dev_name(""));
        assert!(!valid_dev_name("Alice:admin"));
    }
}
