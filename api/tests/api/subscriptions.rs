//! GraphQL subscriptions over a real websocket (tokio-tungstenite) against a real server on a
//! loopback port and the real PostgreSQL: job events recorded through the db functions reach
//! their project's and job's subscribers and nobody else, cluster changes arrive (and
//! heartbeats that change nothing do not), both websocket protocols work, and connections
//! without credentials are refused.
//!
//! Tests never sleep for a fixed time to let something happen: before recording a change they
//! wait until the server's change feed is listening and holds the expected subscribers, then
//! read messages in order (PostgreSQL delivers notifications in commit order), so "did not
//! receive X" is shown by receiving the later Y first.

use std::net::SocketAddr;
use std::time::Duration;

use async_graphql::futures_util::{SinkExt, StreamExt};
use chrono::Utc;
use grus_api::auth::web::hash_token;

use grus_api::db::{self, NewApiToken, Scope};
use grus_api::domain::{JobState, Role};
use grus_api::notify::Notifier;
use grus_testkit::api::{Served, TestApi};
use grus_testkit::seed::{self, by_user, gpu_job, Fixture};
use grus_testkit::TestDb;
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A guard against hanging forever, not an assertion about speed.
const PATIENCE: Duration = Duration::from_secs(30);

struct Server {
    db: TestDb,
    addr: SocketAddr,
    _served: Served,
    feed: Notifier,
    fa: Fixture,
    fb: Fixture,
    member: i64,
}

/// Tenant ta with project pa (member: `member`), tenant tb with project pb (member:
/// `outsider`), clusters c1 and c2; the api served on a loopback port with its own change feed.
async fn server() -> Server {
    let t = TestDb::with_connections(10).await;
    let pool = t.pool.clone();
    let mut fixtures = Vec::new();
    for (tenant, project, who) in [("ta", "pa", "member"), ("tb", "pb", "outsider")] {
        let tenant_id = seed::tenant(&pool, tenant, tenant).await;
        let (project_id, queue_id) = seed::project(&pool, tenant_id, project, project).await;
        let user_id = seed::member(&pool, project_id, who, Role::Member).await;
        fixtures.push(Fixture { tenant_id, project_id, user_id, queue_id });
    }
    seed::cluster(&pool, "c1", 7).await;
    seed::cluster(&pool, "c2", 8).await;
    let feed = Notifier::new(pool.clone());
    let served = TestApi::new(&pool).notifier(feed.clone()).serve().await;
    let fb = fixtures.pop().unwrap();
    let fa = fixtures.pop().unwrap();
    let member = fa.user_id;
    Server { db: t, addr: served.addr, _served: served, feed, fa, fb, member }
}

async fn connect(addr: SocketAddr, protocol: &str, headers: &[(&str, &str)]) -> Ws {
    let mut req = format!("ws://{addr}/graphql/ws").into_client_request().unwrap();
    req.headers_mut().insert("sec-websocket-protocol", HeaderValue::from_str(protocol).unwrap());
    for (k, v) in headers {
        req.headers_mut().insert(HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap());
    }
    tokio_tungstenite::connect_async(req).await.expect("websocket upgrade").0
}

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::Text(v.to_string().into())).await.unwrap();
}

/// The next protocol message, or `None` once the server closed the connection.
async fn recv(ws: &mut Ws) -> Option<Value> {
    loop {
        let msg = tokio::time::timeout(PATIENCE, ws.next()).await.expect("a message (or close) in time");
        match msg {
            None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return None,
            Some(Ok(Message::Text(t))) => {
                let v: Value = serde_json::from_str(&t).unwrap();
                match v["type"].as_str() {
                    Some("ping") => send(ws, json!({ "type": "pong" })).await,
                    Some("ka") => {}
                    _ => return Some(v),
                }
            }
            Some(Ok(_)) => {}
        }
    }
}

/// A connection of `who` (dev header on the upgrade) speaking graphql-transport-ws, acked.
async fn client(s: &Server, who: &str) -> Ws {
    let mut ws = connect(s.addr, "graphql-transport-ws", &[("x-grus-dev-user", who)]).await;
    send(&mut ws, json!({ "type": "connection_init", "payload": {} })).await;
    assert_eq!(recv(&mut ws).await.unwrap()["type"], "connection_ack");
    ws
}

async fn subscribe(ws: &mut Ws, id: &str, query: &str) {
    send(ws, json!({ "id": id, "type": "subscribe", "payload": { "query": query } })).await;
}

/// Waits until the feed listens and holds `n` subscriptions (each subscribe message has been
/// processed), so a change recorded now reaches them.
async fn until_subscribed(feed: &Notifier, n: usize) {
    tokio::time::timeout(PATIENCE, async {
        feed.listening().await;
        while feed.subscriber_count() < n {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("subscriptions registered in time");
}

/// The payload of the next `next` message of subscription `id`.
async fn next(ws: &mut Ws, id: &str) -> Value {
    let v = recv(ws).await.expect("connection open");
    assert_eq!((v["type"].as_str(), v["id"].as_str()), (Some("next"), Some(id)), "{v}");
    v["payload"].clone()
}

async fn new_job(s: &Server, f: &Fixture, name: &str) -> i64 {
    seed::insert_job(&s.db.pool, &gpu_job(f, name, 1, 1, &["A100"]), "user:1").await
}

async fn transition(s: &Server, job: i64, to: JobState) {
    seed::transition(&s.db.pool, job, to, by_user("system:test")).await;
}

const EVENT_FIELDS: &str = "id jobId fromState toState cause actor";

#[tokio::test]
async fn job_events_reach_their_subscribers_only() {
    let s = server().await;
    let job = new_job(&s, &s.fa, "train").await;
    let mut project = client(&s, "member").await;
    subscribe(
        &mut project,
        "p",
        &format!("subscription {{ projectJobEvents(projectId: \"{}\") {{ {EVENT_FIELDS} }} }}", s.fa.project_id),
    )
    .await;
    let mut one_job = client(&s, "member").await;
    subscribe(&mut one_job, "j", &format!("subscription {{ jobEvents(jobId: \"{job}\") {{ {EVENT_FIELDS} }} }}")).await;
    let mut other_tenant = client(&s, "outsider").await;
    subscribe(
        &mut other_tenant,
        "b",
        &format!("subscription {{ projectJobEvents(projectId: \"{}\") {{ {EVENT_FIELDS} }} }}", s.fb.project_id),
    )
    .await;
    // Asking for another tenant's project or job: NOT_FOUND, then the subscription completes.
    let mut prying = client(&s, "outsider").await;
    subscribe(
        &mut prying,
        "x",
        &format!("subscription {{ projectJobEvents(projectId: \"{}\") {{ id }} }}", s.fa.project_id),
    )
    .await;
    let refused = next(&mut prying, "x").await;
    assert_eq!(refused["errors"][0]["extensions"]["code"], "NOT_FOUND", "{refused}");
    assert_eq!(recv(&mut prying).await.unwrap()["type"], "complete");
    subscribe(&mut prying, "y", &format!("subscription {{ jobEvents(jobId: \"{job}\") {{ id }} }}")).await;
    assert_eq!(next(&mut prying, "y").await["errors"][0]["extensions"]["code"], "NOT_FOUND");
    until_subscribed(&s.feed, 3).await;

    transition(&s, job, JobState::Admitted).await;
    let other_job = new_job(&s, &s.fb, "other").await;
    let later = new_job(&s, &s.fa, "later").await;

    let stored = db::job_events(&s.db.pool, job).await.unwrap();
    let admitted = stored.last().unwrap();
    let want = json!({ "id": admitted.id.to_string(), "jobId": job.to_string(), "fromState": "pending",
        "toState": "admitted", "cause": "submitted", "actor": "system:test" });
    assert_eq!(next(&mut project, "p").await, json!({ "data": { "projectJobEvents": want } }));
    assert_eq!(next(&mut one_job, "j").await, json!({ "data": { "jobEvents": want } }));
    // pb's event came between: the project subscriber's next message is pa's later job.
    let p = next(&mut project, "p").await;
    assert_eq!(p["data"]["projectJobEvents"]["jobId"], later.to_string(), "{p}");
    assert_eq!(p["data"]["projectJobEvents"]["toState"], "pending");
    // The other tenant's subscriber gets its own event first: none of pa's reached it.
    let b = next(&mut other_tenant, "b").await;
    assert_eq!(b["data"]["projectJobEvents"]["jobId"], other_job.to_string(), "{b}");

    // The job subscriber sees only its job: the next thing it gets is its job's next event.
    transition(&s, job, JobState::Cancelled).await;
    let j = next(&mut one_job, "j").await;
    assert_eq!(j["data"]["jobEvents"]["toState"], "cancelled", "{j}");
    let p = next(&mut project, "p").await;
    assert_eq!(p["data"]["projectJobEvents"]["toState"], "cancelled", "{p}");

    // A membership revoked mid-stream ends the stream with NOT_FOUND (roles are checked when
    // an event is delivered).
    db::revoke(&s.db.pool, s.member, Scope::Project(s.fa.project_id)).await.unwrap();
    new_job(&s, &s.fa, "after-revoke").await;
    let gone = next(&mut project, "p").await;
    assert_eq!(gone["errors"][0]["extensions"]["code"], "NOT_FOUND", "{gone}");
    assert_eq!(recv(&mut project).await.unwrap()["type"], "complete");
}

/// Regression: the feed started while an older transaction was still open (CI runs other
/// tests' transactions on the same server), so the oldest running transaction id lay below
/// a job committed before anyone subscribed, and its event was sent to a later subscriber.
#[tokio::test]
async fn events_committed_before_the_feed_started_are_not_sent() {
    let s = server().await;
    // An open transaction with an id holds the oldest running id below the job's.
    let mut hold = s.db.pool.begin().await.unwrap();
    sqlx::query("SELECT pg_current_xact_id()").execute(&mut *hold).await.unwrap();
    let job = new_job(&s, &s.fa, "before").await;
    let mut ws = client(&s, "member").await;
    subscribe(&mut ws, "j", &format!("subscription {{ jobEvents(jobId: \"{job}\") {{ {EVENT_FIELDS} }} }}")).await;
    until_subscribed(&s.feed, 1).await;
    hold.commit().await.unwrap();
    transition(&s, job, JobState::Admitted).await;
    let first = next(&mut ws, "j").await;
    assert_eq!(first["data"]["jobEvents"]["toState"], "admitted", "{first}");
}

const ALL_CLUSTERS: &str = "subscription { clusterUpdates { id health cordoned capacity } }";
const C1: &str = "subscription { clusterUpdates(clusterId: \"c1\") { id health capacity } }";

#[tokio::test]
async fn capacity_and_health_changes_arrive() {
    let s = server().await;
    let mut ws = client(&s, "member").await;
    subscribe(&mut ws, "c", ALL_CLUSTERS).await;
    // The older protocol (subscriptions-transport-ws, subprotocol `graphql-ws`) too, for c1.
    let mut legacy = connect(s.addr, "graphql-ws", &[("x-grus-dev-user", "outsider")]).await;
    send(&mut legacy, json!({ "type": "connection_init", "payload": {} })).await;
    assert_eq!(recv(&mut legacy).await.unwrap()["type"], "connection_ack");
    send(&mut legacy, json!({ "id": "l", "type": "start", "payload": { "query": C1 } })).await;
    until_subscribed(&s.feed, 2).await;

    let cap1 = json!({ "models": { "A100": { "free_gpus": 8 } } });
    let cap2 = json!({ "models": { "A100": { "free_gpus": 6 } } });
    db::record_heartbeat(&s.db.pool, "c1", "healthy", Utc::now(), Some(&cap1)).await.unwrap();
    let first = next(&mut ws, "c").await;
    assert_eq!(
        first,
        json!({ "data": { "clusterUpdates": { "id": "c1", "health": "healthy", "cordoned": false, "capacity": cap1 } } })
    );
    let l = recv(&mut legacy).await.unwrap();
    assert_eq!((l["type"].as_str(), l["id"].as_str()), (Some("data"), Some("l")), "{l}");
    assert_eq!(l["payload"]["data"]["clusterUpdates"]["capacity"], cap1);

    // A heartbeat that changes neither health nor capacity notifies nobody: the next message
    // is c2's change.
    db::record_heartbeat(&s.db.pool, "c1", "healthy", Utc::now(), Some(&cap1)).await.unwrap();
    db::record_heartbeat(&s.db.pool, "c2", "healthy", Utc::now(), None).await.unwrap();
    let second = next(&mut ws, "c").await;
    assert_eq!(second["data"]["clusterUpdates"]["id"], "c2", "{second}");

    db::record_heartbeat(&s.db.pool, "c1", "degraded", Utc::now(), Some(&cap2)).await.unwrap();
    let third = next(&mut ws, "c").await;
    assert_eq!(
        third["data"]["clusterUpdates"],
        json!({ "id": "c1", "health": "degraded", "cordoned": false, "capacity": cap2 })
    );
    // The c1 subscriber skipped c2.
    let l = recv(&mut legacy).await.unwrap();
    assert_eq!(l["payload"]["data"]["clusterUpdates"], json!({ "id": "c1", "health": "degraded", "capacity": cap2 }));

    // An unknown cluster is NOT_FOUND.
    subscribe(&mut ws, "u", "subscription { clusterUpdates(clusterId: \"nope\") { id } }").await;
    assert_eq!(next(&mut ws, "u").await["errors"][0]["extensions"]["code"], "NOT_FOUND");
}

#[tokio::test]
async fn connections_need_credentials() {
    let s = server().await;
    // Anonymous: connection_init is refused and the socket closed, never acked.
    let mut anon = connect(s.addr, "graphql-transport-ws", &[]).await;
    send(&mut anon, json!({ "type": "connection_init", "payload": {} })).await;
    assert_eq!(recv(&mut anon).await, None);
    // A bad token in the payload: refused too.
    let mut bad = connect(s.addr, "graphql-transport-ws", &[]).await;
    send(&mut bad, json!({ "type": "connection_init", "payload": { "authorization": "Bearer grus_wrong" } })).await;
    assert_eq!(recv(&mut bad).await, None);
    // A bad token on the upgrade request: 401 before any websocket.
    let mut req = format!("ws://{}/graphql/ws", s.addr).into_client_request().unwrap();
    req.headers_mut().insert("sec-websocket-protocol", HeaderValue::from_static("graphql-transport-ws"));
    req.headers_mut().insert("authorization", HeaderValue::from_static("Bearer grus_wrong"));
    match tokio_tungstenite::connect_async(req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => assert_eq!(resp.status(), 401),
        other => panic!("expected 401, got {other:?}"),
    }

    // An API token in the connection_init payload (how browsers authenticate) is accepted.
    let secret = "grus_subscriptions_test_token_0123456789abcdef";
    db::create_api_token(
        &s.db.pool,
        &NewApiToken {
            user_id: s.member,
            name: "ws",
            hash: hash_token(secret),
            prefix: &secret[..9],
            scopes: &[],
            expires_at: None,
        },
    )
    .await
    .unwrap();
    let mut ws = connect(s.addr, "graphql-transport-ws", &[]).await;
    send(&mut ws, json!({ "type": "connection_init", "payload": { "authorization": format!("Bearer {secret}") } }))
        .await;
    assert_eq!(recv(&mut ws).await.unwrap()["type"], "connection_ack");
    subscribe(
        &mut ws,
        "p",
        &format!("subscription {{ projectJobEvents(projectId: \"{}\") {{ jobId }} }}", s.fa.project_id),
    )
    .await;
    until_subscribed(&s.feed, 1).await;
    let job = new_job(&s, &s.fa, "by-token").await;
    assert_eq!(next(&mut ws, "p").await["data"]["projectJobEvents"]["jobId"], job.to_string());
}

#[tokio::test]
async fn a_lagging_subscriber_is_told_what_it_missed() {
    use async_graphql::futures_util::FutureExt;
    use grus_api::graphql::Caller;

    let s = server().await;
    // A feed that holds one notification per subscriber, and a schema using it.
    let feed = Notifier::with_capacity(s.db.pool.clone(), 1);
    let schema = TestApi::new(&s.db.pool).notifier(feed.clone()).schema();
    let mut witness = feed.subscribe();
    feed.listening().await;
    let caller = Caller { user: db::get_user(&s.db.pool, s.member).await.unwrap() };
    let query = format!("subscription {{ projectJobEvents(projectId: \"{}\") {{ jobId }} }}", s.fa.project_id);
    let mut stream = schema.execute_stream(async_graphql::Request::new(query).data(caller));
    // Drive the subscription until it holds its receiver, without consuming anything.
    tokio::time::timeout(PATIENCE, async {
        while feed.subscriber_count() < 2 {
            assert!(stream.next().now_or_never().is_none());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("subscribed in time");

    let mut jobs = Vec::new();
    for name in ["a", "b", "c"] {
        jobs.push(new_job(&s, &s.fa, name).await);
    }
    // The witness shows when all three were broadcast (it may lag too).
    let mut seen = 0;
    loop {
        match witness.recv().await {
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => seen += n,
            Ok(grus_api::notify::Change::JobEvent { job_id, .. }) => {
                seen += 1;
                if job_id == jobs[2] {
                    break;
                }
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(seen, 3);

    let missed = stream.next().await.unwrap();
    assert_eq!(
        missed.errors[0].extensions.as_ref().unwrap().get("code"),
        Some(&async_graphql::Value::from("CONFLICT"))
    );
    assert!(missed.errors[0].message.contains("missed 2 notifications"), "{:?}", missed.errors);
    // The stream goes on with what it still has.
    let last = stream.next().await.unwrap().data.into_json().unwrap();
    assert_eq!(last["projectJobEvents"]["jobId"], jobs[2].to_string());
}
