//! Portal sessions, pending OIDC logins and the user upsert from identity-provider claims.
//!
//! Like API tokens, sessions and pending logins are looked up by the SHA-256 of their secret;
//! hashing is the caller's job (`auth::login`), so no secret reaches this module.

use chrono::{DateTime, Utc};
use sqlx::{FromRow, PgExecutor};

use super::{DbResult, User};

/// Profile claims of a verified ID token or access token. Absent claims keep the stored value:
/// access tokens usually carry no email or name, and must not erase what the login stored.
#[derive(Clone, Debug, Default)]
pub struct IdentityClaims<'a> {
    pub subject: &'a str,
    pub email: Option<&'a str>,
    pub display_name: Option<&'a str>,
    /// The configured platform-admin subject signed in: grant the flag (never revoked here).
    pub platform_admin: bool,
}

/// Whether `user` differs from what `claims` would store (absent claims change nothing). Bearer
/// JWTs arrive on every request: an unchanged user costs a read, not a write.
pub fn identity_changed(user: &User, c: &IdentityClaims<'_>) -> bool {
    let differs = |stored: &Option<String>, claim: Option<&str>| claim.is_some_and(|v| stored.as_deref() != Some(v));
    differs(&user.email, c.email)
        || differs(&user.display_name, c.display_name)
        || (c.platform_admin && !user.platform_admin)
}

/// The user with this subject, `None` when there is none yet.
pub async fn find_user_by_subject(db: impl PgExecutor<'_>, subject: &str) -> DbResult<Option<User>> {
    Ok(sqlx::query_as("SELECT * FROM users WHERE subject = $1").bind(subject).fetch_optional(db).await?)
}

/// A sign-in (every authenticated request presents its identity): the stored user when the
/// claims change nothing, which is one indexed read; otherwise [`upsert_identity`].
pub async fn sign_in(pool: &sqlx::PgPool, c: &IdentityClaims<'_>) -> DbResult<User> {
    match find_user_by_subject(pool, c.subject).await? {
        Some(user) if !identity_changed(&user, c) => Ok(user),
        _ => upsert_identity(pool, c).await,
    }
}

/// Creates the user on first sign-in, refreshes the claims it carries afterwards.
pub async fn upsert_identity(db: impl PgExecutor<'_>, c: &IdentityClaims<'_>) -> DbResult<User> {
    Ok(sqlx::query_as(
        "INSERT INTO users (subject, email, display_name, platform_admin) VALUES ($1, $2, $3, $4)
         ON CONFLICT (subject) DO UPDATE SET
             email = COALESCE(EXCLUDED.email, users.email),
             display_name = COALESCE(EXCLUDED.display_name, users.display_name),
             platform_admin = users.platform_admin OR EXCLUDED.platform_admin
         RETURNING *",
    )
    .bind(c.subject)
    .bind(c.email)
    .bind(c.display_name)
    .bind(c.platform_admin)
    .fetch_one(db)
    .await?)
}

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct Session {
    pub user_id: i64,
    pub csrf_token: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

pub async fn create_session(
    db: impl PgExecutor<'_>,
    id_hash: &[u8; 32],
    user_id: i64,
    csrf_token: &str,
    expires_at: DateTime<Utc>,
) -> DbResult<Session> {
    Ok(sqlx::query_as(
        "INSERT INTO sessions (id_hash, user_id, csrf_token, expires_at) VALUES ($1, $2, $3, $4)
         RETURNING user_id, csrf_token, created_at, expires_at",
    )
    .bind(&id_hash[..])
    .bind(user_id)
    .bind(csrf_token)
    .bind(expires_at)
    .fetch_one(db)
    .await?)
}

/// The live session with this id hash; expired sessions are as good as absent.
/// The user of a live session and the session's CSRF token, in one statement (a portal
/// request signs in with it).
pub async fn session_user(db: impl PgExecutor<'_>, id_hash: &[u8; 32]) -> DbResult<Option<(super::User, String)>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        user: super::User,
        session_csrf_token: String,
    }
    let row: Option<Row> = sqlx::query_as(
        "SELECT u.*, s.csrf_token AS session_csrf_token FROM sessions s JOIN users u ON u.id = s.user_id
         WHERE s.id_hash = $1 AND s.expires_at > now()",
    )
    .bind(&id_hash[..])
    .fetch_optional(db)
    .await?;
    Ok(row.map(|r| (r.user, r.session_csrf_token)))
}

pub async fn get_session(db: impl PgExecutor<'_>, id_hash: &[u8; 32]) -> DbResult<Option<Session>> {
    Ok(sqlx::query_as(
        "SELECT user_id, csrf_token, created_at, expires_at FROM sessions WHERE id_hash = $1 AND expires_at > now()",
    )
    .bind(&id_hash[..])
    .fetch_optional(db)
    .await?)
}

/// Deletes the session; `false` when there was none.
pub async fn delete_session(db: impl PgExecutor<'_>, id_hash: &[u8; 32]) -> DbResult<bool> {
    let done = sqlx::query("DELETE FROM sessions WHERE id_hash = $1").bind(&id_hash[..]).execute(db).await?;
    Ok(done.rows_affected() > 0)
}

/// Removes expired sessions and pending logins; returns how many rows went.
pub async fn sweep_expired(db: impl PgExecutor<'_> + Copy) -> DbResult<u64> {
    let a = sqlx::query("DELETE FROM sessions WHERE expires_at <= now()").execute(db).await?.rows_affected();
    let b = sqlx::query("DELETE FROM pending_logins WHERE expires_at <= now()").execute(db).await?.rows_affected();
    Ok(a + b)
}

#[derive(Clone, Debug, PartialEq, Eq, FromRow)]
pub struct PendingLogin {
    pub nonce: String,
    pub pkce_verifier: String,
    pub redirect_to: String,
}

pub async fn create_pending_login(
    db: impl PgExecutor<'_>,
    state_hash: &[u8; 32],
    login: &PendingLogin,
    expires_at: DateTime<Utc>,
) -> DbResult<()> {
    sqlx::query(
        "INSERT INTO pending_logins (state_hash, nonce, pkce_verifier, redirect_to, expires_at)
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&state_hash[..])
    .bind(&login.nonce)
    .bind(&login.pkce_verifier)
    .bind(&login.redirect_to)
    .bind(expires_at)
    .execute(db)
    .await?;
    Ok(())
}

/// Takes the pending login out (single use): `None` when unknown, used or expired.
pub async fn take_pending_login(db: impl PgExecutor<'_>, state_hash: &[u8; 32]) -> DbResult<Option<PendingLogin>> {
    Ok(sqlx::query_as(
        "DELETE FROM pending_logins WHERE state_hash = $1 AND expires_at > now()
         RETURNING nonce, pkce_verifier, redirect_to",
    )
    .bind(&state_hash[..])
    .fetch_optional(db)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_new_claims_change_a_user() {
        let user = User {
            id: 1,
            subject: "s".into(),
            email: Some("a@x".into()),
            display_name: None,
            platform_admin: false,
            created_at: Utc::now(),
        };
        let claims =
            |email, name, admin| IdentityClaims { subject: "s", email, display_name: name, platform_admin: admin };
        assert!(!identity_changed(&user, &claims(None, None, false)), "absent claims keep the stored values");
        assert!(!identity_changed(&user, &claims(Some("a@x"), None, false)));
        assert!(identity_changed(&user, &claims(Some("b@x"), None, false)));
        assert!(identity_changed(&user, &claims(None, Some("A"), false)));
        assert!(identity_changed(&user, &claims(None, None, true)), "becoming platform admin");
        let admin = User { platform_admin: true, ..user };
        assert!(!identity_changed(&admin, &claims(None, None, false)), "the flag is never revoked here");
    }
}
