//! Stored credentials: API tokens (hashed, scoped, expiring, revocable) and cluster agents.

use chrono::{Duration, Utc};
use grus_api::db::{self, DbError, NewApiToken};
use grus_testkit::seed::fixture;
use grus_testkit::TestDb;

#[tokio::test]
async fn api_tokens_authenticate_until_revoked_or_expired() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "tokens").await;
    let scopes = vec!["jobs:write".to_string()];
    let token = |hash: u8, expires_at| NewApiToken {
        user_id: f.user_id,
        name: "ci",
        hash: [hash; 32],
        prefix: "grus_abc",
        scopes: &scopes,
        expires_at,
    };
    let live = db::create_api_token(&t.pool, &token(1, Some(Utc::now() + Duration::days(1)))).await.unwrap();
    let last_used = || async { db::list_api_tokens(&t.pool, f.user_id).await.unwrap()[0].last_used_at };
    assert_eq!(last_used().await, None);
    let user = db::sign_in_with_api_token(&t.pool, &[1; 32]).await.unwrap().expect("valid token").user;
    assert_eq!(user.id, f.user_id);
    let first_use = last_used().await.expect("the use is recorded");
    // Within the resolution, a use is not written again (a read stays a read).
    db::sign_in_with_api_token(&t.pool, &[1; 32]).await.unwrap().expect("valid token");
    assert_eq!(last_used().await, Some(first_use));
    // A recorded use older than the resolution is renewed.
    sqlx::query("UPDATE api_tokens SET last_used_at = now() - interval '2 minutes' WHERE id = $1")
        .bind(live.id)
        .execute(&t.pool)
        .await
        .unwrap();
    db::sign_in_with_api_token(&t.pool, &[1; 32]).await.unwrap().expect("valid token");
    assert!(last_used().await.unwrap() > Utc::now() - Duration::seconds(db::TOKEN_USE_RESOLUTION_SECS));
    assert_eq!(db::sign_in_with_api_token(&t.pool, &[9; 32]).await.unwrap(), None, "unknown hash");

    let err = db::create_api_token(&t.pool, &token(1, None)).await.unwrap_err();
    assert!(matches!(err, DbError::Conflict { .. }), "same hash twice: {err:?}");

    db::revoke_api_token(&t.pool, f.user_id, live.id).await.unwrap();
    assert_eq!(db::sign_in_with_api_token(&t.pool, &[1; 32]).await.unwrap(), None, "revoked");
    let other = db::upsert_user(&t.pool, &db::UserProfile { subject: "other", ..Default::default() }).await.unwrap();
    assert!(matches!(db::revoke_api_token(&t.pool, other.id, live.id).await, Err(DbError::NotFound(_))));

    // Expired tokens: stored with a past expiry through SQL (the API refuses to create them).
    sqlx::query(
        "INSERT INTO api_tokens (user_id, token_hash, prefix, created_at, expires_at)
         VALUES ($1, $2, 'grus_old', now() - interval '2 days', now() - interval '1 day')",
    )
    .bind(f.user_id)
    .bind(&[2u8; 32][..])
    .execute(&t.pool)
    .await
    .unwrap();
    assert_eq!(db::sign_in_with_api_token(&t.pool, &[2; 32]).await.unwrap(), None, "expired");
    assert_eq!(db::list_api_tokens(&t.pool, f.user_id).await.unwrap().len(), 2);
}

#[tokio::test]
async fn clusters_register_and_heartbeat() {
    let t = TestDb::new().await;
    let labels = serde_json::json!({ "region": "eu" });
    let c = db::register_cluster(&t.pool, "eu-1", &labels, &[7; 32]).await.unwrap();
    assert_eq!(c.health, "unknown");
    assert_eq!(db::cluster_by_token_hash(&t.pool, &[7; 32]).await.unwrap().map(|c| c.id), Some("eu-1".into()));
    let err = db::register_cluster(&t.pool, "Bad_Id", &labels, &[8; 32]).await.unwrap_err();
    assert!(matches!(err, DbError::Validation { .. }), "{err:?}");

    let now = Utc::now();
    let cap = serde_json::json!({ "models": [] });
    db::record_heartbeat(&t.pool, "eu-1", "healthy", now, Some(&cap)).await.unwrap();
    // A late heartbeat does not move the clock back nor erase the capacity.
    db::record_heartbeat(&t.pool, "eu-1", "healthy", now - Duration::minutes(5), None).await.unwrap();
    let c = db::get_cluster(&t.pool, "eu-1").await.unwrap();
    assert_eq!(c.health, "healthy");
    assert_eq!(c.capacity, Some(cap));
    assert_eq!(c.last_heartbeat.map(|t| t.timestamp_micros()), Some(now.timestamp_micros()));
    let err = db::record_heartbeat(&t.pool, "eu-1", "on-fire", now, None).await.unwrap_err();
    assert!(matches!(err, DbError::Validation { .. }), "{err:?}");
    assert!(matches!(db::get_cluster(&t.pool, "nope").await, Err(DbError::NotFound(_))));
}
