//! Personal API tokens through the router (no network): create → use → revoke, expiry,
//! ownership, validation, and that only the hash is stored.

use axum::Router;
use grus_api::auth::web::hash_token;
use grus_api::auth::{AuthMode, OidcConfig};
use grus_testkit::api::TestApi;
use grus_testkit::client::{bearer, code, gql, request};
use grus_testkit::TestDb;
use serde_json::json;

fn app(pool: sqlx::PgPool, auth: AuthMode) -> Router {
    TestApi::new(&pool).auth(auth).router()
}

const CREATE: &str = "mutation($name: String!, $days: Int!) {
    createApiToken(name: $name, expiresInDays: $days) { secret id name expiresAt token { prefix revokedAt } }
}";
const REVOKE: &str = "mutation($id: ID!) { revokeApiToken(id: $id) { id revokedAt } }";

async fn create(app: &Router, user: &str, name: &str) -> (String, String) {
    let v = gql(app, user, CREATE, json!({ "name": name, "days": 30 })).await;
    let t = &v["data"]["createApiToken"];
    (t["secret"].as_str().unwrap_or_else(|| panic!("{v}")).to_owned(), t["id"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn create_use_revoke() {
    let db = TestDb::new().await;
    let app = app(db.pool.clone(), AuthMode::Dev);
    let v = gql(&app, "alice", CREATE, json!({ "name": " laptop ", "days": 30 })).await;
    let t = &v["data"]["createApiToken"];
    let secret = t["secret"].as_str().unwrap_or_else(|| panic!("{v}")).to_owned();
    assert!(secret.starts_with("grus_") && secret.len() == 48, "grus_ + 256 bits base64url: {secret}");
    assert_eq!(t["name"], "laptop");
    assert_eq!(t["token"]["prefix"], &secret[..12]);
    let expires = chrono::DateTime::parse_from_rfc3339(t["expiresAt"].as_str().unwrap()).unwrap();
    let days = (expires.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_hours();
    assert!((29 * 24..=30 * 24).contains(&days), "expires in 30 days: {days}h");

    // Only the hash and the prefix are stored.
    let (hash, prefix): (Vec<u8>, String) =
        sqlx::query_as("SELECT token_hash, prefix FROM api_tokens").fetch_one(&db.pool).await.unwrap();
    assert_eq!(hash, hash_token(&secret).to_vec());
    assert_eq!(prefix, &secret[..12]);

    let v = bearer(&app, &secret, "{ me { subject } apiTokens { id name lastUsedAt revokedAt } }", json!({})).await;
    assert_eq!(v["data"]["me"]["subject"], "dev:alice", "{v}");
    assert_eq!(v["data"]["apiTokens"][0]["name"], "laptop");
    assert!(v["data"]["apiTokens"][0]["lastUsedAt"].is_string(), "use is recorded");
    // The listing type has no secret at all.
    let v = bearer(&app, &secret, "{ apiTokens { secret } }", json!({})).await;
    assert!(v["errors"][0]["message"].as_str().unwrap().contains("secret"), "{v}");

    let id = t["id"].as_str().unwrap();
    let v =
        bearer(&app, &secret, &format!(r#"mutation {{ revokeApiToken(id: "{id}") {{ id revokedAt }} }}"#), json!({}))
            .await;
    assert!(v["data"]["revokeApiToken"]["revokedAt"].is_string(), "{v}");
    let v = bearer(&app, &secret, "{ me { subject } }", json!({})).await;
    assert_eq!(code(&v), "UNAUTHENTICATED", "revoked: {v}");
    let v = gql(&app, "alice", "{ apiTokens { revokedAt } }", json!({})).await;
    assert!(v["data"]["apiTokens"][0]["revokedAt"].is_string(), "still listed, as revoked: {v}");
}

#[tokio::test]
async fn expired_tokens_are_refused() {
    let db = TestDb::new().await;
    let app = app(db.pool.clone(), AuthMode::Dev);
    let (secret, id) = create(&app, "alice", "ci").await;
    assert_eq!(code(&bearer(&app, &secret, "{ me { id } }", json!({})).await), "OK");
    // Time passes: the token was made 40 days ago for 30 days.
    sqlx::query(
        "UPDATE api_tokens SET created_at = now() - interval '40 days', expires_at = now() - interval '10 days'
         WHERE id = $1",
    )
    .bind(id.parse::<i64>().unwrap())
    .execute(&db.pool)
    .await
    .unwrap();
    assert_eq!(code(&bearer(&app, &secret, "{ me { id } }", json!({})).await), "UNAUTHENTICATED");
    // A token that never existed, and a garbled one.
    assert_eq!(code(&bearer(&app, &format!("{secret}x"), "{ me { id } }", json!({})).await), "UNAUTHENTICATED");
    assert_eq!(code(&bearer(&app, "grus_", "{ me { id } }", json!({})).await), "UNAUTHENTICATED");
}

#[tokio::test]
async fn only_the_owner_sees_and_revokes() {
    let db = TestDb::new().await;
    let app = app(db.pool.clone(), AuthMode::Dev);
    let (secret, id) = create(&app, "alice", "ci").await;
    create(&app, "bob", "bob's").await;

    let v = gql(&app, "bob", REVOKE, json!({ "id": id })).await;
    assert_eq!(code(&v), "NOT_FOUND", "{v}");
    let v = gql(&app, "bob", REVOKE, json!({ "id": "not-a-number" })).await;
    assert_eq!(code(&v), "NOT_FOUND", "{v}");
    let v = gql(&app, "bob", "{ apiTokens { name } }", json!({})).await;
    assert_eq!(v["data"]["apiTokens"], json!([{ "name": "bob's" }]), "{v}");
    assert_eq!(code(&bearer(&app, &secret, "{ me { id } }", json!({})).await), "OK", "alice's token still works");

    // Revoking twice is fine for the owner.
    for _ in 0..2 {
        let v = gql(&app, "alice", REVOKE, json!({ "id": id })).await;
        assert_eq!(code(&v), "OK", "{v}");
    }
    let v = request(&app, &[], "{ apiTokens { id } }", json!({})).await;
    assert_eq!(code(&v), "UNAUTHENTICATED", "anonymous: {v}");
}

#[tokio::test]
async fn bad_input_is_a_validation_error() {
    let db = TestDb::new().await;
    let app = app(db.pool.clone(), AuthMode::Dev);
    for (name, days, field) in [("", 30, "name"), ("ci", 0, "expiresInDays"), ("ci", 367, "expiresInDays")] {
        let v = gql(&app, "alice", CREATE, json!({ "name": name, "days": days })).await;
        assert_eq!(code(&v), "VALIDATION", "{v}");
        assert_eq!(v["errors"][0]["extensions"]["fields"][0]["field"], field, "{v}");
    }
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM api_tokens").fetch_one(&db.pool).await.unwrap();
    assert_eq!(n, 0);
}

#[tokio::test]
async fn oidc_mode_accepts_api_tokens_without_reaching_the_provider() {
    let db = TestDb::new().await;
    let dev = app(db.pool.clone(), AuthMode::Dev);
    let (secret, _) = create(&dev, "alice", "ci").await;
    // Port 9 (discard) on loopback: nothing answers there, and API tokens must not need it.
    let prod = app(db.pool.clone(), AuthMode::Oidc(OidcConfig::new("http://127.0.0.1:9", "grus")));
    let v = bearer(&prod, &secret, "{ me { subject } }", json!({})).await;
    assert_eq!(v["data"]["me"]["subject"], "dev:alice", "{v}");
    let v = bearer(&prod, &format!("{secret}x"), "{ me { subject } }", json!({})).await;
    assert_eq!(code(&v), "UNAUTHENTICATED");
}

/// Scopes were stored and never enforced: a token meant for reading could submit and cancel.
#[tokio::test]
async fn a_read_only_token_can_read_but_not_write() {
    let db = TestDb::new().await;
    let app = app(db.pool.clone(), AuthMode::Dev);
    let scoped = "mutation($s: [TokenScope!]) { createApiToken(name: \"ro\", expiresInDays: 7, scopes: $s) {
        secret token { scopes } } }";
    let v = gql(&app, "alice", scoped, json!({ "s": ["READ"] })).await;
    let reader = v["data"]["createApiToken"]["secret"].as_str().unwrap_or_else(|| panic!("{v}")).to_owned();
    assert_eq!(v["data"]["createApiToken"]["token"]["scopes"], json!(["READ"]));
    let v = bearer(&app, &reader, "{ me { subject } }", json!({})).await;
    assert_eq!(v["data"]["me"]["subject"], "dev:alice", "{v}");
    let v = bearer(&app, &reader, CREATE, json!({ "name": "escalate", "days": 1 })).await;
    assert_eq!(code(&v), "FORBIDDEN", "{v}");

    let v = gql(&app, "alice", scoped, json!({ "s": ["WRITE"] })).await;
    let writer = v["data"]["createApiToken"]["secret"].as_str().unwrap().to_owned();
    assert_eq!(code(&bearer(&app, &writer, "{ me { subject } }", json!({})).await), "FORBIDDEN");
    assert_eq!(code(&bearer(&app, &writer, CREATE, json!({ "name": "w", "days": 1 })).await), "OK");

    // Without scopes: both (and tokens stored before scopes existed show both).
    let (full, _) = create(&app, "alice", "full").await;
    let v = bearer(&app, &full, "{ apiTokens { name scopes } }", json!({})).await;
    let full_row = v["data"]["apiTokens"].as_array().unwrap().iter().find(|t| t["name"] == "full").cloned();
    assert_eq!(full_row.unwrap()["scopes"], json!(["READ", "WRITE"]), "{v}");
    let v = gql(&app, "alice", scoped, json!({ "s": [] })).await;
    assert_eq!(code(&v), "VALIDATION", "{v}");
}
