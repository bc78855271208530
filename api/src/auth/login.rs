//! Portal login: authorization code + PKCE (S256) with state and nonce, server-side sessions.
//!
//! - GET /auth/login[?redirect=/path]: stores a `pending_logins` row keyed by the SHA-256 of a
//!   random `state` (with nonce, PKCE verifier and where to land), puts `state` in the
//!   short-lived `grus_login` cookie (Path=/auth) and redirects to the provider.
//! - GET /auth/callback: accepts only when the query's `state` equals the cookie's (a callback
//!   URL replayed into another browser does nothing) and deletes the row (each login completes
//!   once); exchanges the code with the PKCE verifier, verifies the ID token (issuer, audience =
//!   client id, nonce, signature via the JWKS), upserts the user, creates a `sessions` row
//!   keyed by the SHA-256 of the random `grus_session` cookie.
//! - GET|POST /auth/logout: deletes the session, clears the cookie, redirects to the provider's
//!   end_session endpoint when it has one (with `post_logout_redirect_uri` = public URL + `/`,
//!   which must be registered there), else to `/`.
//! - GET /auth/session: the signed-in user and the CSRF token the portal sends back in
//!   `X-Grus-CSRF` (checked in `http.rs`).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use chrono::Utc;
use openidconnect::core::{CoreAuthenticationFlow, CoreClient};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointMaybeSet, EndpointNotSet, EndpointSet, Nonce,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope, TokenResponse as _,
};
use serde::Deserialize;
use sqlx::PgPool;

use super::config::LoginConfig;
use super::provider::{Metadata, OidcProvider};
use super::web::{self, hash_token, CookieSpec, LOGIN_COOKIE, SESSION_COOKIE};
use crate::db::{self, PendingLogin};

/// How long a started login may take at the provider.
const LOGIN_TTL_S: u64 = 600;

/// What the login routes use of the server's state (extracted from it with axum's `FromRef`).
#[derive(Clone)]
pub struct LoginState {
    pub pool: PgPool,
    /// The OIDC issuer, in OIDC mode; without it (or without a login client) the routes answer 404.
    pub provider: Option<Arc<OidcProvider>>,
}

/// The routes, for any server state the [`LoginState`] can be extracted from.
pub fn routes<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    LoginState: axum::extract::FromRef<S>,
{
    Router::new()
        .route("/auth/login", get(login))
        .route("/auth/callback", get(callback))
        .route("/auth/logout", get(logout).post(logout))
        .route("/auth/session", get(session))
}

type Client =
    CoreClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointMaybeSet, EndpointMaybeSet>;

fn setup(state: &LoginState) -> Option<(&Arc<OidcProvider>, &LoginConfig)> {
    let provider = state.provider.as_ref()?;
    Some((provider, provider.config().login.as_ref()?))
}

fn client(metadata: &Metadata, login: &LoginConfig) -> Result<Client, openidconnect::url::ParseError> {
    let redirect = RedirectUrl::new(login.redirect_url.clone())?;
    Ok(CoreClient::from_provider_metadata(
        metadata.clone(),
        ClientId::new(login.client_id.clone()),
        login.client_secret.as_ref().map(|s| ClientSecret::new(s.0.clone())),
    )
    .set_redirect_uri(redirect))
}

fn text(status: StatusCode, message: impl Into<String>) -> Response {
    (status, [(header::CACHE_CONTROL, "no-store")], message.into()).into_response()
}

fn internal(detail: &dyn std::fmt::Debug) -> Response {
    tracing::error!(error = ?detail, "auth route failed");
    text(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
}

fn not_configured() -> Response {
    text(StatusCode::NOT_FOUND, "portal login is not configured on this server (--oidc-client-id)")
}

fn unavailable(e: &dyn std::fmt::Display) -> Response {
    tracing::warn!(error = %e, "OIDC provider unavailable");
    text(StatusCode::BAD_GATEWAY, "the identity provider is unavailable; try again later")
}

/// 303 to `location`, setting `cookies`.
fn see_other(location: &str, cookies: &[String]) -> Response {
    let mut resp = StatusCode::SEE_OTHER.into_response();
    let h = resp.headers_mut();
    match HeaderValue::from_str(location) {
        Ok(v) => h.insert(header::LOCATION, v),
        Err(e) => return internal(&e),
    };
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    for c in cookies {
        match HeaderValue::from_str(c) {
            Ok(v) => h.append(header::SET_COOKIE, v),
            Err(e) => return internal(&e),
        };
    }
    resp
}

#[derive(Deserialize)]
struct LoginParams {
    redirect: Option<String>,
}

async fn login(State(state): State<LoginState>, Query(q): Query<LoginParams>) -> Response {
    let Some((provider, login)) = setup(&state) else { return not_configured() };
    let redirect_to = match web::safe_redirect(q.redirect.as_deref()) {
        Ok(r) => r,
        Err(msg) => return text(StatusCode::BAD_REQUEST, msg),
    };
    let metadata = match provider.metadata().await {
        Ok(m) => m,
        Err(e) => return unavailable(&e),
    };
    let client = match client(&metadata, login) {
        Ok(c) => c,
        Err(e) => return internal(&e),
    };
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let oauth_state = web::random_secret();
    let nonce = web::random_secret();
    let (s, n) = (oauth_state.clone(), nonce.clone());
    let mut request = client
        .authorize_url(CoreAuthenticationFlow::AuthorizationCode, move || CsrfToken::new(s), move || Nonce::new(n))
        .set_pkce_challenge(challenge);
    for scope in &login.scopes {
        request = request.add_scope(Scope::new(scope.clone()));
    }
    let (url, _, _) = request.url();
    let pending = PendingLogin { nonce, pkce_verifier: verifier.secret().clone(), redirect_to };
    let expires = Utc::now() + chrono::Duration::seconds(LOGIN_TTL_S as i64);
    if let Err(e) = db::create_pending_login(&state.pool, &hash_token(&oauth_state), &pending, expires).await {
        return internal(&e);
    }
    // Housekeeping rides on logins: abandoned logins and old sessions go.
    if let Err(e) = db::sweep_expired(&state.pool).await {
        tracing::warn!(error = ?e, "sweeping expired sessions failed");
    }
    let cookie = web::set_cookie(
        LOGIN_COOKIE,
        &oauth_state,
        CookieSpec { path: "/auth", max_age: LOGIN_TTL_S, secure: login.secure_cookies },
    );
    see_other(url.as_str(), &[cookie])
}

#[derive(Deserialize)]
struct CallbackParams {
    code: Option<String>,
    state: Option<String>,
    iss: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

async fn callback(State(state): State<LoginState>, headers: HeaderMap, Query(q): Query<CallbackParams>) -> Response {
    let Some((provider, login)) = setup(&state) else { return not_configured() };
    let clear_login =
        web::set_cookie(LOGIN_COOKIE, "", CookieSpec { path: "/auth", max_age: 0, secure: login.secure_cookies });
    let refuse = |status: StatusCode, msg: String| {
        let mut resp = text(status, msg);
        if let Ok(v) = HeaderValue::from_str(&clear_login) {
            resp.headers_mut().append(header::SET_COOKIE, v);
        }
        resp
    };
    if let Some(error) = q.error {
        let detail = q.error_description.map(|d| format!(" ({d})")).unwrap_or_default();
        return refuse(StatusCode::BAD_REQUEST, format!("the identity provider refused the login: {error}{detail}"));
    }
    let (Some(code), Some(oauth_state)) = (q.code, q.state) else {
        return refuse(StatusCode::BAD_REQUEST, "the callback needs code and state".into());
    };
    if !web::cookie(&headers, LOGIN_COOKIE).is_some_and(|c| web::secrets_equal(c, &oauth_state)) {
        return refuse(
            StatusCode::BAD_REQUEST,
            "the login state does not match this browser's; start again at /auth/login".into(),
        );
    }
    // RFC 9207: a provider that names itself must be ours (mix-up attacks).
    if q.iss.as_deref().is_some_and(|iss| iss != provider.config().issuer) {
        return refuse(StatusCode::BAD_REQUEST, "the callback comes from another issuer".into());
    }
    let pending = match db::take_pending_login(&state.pool, &hash_token(&oauth_state)).await {
        Ok(Some(p)) => p,
        Ok(None) => {
            return refuse(StatusCode::BAD_REQUEST, "unknown, used or expired login; start again at /auth/login".into())
        }
        Err(e) => return internal(&e),
    };
    let metadata = match provider.metadata().await {
        Ok(m) => m,
        Err(e) => return unavailable(&e),
    };
    let client = match client(&metadata, login) {
        Ok(c) => c,
        Err(e) => return internal(&e),
    };
    let exchange = match client.exchange_code(AuthorizationCode::new(code)) {
        Ok(r) => r,
        Err(e) => return unavailable(&e),
    };
    let tokens = match exchange
        .set_pkce_verifier(PkceCodeVerifier::new(pending.pkce_verifier))
        .request_async(provider.http())
        .await
    {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "code exchange failed");
            return refuse(
                StatusCode::BAD_GATEWAY,
                "the identity provider did not accept the authorization code".into(),
            );
        }
    };
    let Some(id_token) = tokens.id_token() else {
        return refuse(StatusCode::BAD_GATEWAY, "the identity provider returned no ID token".into());
    };
    let claims = match provider.verify(&id_token.to_string(), &login.client_id, Some(&pending.nonce)).await {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "ID token refused");
            return refuse(StatusCode::UNAUTHORIZED, "the ID token did not verify".into());
        }
    };
    let user = match provider.upsert_user(&state.pool, &claims).await {
        Ok(u) => u,
        Err(e) => return internal(&e),
    };
    let session_id = web::random_secret();
    let csrf = web::random_secret();
    let expires = Utc::now() + chrono::Duration::from_std(login.session_ttl).unwrap_or(chrono::Duration::hours(12));
    if let Err(e) = db::create_session(&state.pool, &hash_token(&session_id), user.id, &csrf, expires).await {
        return internal(&e);
    }
    tracing::info!(user = user.id, subject = %user.subject, "signed in");
    let session_cookie = web::set_cookie(
        SESSION_COOKIE,
        &session_id,
        CookieSpec { path: "/", max_age: login.session_ttl.as_secs(), secure: login.secure_cookies },
    );
    see_other(&pending.redirect_to, &[session_cookie, clear_login])
}

async fn logout(State(state): State<LoginState>, headers: HeaderMap) -> Response {
    if let Some(id) = web::cookie(&headers, SESSION_COOKIE) {
        if let Err(e) = db::delete_session(&state.pool, &hash_token(id)).await {
            return internal(&e);
        }
    }
    let setup = setup(&state);
    let secure = setup.is_some_and(|(_, l)| l.secure_cookies);
    let clear = web::set_cookie(SESSION_COOKIE, "", CookieSpec { path: "/", max_age: 0, secure });
    let mut target = "/".to_owned();
    if let Some((provider, login)) = setup {
        // The local session is gone either way; a provider that is down only skips its logout.
        if let Ok(m) = provider.metadata().await {
            if let Some(end) = &m.additional_metadata().end_session_endpoint {
                let mut url = end.url().clone();
                url.query_pairs_mut()
                    .append_pair("client_id", &login.client_id)
                    .append_pair("post_logout_redirect_uri", &format!("{}/", login.public_url));
                target = url.to_string();
            }
        }
    }
    see_other(&target, &[clear])
}

async fn session(State(state): State<LoginState>, headers: HeaderMap) -> Response {
    let unauthenticated = || {
        (
            StatusCode::UNAUTHORIZED,
            [(header::CACHE_CONTROL, "no-store")],
            Json(serde_json::json!({ "error": "not signed in" })),
        )
            .into_response()
    };
    // Without a portal login (--dev, or OIDC for bearer tokens only) there are no sessions: the
    // portal reads `portalLogin: false` as "use the dev login", where 401 would send it to
    // /auth/login. A 200, not a 404: the probe runs on every page load and is not an error.
    if setup(&state).is_none() {
        return (
            StatusCode::OK,
            [(header::CACHE_CONTROL, "no-store")],
            Json(serde_json::json!({ "portalLogin": false })),
        )
            .into_response();
    }
    let Some(id) = web::cookie(&headers, SESSION_COOKIE) else { return unauthenticated() };
    let session = match db::get_session(&state.pool, &hash_token(id)).await {
        Ok(Some(s)) => s,
        Ok(None) => return unauthenticated(),
        Err(e) => return internal(&e),
    };
    let user = match db::get_user(&state.pool, session.user_id).await {
        Ok(u) => u,
        Err(e) => return internal(&e),
    };
    let body = serde_json::json!({
        "user": {
            "id": user.id.to_string(),
            "subject": user.subject,
            "email": user.email,
            "displayName": user.display_name,
            "platformAdmin": user.platform_admin,
        },
        "csrfToken": session.csrf_token,
        "expiresAt": session.expires_at,
    });
    ([(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}
