//! OIDC against a real provider (npm oidc-provider, testkit/oidc/provider.mjs): the portal
//! login (code + PKCE, state, nonce), sessions, CSRF, logout, and bearer JWTs with rotation.
//! The api runs as a real HTTP server on a free port; the "browser" follows every redirect.

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use grus_api::auth::{AuthMode, JwtError, LoginConfig, OidcConfig, OidcProvider, Secret};
use grus_api::error::ApiError;
use grus_api::graphql::auth::Authenticator;
use grus_testkit::api::{loopback_listener, Served, TestApi};
use grus_testkit::client::{code, graphql, send};
use grus_testkit::oidc::{Browser, Page, TestProvider, AUDIENCE, CLIENT_ID, CLIENT_SECRET};
use grus_testkit::TestDb;
use jsonwebtoken::{EncodingKey, Header};
use serde_json::{json, Value};

struct Api {
    base: String,
    provider: TestProvider,
    db: TestDb,
    _served: Served,
}

async fn start(platform_admin: Option<&str>, jwks_refetch_interval: Duration) -> Api {
    let db = TestDb::new().await;
    let listener = loopback_listener().await;
    let base = format!("http://{}", listener.local_addr().unwrap());
    let provider = TestProvider::start(&format!("{base}/auth/callback"), &format!("{base}/"));
    let mut oidc = OidcConfig::new(provider.issuer.clone(), AUDIENCE);
    oidc.login = Some(LoginConfig {
        client_id: CLIENT_ID.into(),
        client_secret: Some(Secret(CLIENT_SECRET.into())),
        public_url: base.clone(),
        redirect_url: format!("{base}/auth/callback"),
        scopes: vec!["email".into(), "profile".into()],
        session_ttl: Duration::from_secs(3600),
        secure_cookies: false,
    });
    oidc.platform_admin_subject = platform_admin.map(str::to_owned);
    oidc.jwks_refetch_interval = jwks_refetch_interval;
    let served = TestApi::new(&db.pool).auth(AuthMode::Oidc(oidc)).serve_on(listener);
    Api { base, provider, db, _served: served }
}

impl Api {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// /auth/login → provider (login as `subject`, consent) → the callback URL, not yet visited.
    async fn to_callback(&self, b: &mut Browser, subject: &str) -> String {
        let start = b.get(&self.url("/auth/login?redirect=/jobs%3Fx%3D1")).await;
        assert_eq!(start.status, 303, "{start:?}");
        let to_provider = start.location.clone().unwrap();
        assert!(to_provider.starts_with(&self.provider.issuer), "{to_provider}");
        assert!(to_provider.contains("code_challenge_method=S256"), "{to_provider}");
        assert!(to_provider.contains("nonce="), "{to_provider}");
        assert!(b.jar.contains_key("grus_login"));
        b.follow_until(&to_provider, subject, &self.url("/auth/callback")).await
    }

    async fn login(&self, b: &mut Browser, subject: &str) -> Page {
        let callback = self.to_callback(b, subject).await;
        b.get(&callback).await
    }

    async fn gql(&self, b: &mut Browser, query: &str, headers: &[(&str, &str)]) -> Value {
        let page = b.post(&self.url("/graphql"), headers, Some(json!({ "query": query }))).await;
        serde_json::from_str(&page.body).unwrap_or_else(|e| panic!("{e}: {page:?}"))
    }

    async fn csrf(&self, b: &mut Browser) -> String {
        let page = b.get(&self.url("/auth/session")).await;
        assert_eq!(page.status, 200, "{page:?}");
        let v: Value = serde_json::from_str(&page.body).unwrap();
        v["csrfToken"].as_str().unwrap().to_owned()
    }

    /// `me.subject` with `Authorization: Bearer <token>`, or the error code.
    async fn bearer_me(&self, token: &str) -> Result<String, String> {
        let auth = format!("Bearer {token}");
        let v = self.gql(&mut Browser::default(), "{ me { subject } }", &[("authorization", &auth)]).await;
        match v["data"]["me"]["subject"].as_str() {
            Some(s) => Ok(s.to_owned()),
            None => Err(code(&v)),
        }
    }
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

#[tokio::test]
async fn login_creates_a_session_and_me_works() {
    let api = start(Some("alice"), Duration::from_secs(30)).await;
    let mut b = Browser::default();
    let done = api.login(&mut b, "alice").await;
    assert_eq!(done.status, 303, "{done:?}");
    assert_eq!(done.location.as_deref(), Some(api.url("/jobs?x=1").as_str()), "lands where the login started");
    let cookie = done.set_cookies.iter().find(|c| c.starts_with("grus_session=")).expect("session cookie");
    for attr in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=3600"] {
        assert!(cookie.contains(attr), "{cookie} lacks {attr}");
    }
    assert!(!cookie.contains("Secure"), "http public URL: no Secure");
    assert!(!b.jar.contains_key("grus_login"), "the pending-login cookie is cleared");

    let csrf = api.csrf(&mut b).await;
    let v = api.gql(&mut b, "{ me { subject email displayName platformAdmin } }", &[("x-grus-csrf", &csrf)]).await;
    assert_eq!(v["data"]["me"]["subject"], "alice", "{v}");
    assert_eq!(v["data"]["me"]["email"], "alice@example.test");
    assert_eq!(v["data"]["me"]["displayName"], "Test alice");
    assert_eq!(v["data"]["me"]["platformAdmin"], true, "the configured subject is platform admin");

    // Only hashes are stored: the cookie value is nowhere in the table.
    let sid = b.jar["grus_session"].clone();
    let (rows, plain): (i64, i64) = sqlx::query_as(
        "SELECT count(*), count(*) FILTER (WHERE id_hash = convert_to($1, 'UTF8') OR csrf_token = $1) FROM sessions",
    )
    .bind(&sid)
    .fetch_one(&api.db.pool)
    .await
    .unwrap();
    assert_eq!((rows, plain), (1, 0));
    let pending: i64 = sqlx::query_scalar("SELECT count(*) FROM pending_logins").fetch_one(&api.db.pool).await.unwrap();
    assert_eq!(pending, 0, "the pending login is consumed");

    // Another subject is an ordinary user.
    let mut b2 = Browser::default();
    assert_eq!(api.login(&mut b2, "bob").await.status, 303);
    let csrf2 = api.csrf(&mut b2).await;
    let v = api.gql(&mut b2, "{ me { subject platformAdmin } }", &[("x-grus-csrf", &csrf2)]).await;
    assert_eq!(v["data"]["me"], json!({ "subject": "bob", "platformAdmin": false }), "{v}");
}

#[tokio::test]
async fn a_wrong_or_replayed_state_is_refused() {
    let api = start(None, Duration::from_secs(30)).await;
    let mut b = Browser::default();
    let callback = api.to_callback(&mut b, "alice").await;
    let mut url = url::Url::parse(&callback).unwrap();
    let state: String = url.query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned();
    let tampered: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| {
            let v = if k == "state" { format!("{v}x") } else { v.into_owned() };
            (k.into_owned(), v)
        })
        .collect();
    url.query_pairs_mut().clear().extend_pairs(tampered);
    let refused = b.get(url.as_str()).await;
    assert_eq!(refused.status, 400, "{refused:?}");
    assert!(refused.body.contains("state"), "{}", refused.body);
    assert!(!b.jar.contains_key("grus_session"));

    // The right state from another browser (no grus_login cookie) is refused too.
    let mut other = Browser::default();
    let page = other.get(&callback).await;
    assert_eq!(page.status, 400);
    assert!(!other.jar.contains_key("grus_session"));

    // The real one works once; replayed, it is unknown.
    b.jar.insert("grus_login".into(), state);
    let ok = b.get(&callback).await;
    assert_eq!(ok.status, 303, "{ok:?}");
    b.jar.insert(
        "grus_login".into(),
        url::Url::parse(&callback).unwrap().query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned(),
    );
    let replay = b.get(&callback).await;
    assert_eq!(replay.status, 400, "{replay:?}");
}

#[tokio::test]
async fn the_redirect_parameter_stays_on_site() {
    let api = start(None, Duration::from_secs(30)).await;
    let mut b = Browser::default();
    for bad in ["https://evil.example/", "//evil.example/x", "/%5Cevil.example"] {
        let page = b.get(&api.url(&format!("/auth/login?redirect={}", bad.replace('/', "%2F")))).await;
        // %5C decodes to a backslash: refused like the others.
        assert_eq!(page.status, 400, "{bad}: {page:?}");
    }
}

#[tokio::test]
async fn logout_ends_the_session() {
    let api = start(None, Duration::from_secs(30)).await;
    let mut b = Browser::default();
    api.login(&mut b, "alice").await;
    let sid = b.jar["grus_session"].clone();
    let csrf = api.csrf(&mut b).await;

    let out = b.post(&api.url("/auth/logout"), &[], None).await;
    assert_eq!(out.status, 303);
    let to = out.location.unwrap();
    assert!(to.starts_with(&format!("{}/session/end", api.provider.issuer)), "to the provider's end_session: {to}");
    assert!(out.set_cookies.iter().any(|c| c.starts_with("grus_session=;") && c.contains("Max-Age=0")));
    assert!(!b.jar.contains_key("grus_session"));

    // The old cookie, replayed, is dead.
    b.jar.insert("grus_session".into(), sid);
    assert_eq!(b.get(&api.url("/auth/session")).await.status, 401);
    let v = api.gql(&mut b, "{ me { subject } }", &[("x-grus-csrf", &csrf)]).await;
    assert_eq!(code(&v), "UNAUTHENTICATED", "{v}");
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM sessions").fetch_one(&api.db.pool).await.unwrap();
    assert_eq!(left, 0);
}

#[tokio::test]
async fn cookie_requests_need_the_csrf_header() {
    let api = start(None, Duration::from_secs(30)).await;
    let mut b = Browser::default();
    api.login(&mut b, "alice").await;
    let mutation = r#"mutation { createApiToken(name: "ci", expiresInDays: 7) { id } }"#;
    let v = api.gql(&mut b, mutation, &[]).await;
    assert_eq!(code(&v), "FORBIDDEN", "no header: {v}");
    let v = api.gql(&mut b, mutation, &[("x-grus-csrf", "not-the-token")]).await;
    assert_eq!(code(&v), "FORBIDDEN", "wrong header: {v}");
    let none: i64 = sqlx::query_scalar("SELECT count(*) FROM api_tokens").fetch_one(&api.db.pool).await.unwrap();
    assert_eq!(none, 0, "nothing was created");
    let csrf = api.csrf(&mut b).await;
    let v = api.gql(&mut b, mutation, &[("x-grus-csrf", &csrf)]).await;
    assert!(v["data"]["createApiToken"]["id"].is_string(), "{v}");
}

#[tokio::test]
async fn bearer_jwts_are_verified() {
    let api = start(None, Duration::from_secs(30)).await;
    let p = &api.provider;
    // A real access token from the provider.
    let token = p.client_credentials(AUDIENCE).await;
    assert_eq!(api.bearer_me(&token).await, Ok(CLIENT_ID.to_owned()), "client credentials: sub is the client");

    let other_audience = p.client_credentials("https://other.example").await;
    assert_eq!(api.bearer_me(&other_audience).await, Err("UNAUTHENTICATED".into()), "wrong audience");

    let claims =
        |iss: &str, aud: &str, exp: i64| json!({ "iss": iss, "aud": aud, "sub": "carol", "exp": exp, "iat": now() });
    let good = p.sign(claims(&p.issuer, AUDIENCE, now() + 300), json!({})).await;
    assert_eq!(api.bearer_me(&good).await, Ok("carol".into()), "a token signed by the provider's key");

    let wrong_issuer = p.sign(claims("https://evil.example", AUDIENCE, now() + 300), json!({})).await;
    assert_eq!(api.bearer_me(&wrong_issuer).await, Err("UNAUTHENTICATED".into()), "wrong issuer");

    let expired = p.sign(claims(&p.issuer, AUDIENCE, now() - 3600), json!({})).await;
    assert_eq!(api.bearer_me(&expired).await, Err("UNAUTHENTICATED".into()), "expired");

    let mut early = claims(&p.issuer, AUDIENCE, now() + 7200);
    early["nbf"] = json!(now() + 3600);
    let early = p.sign(early, json!({})).await;
    assert_eq!(api.bearer_me(&early).await, Err("UNAUTHENTICATED".into()), "not yet valid");

    let mut no_exp = claims(&p.issuer, AUDIENCE, 0);
    no_exp.as_object_mut().unwrap().remove("exp");
    let no_exp = p.sign(no_exp, json!({})).await;
    assert_eq!(api.bearer_me(&no_exp).await, Err("UNAUTHENTICATED".into()), "exp is required");

    // HS256 with a secret we chose, naming the provider's real kid: never accepted.
    let kid = p.active_kid().await;
    let mut header = Header::new(jsonwebtoken::Algorithm::HS256);
    header.kid = Some(kid);
    let hs = jsonwebtoken::encode(&header, &claims(&p.issuer, AUDIENCE, now() + 300), &EncodingKey::from_secret(b"s"))
        .unwrap();
    assert_eq!(api.bearer_me(&hs).await, Err("UNAUTHENTICATED".into()), "HS256");

    // alg none: the unsigned form of the good token.
    let parts: Vec<&str> = good.split('.').collect();
    use base64::Engine as _;
    let none_header = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#);
    let unsigned = format!("{none_header}.{}.", parts[1]);
    assert_eq!(api.bearer_me(&unsigned).await, Err("UNAUTHENTICATED".into()), "alg none");

    // A tampered payload does not verify.
    let forged_payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(json!({ "iss": p.issuer, "aud": AUDIENCE, "sub": "admin", "exp": now() + 300 }).to_string());
    let forged = format!("{}.{forged_payload}.{}", parts[0], parts[2]);
    assert_eq!(api.bearer_me(&forged).await, Err("UNAUTHENTICATED".into()), "bad signature");

    let users: Vec<String> =
        sqlx::query_scalar("SELECT subject FROM users ORDER BY subject").fetch_all(&api.db.pool).await.unwrap();
    assert_eq!(users, vec!["carol".to_owned(), CLIENT_ID.to_owned()], "users only from accepted tokens");
}

#[tokio::test]
async fn key_rotation_refetches_the_jwks() {
    let api = start(None, Duration::ZERO).await;
    let p = &api.provider;
    let before = p.client_credentials(AUDIENCE).await;
    assert!(api.bearer_me(&before).await.is_ok());
    let old_kid = p.active_kid().await;
    let new_kid = p.rotate().await;
    assert_ne!(old_kid, new_kid);
    let after = p.client_credentials(AUDIENCE).await;
    assert_eq!(jsonwebtoken::decode_header(&after).unwrap().kid.as_deref(), Some(new_kid.as_str()));
    assert!(api.bearer_me(&after).await.is_ok(), "a new key is fetched without a restart");
    assert!(api.bearer_me(&before).await.is_ok(), "the old key is still published, so still valid");

    // The login's ID token is signed with the new key too.
    let mut b = Browser::default();
    assert_eq!(api.login(&mut b, "dave").await.status, 303);
}

#[tokio::test]
async fn unknown_key_refetch_is_rate_limited() {
    let api = start(None, Duration::from_secs(3600)).await;
    let p = &api.provider;
    let before = p.client_credentials(AUDIENCE).await;
    assert!(api.bearer_me(&before).await.is_ok(), "first use fetches the JWKS");
    p.rotate().await;
    let after = p.client_credentials(AUDIENCE).await;
    // The interval since the last fetch has not passed: no refetch, so the new kid is unknown.
    assert_eq!(api.bearer_me(&after).await, Err("UNAUTHENTICATED".into()));
    assert!(api.bearer_me(&before).await.is_ok(), "cached keys keep working");
}

#[tokio::test]
async fn dev_identity_is_refused_in_oidc_mode() {
    let api = start(None, Duration::from_secs(30)).await;
    let v = api.gql(&mut Browser::default(), "{ me { subject } }", &[("x-grus-dev-user", "alice")]).await;
    assert_eq!(code(&v), "UNAUTHENTICATED", "{v}");
    let page = Browser::default().get(&api.url("/auth/session")).await;
    assert_eq!(page.status, 401);
}

#[tokio::test]
async fn id_tokens_need_the_client_audience_and_the_login_nonce() {
    let p = TestProvider::start("http://127.0.0.1:1/auth/callback", "http://127.0.0.1:1/");
    let verifier = OidcProvider::new(OidcConfig::new(p.issuer.clone(), AUDIENCE));
    let id_token = |nonce: Option<&str>| {
        let mut c = json!({ "iss": p.issuer, "aud": CLIENT_ID, "sub": "erin", "exp": now() + 300 });
        if let Some(n) = nonce {
            c["nonce"] = json!(n);
        }
        c
    };
    let t = p.sign(id_token(Some("n1")), json!({})).await;
    assert_eq!(verifier.verify(&t, CLIENT_ID, Some("n1")).await.unwrap().sub, "erin");
    assert!(matches!(verifier.verify(&t, CLIENT_ID, Some("n2")).await, Err(JwtError::NonceMismatch)));
    let without = p.sign(id_token(None), json!({})).await;
    assert!(matches!(verifier.verify(&without, CLIENT_ID, Some("n1")).await, Err(JwtError::NonceMismatch)));
    // An ID token (audience: the client) is no bearer token for the API's audience.
    assert!(matches!(verifier.verify_bearer(&t).await, Err(JwtError::Rejected(_))));
}

#[tokio::test]
async fn an_unreachable_provider_is_our_error_not_the_callers() {
    let db = TestDb::new().await;
    // Port 9 (discard) on loopback: nothing answers.
    let auth = Authenticator::new(AuthMode::Oidc(OidcConfig::new("http://127.0.0.1:9", AUDIENCE)));
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    let token = format!("{}.{}.c2ln", b64(r#"{"alg":"RS256","kid":"k1"}"#), b64(r#"{"sub":"x"}"#));
    let mut headers = axum::http::HeaderMap::new();
    headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
    assert_eq!(auth.identify(&db.pool, &headers).await.unwrap_err(), ApiError::Internal);
    // A token refused before any key is needed stays the caller's problem.
    let hs = format!("{}.{}.c2ln", b64(r#"{"alg":"HS256"}"#), b64(r#"{"sub":"x"}"#));
    headers.insert("authorization", format!("Bearer {hs}").parse().unwrap());
    assert_eq!(auth.identify(&db.pool, &headers).await.unwrap_err(), ApiError::Unauthenticated);
}

#[tokio::test]
async fn without_a_client_id_there_is_no_portal_login() {
    let db = TestDb::new().await;
    for mode in [AuthMode::Dev, AuthMode::Oidc(OidcConfig::new("http://127.0.0.1:9", AUDIENCE))] {
        let app = TestApi::new(&db.pool).auth(mode).router();
        let resp = send(&app, Request::get("/auth/login").body(Body::empty()).unwrap()).await;
        assert_eq!(resp.status, 404);
        // The portal's probe on every page load: an answer, not a 404 in the browser's console.
        let resp = send(&app, Request::get("/auth/session").body(Body::empty()).unwrap()).await;
        assert_eq!(resp.status, 200);
        assert_eq!(serde_json::from_slice::<Value>(&resp.body).unwrap(), json!({ "portalLogin": false }));
        // A session cookie that names no session is refused, not treated as anonymous.
        let body = json!({ "query": "{ me { id } }" }).to_string();
        let (_, v) = graphql(&app, &[("cookie", "grus_session=bogus")], body).await;
        assert_eq!(code(&v), "UNAUTHENTICATED", "{v}");
    }
}
