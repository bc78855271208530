//! Personal API tokens: `createApiToken`, `revokeApiToken` and the query `apiTokens`.
//!
//! A token is `grus_` + 256 random bits (base64url); only its SHA-256 and its first characters
//! (to tell tokens apart in a listing) are stored, and the secret is returned once, by
//! `createApiToken`. Every token expires. A caller sees and revokes only its own tokens:
//! another user's token id is NOT_FOUND, like an id that does not exist.

use async_graphql::{Context, Enum, Object, SimpleObject, ID};
use chrono::{DateTime, Utc};

use super::auth::TOKEN_PREFIX;
use super::{caller, parse_id, pool};
use crate::auth::web::{hash_token, random_secret};
use crate::db::{self, NewApiToken};
use crate::domain::TokenScope;
use crate::error::{ApiError, ApiResult, FieldError};

/// Longest lifetime a token may be given.
pub const MAX_EXPIRES_IN_DAYS: i32 = 366;
/// Live (unrevoked, unexpired) tokens one user may hold.
pub const MAX_LIVE_TOKENS: usize = 100;
/// Characters of the secret kept for listings: `grus_` and 7 more.
const SHOWN_PREFIX: usize = 12;

/// A personal API token, without its secret.
#[derive(SimpleObject)]
#[graphql(name = "ApiToken")]
pub struct ApiTokenObj {
    pub id: ID,
    pub name: String,
    /// The secret's first characters.
    pub prefix: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    /// What the token may do (a token made before scopes existed may do both).
    pub scopes: Vec<TokenScopeName>,
}

/// `domain::TokenScope` in the API.
#[derive(Enum, Clone, Copy, Debug, PartialEq, Eq)]
#[graphql(name = "TokenScope", remote = "crate::domain::TokenScope")]
pub enum TokenScopeName {
    /// Queries and subscriptions.
    Read,
    /// Mutations.
    Write,
}

impl From<db::ApiToken> for ApiTokenObj {
    fn from(t: db::ApiToken) -> Self {
        ApiTokenObj {
            id: ID(t.id.to_string()),
            name: t.name,
            prefix: t.prefix,
            created_at: t.created_at,
            expires_at: t.expires_at,
            revoked_at: t.revoked_at,
            last_used_at: t.last_used_at,
            scopes: effective_scopes(&t.scopes),
        }
    }
}

/// A stored token's scopes as the API shows them: none stored means every one.
fn effective_scopes(stored: &[String]) -> Vec<TokenScopeName> {
    let parsed: Vec<TokenScope> = stored.iter().filter_map(|s| s.parse().ok()).collect();
    let scopes = if parsed.is_empty() { TokenScope::ALL.to_vec() } else { parsed };
    scopes.into_iter().map(TokenScopeName::from).collect()
}

/// A new token: the only time its secret is shown.
#[derive(SimpleObject)]
pub struct CreatedApiToken {
    /// Send as `Authorization: Bearer <secret>`. Not retrievable later.
    pub secret: String,
    pub id: ID,
    pub name: String,
    pub expires_at: DateTime<Utc>,
    pub token: ApiTokenObj,
}

/// The checked name and lifetime of a new token.
pub fn validate_new_token(name: &str, expires_in_days: i32) -> Result<(String, i32), Vec<FieldError>> {
    let mut errors = Vec::new();
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        errors.push(FieldError { field: "name".into(), message: "must have 1 to 100 characters".into() });
    } else if name.chars().any(char::is_control) {
        errors.push(FieldError { field: "name".into(), message: "must not contain control characters".into() });
    }
    if !(1..=MAX_EXPIRES_IN_DAYS).contains(&expires_in_days) {
        errors.push(FieldError {
            field: "expiresInDays".into(),
            message: format!("must be between 1 and {MAX_EXPIRES_IN_DAYS}"),
        });
    }
    if errors.is_empty() {
        Ok((name.to_owned(), expires_in_days))
    } else {
        Err(errors)
    }
}

#[derive(Default)]
pub struct TokenQuery;

#[Object]
impl TokenQuery {
    /// The caller's API tokens, revoked and expired ones included; never the secrets.
    async fn api_tokens(&self, ctx: &Context<'_>) -> ApiResult<Vec<ApiTokenObj>> {
        let user = &caller(ctx)?.user;
        Ok(db::list_api_tokens(pool(ctx)?, user.id).await?.into_iter().map(ApiTokenObj::from).collect())
    }
}

#[derive(Default)]
pub struct TokenMutation;

#[Object]
impl TokenMutation {
    /// Creates a personal API token for the caller; the secret is in the answer only.
    async fn create_api_token(
        &self,
        ctx: &Context<'_>,
        name: String,
        expires_in_days: i32,
        #[graphql(desc = "What the token may do; both when absent. A READ token's mutations are FORBIDDEN.")]
        scopes: Option<Vec<TokenScopeName>>,
    ) -> ApiResult<CreatedApiToken> {
        let user = &caller(ctx)?.user;
        let mut scopes: Vec<TokenScope> = scopes
            .unwrap_or_else(|| vec![TokenScopeName::Read, TokenScopeName::Write])
            .into_iter()
            .map(Into::into)
            .collect();
        scopes.sort_by_key(|s| s.as_str());
        scopes.dedup();
        if scopes.is_empty() {
            return Err(ApiError::field("scopes", "at least one scope (READ, WRITE)"));
        }
        let scope_names: Vec<String> = scopes.iter().map(|s| s.as_str().to_owned()).collect();
        let pool = pool(ctx)?;
        let (name, days) = validate_new_token(&name, expires_in_days).map_err(ApiError::Validation)?;
        let now = Utc::now();
        let live = db::list_api_tokens(pool, user.id)
            .await?
            .iter()
            .filter(|t| t.revoked_at.is_none() && t.expires_at.is_none_or(|e| e > now))
            .count();
        if live >= MAX_LIVE_TOKENS {
            return Err(ApiError::field("name", format!("at most {MAX_LIVE_TOKENS} live tokens; revoke some first")));
        }
        let secret = format!("{TOKEN_PREFIX}{}", random_secret());
        let expires_at = now + chrono::Duration::days(i64::from(days));
        let stored = db::create_api_token(
            pool,
            &NewApiToken {
                user_id: user.id,
                name: &name,
                hash: hash_token(&secret),
                prefix: &secret[..SHOWN_PREFIX],
                scopes: &scope_names,
                expires_at: Some(expires_at),
            },
        )
        .await?;
        tracing::info!(user = user.id, token = stored.id, "API token created");
        Ok(CreatedApiToken {
            secret,
            id: ID(stored.id.to_string()),
            name: stored.name.clone(),
            expires_at,
            token: stored.into(),
        })
    }

    /// Revokes one of the caller's tokens (revoking twice is fine). Another user's token is
    /// NOT_FOUND.
    async fn revoke_api_token(&self, ctx: &Context<'_>, id: ID) -> ApiResult<ApiTokenObj> {
        let user = &caller(ctx)?.user;
        let pool = pool(ctx)?;
        let token_id = parse_id(&id, "token")?;
        db::revoke_api_token(pool, user.id, token_id).await?;
        tracing::info!(user = user.id, token = token_id, "API token revoked");
        let token = db::list_api_tokens(pool, user.id)
            .await?
            .into_iter()
            .find(|t| t.id == token_id)
            .ok_or(ApiError::NotFound("token"))?;
        Ok(token.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_token_input() {
        assert_eq!(validate_new_token("  ci  ", 30).unwrap(), ("ci".to_owned(), 30));
        assert_eq!(validate_new_token("", 30).unwrap_err()[0].field, "name");
        assert_eq!(validate_new_token("x\u{7}", 30).unwrap_err()[0].field, "name");
        assert_eq!(validate_new_token(&"x".repeat(101), 30).unwrap_err()[0].field, "name");
        assert_eq!(validate_new_token("ci", 0).unwrap_err()[0].field, "expiresInDays");
        assert_eq!(validate_new_token("ci", MAX_EXPIRES_IN_DAYS + 1).unwrap_err()[0].field, "expiresInDays");
        assert_eq!(validate_new_token("", -1).unwrap_err().len(), 2);
    }
}
