//! Agents' own Redis credentials against a private `redis-server` with ACLs: the token
//! exchange, what the issued user may touch (its cluster's keys, an agent's commands, nothing
//! of another cluster's), a second exchange replacing the password, and rotation cutting the
//! agent off.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use grus_api::agent_access::AgentCredentials;
use grus_api::http::router;
use grus_api::ingest::health::{HealthConfig, HealthMonitor};
use grus_api::ingest::IngestMetrics;
use grus_protocol::keys;
use grus_testkit::api::TestApi;
use grus_testkit::client::{gql, send};
use grus_testkit::redis_server::RedisServer;
use grus_testkit::seed;
use grus_testkit::TestDb;
use serde_json::json;

async fn exchange(app: &axum::Router, token: &str) -> (StatusCode, Option<AgentCredentials>) {
    let req = Request::post("/api/agent/credentials").header("authorization", format!("Bearer {token}"));
    let answer = send(app, req.body(Body::empty()).unwrap()).await;
    (answer.status, serde_json::from_slice(&answer.body).ok())
}

/// A connection as `c`'s user, or the error Redis gave.
async fn connect_as(
    redis: &RedisServer,
    c: &AgentCredentials,
) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
    let mut info: redis::ConnectionInfo = redis.url().as_str().parse().unwrap();
    info.redis.username = Some(c.username.clone());
    info.redis.password = Some(c.password.clone());
    redis::Client::open(info)?.get_multiplexed_async_connection().await
}

#[tokio::test]
async fn an_agent_gets_its_own_redis_user_limited_to_its_cluster_and_loses_it_on_rotation() {
    let t = TestDb::new().await;
    let redis = RedisServer::start_temporary();
    seed::dev_user(&t.pool, "root").await;
    let east_token = "east-registration-token-0123456789abcdef";
    seed::cluster_with_token(&t.pool, "east", east_token).await;
    seed::cluster_with_token(&t.pool, "west", "west-registration-token-0123456789abcdef").await;
    let api = TestApi::new(&t.pool).dev_platform_admin("dev:root");
    let mut state = api.state();
    state.redis = Some(redis::Client::open(redis.url()).unwrap());
    let app = router(state, 1 << 20);

    assert_eq!(exchange(&app, "not-a-token").await.0, StatusCode::UNAUTHORIZED);
    let (status, creds) = exchange(&app, east_token).await;
    assert_eq!(status, StatusCode::OK);
    let creds = creds.expect("credentials");
    assert_eq!((creds.cluster.as_str(), creds.username.as_str()), ("east", "grus-agent-east"));

    // What an agent does, on its own keys.
    let mut conn = connect_as(&redis, &creds).await.expect("the issued user signs in");
    let _: () = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(keys::command_stream("east"))
        .arg(keys::AGENT_GROUP)
        .arg("0")
        .arg("MKSTREAM")
        .query_async(&mut conn)
        .await
        .expect("create its command group");
    let _: String = redis::cmd("XADD")
        .arg(keys::event_stream("east"))
        .arg("*")
        .arg("m")
        .arg("{}")
        .query_async(&mut conn)
        .await
        .expect("append an event");
    let _: () = redis::cmd("SET")
        .arg(keys::heartbeat_key("east"))
        .arg("{}")
        .arg("EX")
        .arg(15)
        .query_async(&mut conn)
        .await
        .expect("beat");
    // Nothing of another cluster's, nothing beyond an agent's commands.
    for cmd in [
        redis::cmd("XADD").arg(keys::command_stream("west")).arg("*").arg("m").arg("{}").clone(),
        redis::cmd("SET").arg(keys::heartbeat_key("west")).arg("x").clone(),
        redis::cmd("GET").arg(keys::heartbeat_key("east")).clone(),
        redis::cmd("KEYS").arg("*").clone(),
        redis::cmd("FLUSHALL").clone(),
        redis::cmd("ACL").arg("LIST").clone(),
    ] {
        let refused: redis::RedisResult<redis::Value> = cmd.query_async(&mut conn).await;
        let e = refused.expect_err("refused");
        assert!(e.to_string().contains("NOPERM") || e.code() == Some("NOPERM"), "{e}");
    }

    // Asking again replaces the password.
    let again = exchange(&app, east_token).await.1.expect("credentials");
    assert_ne!(again.password, creds.password);
    assert!(connect_as(&redis, &creds).await.is_err(), "the old password no longer works");

    // Rotation: the monitor deletes the user and closes its connections.
    let mut conn = connect_as(&redis, &again).await.expect("signed in");
    let rotate = "mutation { rotateAgentToken(clusterId: \"east\") { agentToken } }";
    let v = gql(&app, "root", rotate, json!({})).await;
    assert!(v["data"]["rotateAgentToken"]["agentToken"].is_string(), "{v}");
    let hc = HealthConfig { loss_timeout: Duration::from_secs(60), interval: Duration::from_secs(5) };
    let client = redis::Client::open(redis.url()).unwrap();
    let mut monitor =
        HealthMonitor::connect(t.pool.clone(), &client, Arc::new(IngestMetrics::default()), hc).await.unwrap();
    monitor.tick().await.unwrap();
    assert!(connect_as(&redis, &again).await.is_err(), "cut off: the user is gone");
    let cut: redis::RedisResult<String> = redis::cmd("PING").query_async(&mut conn).await;
    assert!(cut.is_err(), "its open connection is closed too");
    assert_eq!(exchange(&app, east_token).await.0, StatusCode::UNAUTHORIZED, "the old token is dead");
}
