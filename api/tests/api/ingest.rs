//! Event ingestion and cluster health against the real PostgreSQL (a fresh database per test)
//! and the real Redis (a unique cluster id per test): real encoded envelopes are appended to a
//! cluster's event stream and the ingester's steps are driven directly, so every assertion is
//! about stored state, never about timing.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use grus_api::auth::web::hash_token;
use grus_api::db;
use grus_api::db::metric_history::Subject;
use grus_api::domain::Health;
use grus_api::domain::JobState;
use grus_api::graphql::clusters::AgentInstall;
use grus_api::ingest::health::{HealthConfig, HealthMonitor};
use grus_api::ingest::{IngestConfig, IngestMetrics, Ingester};
use grus_protocol::codec::{encode, Envelope};
use grus_protocol::command::Command;
use grus_protocol::event::Event;
use grus_protocol::keys;
use grus_protocol::wire::{
    DeviceRef, GpuInfo, GpuMetrics, JobSnapshot, NodeInfo, ReplicaExit, ReplicaSnapshot, ReplicaUsage, State,
    Termination,
};
use grus_testkit::api::TestApi;
use grus_testkit::client::{code, gql};
use grus_testkit::env::{redis_url, unique};
use grus_testkit::seed::{self, dispatched_job, fixture, SYSTEM};
use grus_testkit::streams::{self, ClusterKeys};
use grus_testkit::TestDb;
use redis::aio::MultiplexedConnection;
use redis::AsyncCommands;
use serde_json::json;
use sqlx::PgPool;

fn client() -> redis::Client {
    redis::Client::open(redis_url()).expect("redis url")
}

/// A registered cluster whose Redis keys are deleted when the test ends.
pub(super) struct TestCluster {
    pub(super) id: String,
    _keys: ClusterKeys,
}

impl TestCluster {
    pub(super) async fn new(pool: &PgPool) -> TestCluster {
        let id = unique("c");
        seed::cluster_with_token(pool, &id, &unique("tok")).await;
        TestCluster { _keys: ClusterKeys::new(&id, &redis_url()), id }
    }
}

pub(super) async fn conn() -> MultiplexedConnection {
    client().get_multiplexed_async_connection().await.expect("redis")
}

pub(super) fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

async fn publish(c: &mut MultiplexedConnection, cluster: &str, id: &str, event: Event) {
    let payload = encode(&Envelope::new(id, cluster, now_ms(), event));
    publish_raw(c, cluster, payload.as_bytes()).await;
}

pub(super) async fn publish_raw(c: &mut MultiplexedConnection, cluster: &str, payload: &[u8]) {
    let _: String = c.xadd(keys::event_stream(cluster), "*", &[(keys::PAYLOAD_FIELD, payload)]).await.expect("xadd");
}

#[allow(clippy::too_many_arguments)]
fn job_state(
    job: i64,
    replica: Option<(&str, u32)>,
    state: State,
    epoch: i64,
    at: i64,
    node: Option<&str>,
    devices: Vec<DeviceRef>,
    reason: Option<&str>,
) -> Event {
    Event::JobState {
        job: job as u64,
        task: replica.map(|r| r.0.to_owned()),
        replica: replica.map(|r| r.1),
        state,
        node: node.map(str::to_owned),
        devices,
        at,
        epoch: epoch as u64,
        reason: reason.map(str::to_owned),
        checkpoint: None,
        endpoint: None,
        exit: None,
    }
}

pub(super) fn config() -> IngestConfig {
    IngestConfig { block: Duration::from_millis(50), ..IngestConfig::new(unique("consumer")) }
}

pub(super) async fn ingester(pool: &PgPool, config: IngestConfig) -> (Ingester, Arc<IngestMetrics>) {
    let metrics = Arc::new(IngestMetrics::default());
    let ing = Ingester::connect(pool.clone(), &client(), metrics.clone(), config).await.expect("ingester");
    (ing, metrics)
}

/// A health monitor with the default 60 s loss timeout.
async fn monitor(pool: &PgPool) -> HealthMonitor {
    let hc = HealthConfig { loss_timeout: Duration::from_secs(60), interval: Duration::from_secs(5) };
    HealthMonitor::connect(pool.clone(), &client(), Arc::new(IngestMetrics::default()), hc).await.unwrap()
}

/// Steps until two steps in a row handle nothing (everything published has been read).
pub(super) async fn drain(ing: &mut Ingester) {
    let mut idle = 0;
    for _ in 0..100 {
        if ing.step().await.expect("step") == 0 {
            idle += 1;
            if idle == 2 {
                return;
            }
        } else {
            idle = 0;
        }
    }
    panic!("the streams never drained");
}

/// Takes the job away from its cluster: rejected, then dispatched to `to` under a new epoch.
async fn redispatch(pool: &PgPool, job: i64, to: &str) -> i64 {
    let mut tx = pool.begin().await.unwrap();
    let state = db::get_job(&mut *tx, job).await.unwrap().state;
    if state != JobState::Rejected {
        db::transition_job(&mut tx, job, JobState::Rejected, SYSTEM).await.unwrap();
    }
    let d = db::insert_dispatch(&mut tx, job, to).await.unwrap();
    db::transition_job(&mut tx, job, JobState::Dispatched, SYSTEM).await.unwrap();
    tx.commit().await.unwrap();
    d.epoch
}

/// Entries read and not acknowledged, in every group of the cluster's event stream.
pub(super) async fn pending_count(c: &mut MultiplexedConnection, cluster: &str) -> i64 {
    let info: redis::streams::StreamInfoGroupsReply = c.xinfo_groups(keys::event_stream(cluster)).await.unwrap();
    info.groups.iter().map(|g| g.pending as i64).sum()
}

/// The api's consumer group in the test database's control plane.
async fn api_group(pool: &PgPool) -> String {
    keys::api_group(&db::control_plane::incarnation(pool).await.unwrap())
}

async fn commands(c: &mut MultiplexedConnection, cluster: &str) -> Vec<Command> {
    streams::commands(c, cluster).await.into_iter().map(|env| env.message).collect()
}

async fn dispatch_of(pool: &PgPool, job: i64, epoch: i64) -> (String, Option<String>) {
    sqlx::query_as("SELECT outcome, reason FROM dispatches WHERE job_id = $1 AND epoch = $2")
        .bind(job)
        .bind(epoch)
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn ledger(pool: &PgPool, job: i64) -> Vec<(i64, String, i64, DateTime<Utc>, Option<DateTime<Utc>>, bool)> {
    sqlx::query_as(
        "SELECT replica_id, gpu_model, gpu_milli, started_at, ended_at, ended_by_preemption FROM usage_ledger
         WHERE job_id = $1 ORDER BY replica_id, started_at",
    )
    .bind(job)
    .fetch_all(pool)
    .await
    .unwrap()
}

pub(super) fn a100_node(name: &str, gpus: u32) -> NodeInfo {
    NodeInfo {
        name: name.into(),
        labels: Default::default(),
        rack: None,
        pool: None,
        cpu_milli: 64_000,
        memory_mib: 512_000,
        healthy: true,
        gpus: (0..gpus)
            .map(|i| GpuInfo {
                index: i,
                uuid: None,
                model: "A100-80GB".into(),
                memory_mib: 81_920,
                numa: 0,
                nvlink_group: 0,
                healthy: true,
                mig: false,
            })
            .collect(),
    }
}

fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

#[tokio::test]
async fn a_checkpoint_reported_by_the_holding_cluster_is_kept_for_the_next_run_once() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    sqlx::query("UPDATE jobs SET spec = spec || '{\"checkpoint\": {}}' WHERE id = $1")
        .bind(job)
        .execute(&t.pool)
        .await
        .unwrap();
    let checkpoint = |epoch: u64, reference: &str| Event::JobState {
        job: job as u64,
        task: None,
        replica: None,
        state: State::Preempting,
        node: None,
        devices: vec![],
        at: now_ms(),
        epoch,
        reason: Some(format!("checkpoint written: {reference}")),
        checkpoint: Some(reference.to_owned()),
        endpoint: None,
        exit: None,
    };
    let mut r = conn().await;
    publish(&mut r, &c.id, "ck-stale", checkpoint(7, "s3://stale")).await;
    publish(&mut r, &c.id, "ck-1", checkpoint(1, "s3://ckpt/step-900")).await;
    publish(&mut r, &c.id, "ck-1", checkpoint(1, "s3://ckpt/step-900")).await;
    let (mut ing, _) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;

    let (reference, spec): (Option<String>, serde_json::Value) =
        sqlx::query_as("SELECT checkpoint_ref, spec FROM jobs WHERE id = $1")
            .bind(job)
            .fetch_one(&t.pool)
            .await
            .unwrap();
    assert_eq!(reference.as_deref(), Some("s3://ckpt/step-900"));
    assert_eq!(spec["checkpoint"]["resume_from"], "s3://ckpt/step-900", "the next Dispatch carries it");
    let events = db::job_events(&t.pool, job).await.unwrap();
    let written: Vec<_> = events.iter().filter(|e| e.cause.starts_with("checkpoint written")).collect();
    assert_eq!(written.len(), 1, "a redelivery and a stale epoch write nothing: {events:?}");
    assert_eq!(written[0].cause, "checkpoint written: s3://ckpt/step-900");
    assert_eq!(written[0].actor, format!("agent:{}", c.id));
    assert_eq!(db::get_job(&t.pool, job).await.unwrap().state, JobState::Dispatched, "the state is untouched");
}

#[tokio::test]
async fn redelivered_message_applies_once() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    let mut r = conn().await;
    let ev = job_state(
        job,
        Some(("main", 0)),
        State::Running,
        1,
        now_ms(),
        Some("n1"),
        vec![DeviceRef::share(0, 1000)],
        None,
    );
    // The same message twice (an agent re-sending after a lost reply).
    publish(&mut r, &c.id, "m-1", ev.clone()).await;
    publish(&mut r, &c.id, "m-1", ev).await;
    let (mut ing, metrics) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;

    let reps = db::replicas(&t.pool, job).await.unwrap();
    assert_eq!(reps[0].state, grus_api::domain::UnitState::Running);
    assert_eq!(reps[0].node.as_deref(), Some("n1"));
    assert_eq!(reps[0].cluster_id.as_deref(), Some(c.id.as_str()));
    assert_eq!(reps[0].epoch, Some(1));
    let events = db::job_events(&t.pool, job).await.unwrap();
    assert_eq!(events.iter().filter(|e| e.message_id.as_deref() == Some("m-1")).count(), 1);
    assert_eq!(events.iter().filter(|e| e.replica_id.is_some()).count(), 1);
    assert_eq!(ledger(&t.pool, job).await.len(), 1);
    assert_eq!(dispatch_of(&t.pool, job, 1).await.0, "acknowledged");
    assert_eq!(metrics.applied.get(), 1);
    assert_eq!(metrics.duplicate.get(), 1);
    assert_eq!(pending_count(&mut r, &c.id).await, 0);
}

#[tokio::test]
async fn rejected_marks_the_dispatch_and_the_job() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    let mut r = conn().await;
    publish(
        &mut r,
        &c.id,
        "rej-1",
        job_state(job, None, State::Rejected, 1, now_ms(), None, vec![], Some("no node has 1 free A100-80GB")),
    )
    .await;
    let (mut ing, _) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;

    assert_eq!(db::get_job(&t.pool, job).await.unwrap().state, JobState::Rejected);
    let (outcome, reason) = dispatch_of(&t.pool, job, 1).await;
    assert_eq!(outcome, "rejected");
    assert_eq!(reason.as_deref(), Some("no node has 1 free A100-80GB"));
    let last = db::job_events(&t.pool, job).await.unwrap().pop().unwrap();
    assert_eq!(last.to_state, "rejected");
    assert_eq!(last.cause, "no node has 1 free A100-80GB");
    assert_eq!(last.actor, format!("agent:{}", c.id));
}

#[tokio::test]
async fn stale_epochs_are_ignored_and_the_old_cluster_gets_one_cancel() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let old = TestCluster::new(&t.pool).await;
    let new = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &old.id, 1, 1).await;
    let epoch = redispatch(&t.pool, job, &new.id).await;
    assert_eq!(epoch, 2);
    let before = db::job_events(&t.pool, job).await.unwrap().len();
    let mut r = conn().await;
    // The old cluster still runs it under epoch 1, and says so twice.
    publish(&mut r, &old.id, "old-1", job_state(job, None, State::Running, 1, now_ms(), None, vec![], None)).await;
    publish(
        &mut r,
        &old.id,
        "old-2",
        job_state(job, Some(("main", 0)), State::Running, 1, now_ms(), Some("n1"), vec![], None),
    )
    .await;
    let (mut ing, metrics) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;

    let j = db::get_job(&t.pool, job).await.unwrap();
    assert_eq!((j.state, j.epoch, j.cluster_id.as_deref()), (JobState::Dispatched, 2, Some(new.id.as_str())));
    assert_eq!(db::job_events(&t.pool, job).await.unwrap().len(), before, "nothing recorded from a stale epoch");
    assert_eq!(db::replicas(&t.pool, job).await.unwrap()[0].state, grus_api::domain::UnitState::Pending);
    assert_eq!(dispatch_of(&t.pool, job, 2).await.0, "pending", "a stale report does not answer the new dispatch");
    assert_eq!(metrics.stale.get(), 2);
    assert_eq!(commands(&mut r, &old.id).await, vec![Command::Cancel { job: job as u64, epoch: 1 }]);
    assert!(commands(&mut r, &new.id).await.is_empty());
}

#[tokio::test]
async fn malformed_events_are_dead_lettered_and_acknowledged() {
    let t = TestDb::new().await;
    let c = TestCluster::new(&t.pool).await;
    let mut r = conn().await;
    publish_raw(&mut r, &c.id, b"{not json").await;
    // Well formed, but for another cluster: an agent must not write into someone else's stream.
    let foreign = encode(&Envelope::new(
        "x-1",
        "some-other-cluster",
        now_ms(),
        Event::Metrics { gpus: vec![], replicas: vec![] },
    ));
    publish_raw(&mut r, &c.id, foreign.as_bytes()).await;
    // A newer agent's kind: skipped, acknowledged, not dead-lettered.
    let newer = json!({"v": 1, "id": "n-1", "cluster": c.id, "ts": now_ms(), "kind": "Telemetry", "body": {}});
    publish_raw(&mut r, &c.id, newer.to_string().as_bytes()).await;
    let (mut ing, metrics) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;

    let dlq: redis::streams::StreamRangeReply = r.xrange_all(keys::dead_letter_stream(&c.id)).await.unwrap();
    assert_eq!(dlq.ids.len(), 2);
    let reasons: Vec<String> =
        dlq.ids.iter().map(|e| redis::from_redis_value(&e.map[keys::DLQ_REASON_FIELD]).unwrap()).collect();
    assert!(reasons[0].contains("not a JSON envelope"), "{reasons:?}");
    assert!(reasons[1].contains("some-other-cluster"), "{reasons:?}");
    assert_eq!(metrics.dead_lettered.get(), 2);
    assert_eq!(metrics.unknown_kind.get(), 1);
    assert_eq!(pending_count(&mut r, &c.id).await, 0);
}

#[tokio::test]
async fn a_poisoned_event_is_dead_lettered_and_ingestion_goes_on() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    let mut r = conn().await;
    // PostgreSQL refuses a NUL in text: once, this wedged the stream for ever.
    let poisoned = job_state(job, None, State::Failed, 1, now_ms(), None, vec![], Some("exit\u{0}code 1"));
    publish(&mut r, &c.id, "poison", poisoned).await;
    let huge = Event::Hello { version: "v".repeat(8 << 20), capabilities: vec![] };
    publish(&mut r, &c.id, "huge", huge).await;
    publish(&mut r, &c.id, "next", job_state(job, None, State::Scheduled, 1, now_ms(), None, vec![], None)).await;
    let (mut ing, metrics) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;

    assert_eq!(db::get_job(&t.pool, job).await.unwrap().state, JobState::Scheduled, "the next event applied");
    let dlq: redis::streams::StreamRangeReply = r.xrange_all(keys::dead_letter_stream(&c.id)).await.unwrap();
    let reasons: Vec<String> =
        dlq.ids.iter().map(|e| redis::from_redis_value(&e.map[keys::DLQ_REASON_FIELD]).unwrap()).collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons[0].contains("reason") && reasons[0].contains("NUL"), "{reasons:?}");
    assert!(reasons[1].contains("version") && reasons[1].contains("at most"), "{reasons:?}");
    assert_eq!(metrics.dead_lettered.get(), 2);
    assert_eq!(pending_count(&mut r, &c.id).await, 0);
    let version: Option<String> = sqlx::query_scalar("SELECT agent_version FROM clusters WHERE id = $1")
        .bind(&c.id)
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(version, None, "nothing of the oversized Hello is stored");
}

#[tokio::test]
async fn events_and_heartbeats_of_an_agent_serving_another_control_plane_change_nothing() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    let ours = db::control_plane::incarnation(&t.pool).await.unwrap();
    let theirs = "00000000-0000-4000-8000-000000000000";
    let mut r = conn().await;
    // Waiting in the agent's outbox since the old life of a replaced database: the same job id.
    let old_life = Envelope::new(
        "old-1",
        c.id.as_str(),
        now_ms(),
        job_state(job, None, State::Failed, 1, now_ms(), None, vec![], None),
    );
    publish_raw(&mut r, &c.id, encode(&old_life.with_control_plane(Some(theirs))).as_bytes()).await;
    let this_life = Envelope::new(
        "new-1",
        c.id.as_str(),
        now_ms(),
        job_state(job, None, State::Scheduled, 1, now_ms(), None, vec![], None),
    );
    publish_raw(&mut r, &c.id, encode(&this_life.with_control_plane(Some(&ours))).as_bytes()).await;
    let (mut ing, metrics) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;
    assert_eq!(db::get_job(&t.pool, job).await.unwrap().state, JobState::Scheduled, "only this life's event applied");
    assert_eq!(metrics.foreign.get(), 1);

    // Its heartbeat names the other control plane: alive, but it takes no work.
    let beat = json!({ "ts": now_ms(), "control_plane": theirs }).to_string();
    let _: () = r.set_ex(keys::heartbeat_key(&c.id), beat, 30).await.unwrap();
    let mut monitor = monitor(&t.pool).await;
    let health = monitor.tick().await.unwrap();
    assert!(health.contains(&(c.id.clone(), Health::Degraded)), "{health:?}");
    let info = db::ingest::agent_info(&t.pool, &c.id).await.unwrap();
    assert_eq!(info.agent_control_plane.as_deref(), Some(theirs));
    // The mismatch and the health it causes are one row's, written in one statement: a reader
    // once saw the mismatch with the health from before it (`healthy`).
    let row = db::get_cluster(&t.pool, &c.id).await.unwrap();
    assert_eq!((row.control_plane_mismatch, row.health.as_str()), (true, "degraded"));
    // Re-pinned: the same heartbeat with this control plane makes it healthy.
    let beat = json!({ "ts": now_ms(), "control_plane": ours }).to_string();
    let _: () = r.set_ex(keys::heartbeat_key(&c.id), beat, 30).await.unwrap();
    let health = monitor.tick().await.unwrap();
    assert!(health.contains(&(c.id.clone(), Health::Healthy)), "{health:?}");
    let row = db::get_cluster(&t.pool, &c.id).await.unwrap();
    assert_eq!((row.control_plane_mismatch, row.health.as_str()), (false, "healthy"));
}

#[tokio::test]
async fn an_event_is_acknowledged_only_after_its_transaction_commits() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    let consumer = unique("consumer");
    // A pool of its own, closed below: the database "fails" between read and commit.
    let doomed = sqlx::postgres::PgPoolOptions::new().max_connections(2).connect(&t.url).await.unwrap();
    let cfg = IngestConfig {
        consumer: consumer.clone(),
        block: Duration::from_millis(50),
        claim_every: Duration::from_secs(3600),
        ..IngestConfig::new("x")
    };
    let (mut ing, metrics) = ingester(&doomed, cfg.clone()).await;
    drain(&mut ing).await; // creates the group while the database is up
    let mut r = conn().await;
    publish(&mut r, &c.id, "s-1", job_state(job, None, State::Scheduled, 1, now_ms(), None, vec![], None)).await;
    doomed.close().await;
    assert!(ing.step().await.is_err());
    assert_eq!(metrics.failed.get(), 1);
    assert_eq!(pending_count(&mut r, &c.id).await, 1, "read but not acknowledged");
    assert_eq!(db::get_job(&t.pool, job).await.unwrap().state, JobState::Dispatched);

    // The same consumer restarted with a working database picks it up from its pending list.
    let (mut again, _) = ingester(&t.pool, cfg).await;
    drain(&mut again).await;
    assert_eq!(db::get_job(&t.pool, job).await.unwrap().state, JobState::Scheduled);
    assert_eq!(pending_count(&mut r, &c.id).await, 0);
}

#[tokio::test]
async fn entries_of_a_dead_consumer_are_claimed() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    let mut r = conn().await;
    publish(&mut r, &c.id, "s-1", job_state(job, None, State::Scheduled, 1, now_ms(), None, vec![], None)).await;
    // A consumer that reads and dies before acknowledging.
    let group = api_group(&t.pool).await;
    let _: () = r.xgroup_create_mkstream(keys::event_stream(&c.id), &group, "0").await.unwrap();
    let _: redis::Value = redis::cmd("XREADGROUP")
        .arg("GROUP")
        .arg(&group)
        .arg("dead-replica")
        .arg("COUNT")
        .arg(10)
        .arg("STREAMS")
        .arg(keys::event_stream(&c.id))
        .arg(">")
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(pending_count(&mut r, &c.id).await, 1);
    // claim_idle zero: anything pending elsewhere counts as abandoned.
    let cfg = IngestConfig { claim_idle: Duration::from_millis(0), ..config() };
    let (mut ing, _) = ingester(&t.pool, cfg).await;
    drain(&mut ing).await;
    assert_eq!(db::get_job(&t.pool, job).await.unwrap().state, JobState::Scheduled);
    assert_eq!(pending_count(&mut r, &c.id).await, 0);
}

#[tokio::test]
async fn ledger_intervals_open_and_close_exactly_once() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &c.id, 2, 2).await;
    let mut r = conn().await;
    publish(&mut r, &c.id, "inv-1", Event::Inventory { nodes: vec![a100_node("n1", 4)] }).await;
    let t0 = Utc::now() - chrono::Duration::minutes(10);
    let t1 = t0 + chrono::Duration::minutes(5);
    let devs = |a, b| vec![DeviceRef::share(a, 1000), DeviceRef::share(b, 1000)];
    let run0 = job_state(job, Some(("main", 0)), State::Running, 1, ms(t0), Some("n1"), devs(0, 1), None);
    let run1 = job_state(job, Some(("main", 1)), State::Running, 1, ms(t0), Some("n1"), devs(2, 3), None);
    let with_exit = |mut e: Event, how: ReplicaExit| {
        if let Event::JobState { exit, .. } = &mut e {
            *exit = Some(how);
        }
        e
    };
    let done0 = with_exit(
        job_state(job, Some(("main", 0)), State::Succeeded, 1, ms(t1), Some("n1"), devs(0, 1), None),
        ReplicaExit::COMPLETED,
    );
    let evict1 = with_exit(
        job_state(job, Some(("main", 1)), State::Evicted, 1, ms(t1), Some("n1"), devs(2, 3), Some("preempted")),
        ReplicaExit::new(None, Termination::Stopped),
    );
    for (id, ev) in
        [("r0", &run0), ("r1", &run1), ("r0", &run0), ("d0", &done0), ("e1", &evict1), ("d0", &done0), ("r1", &run1)]
    {
        publish(&mut r, &c.id, id, ev.clone()).await;
    }
    let (mut ing, _) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;

    let rows = ledger(&t.pool, job).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (_, model, milli, started, ended, _) in &rows {
        assert_eq!(model, "A100-80GB");
        assert_eq!(*milli, 2000);
        assert_eq!(ms(*started), ms(t0));
        assert_eq!(ended.map(ms), Some(ms(t1)));
    }
    assert!(!rows[0].5, "succeeded: not ended by preemption");
    assert!(rows[1].5, "evicted: ended by preemption");
    let exits: Vec<(i32, Option<i32>, Option<String>)> =
        sqlx::query_as("SELECT index, exit_code, termination FROM replicas WHERE job_id = $1 ORDER BY index")
            .bind(job)
            .fetch_all(&t.pool)
            .await
            .unwrap();
    assert_eq!(
        exits,
        [(0, Some(0), Some("completed".to_owned())), (1, None, Some("stopped".to_owned()))],
        "each replica says how it ended"
    );
    let user: (i64,) = sqlx::query_as("SELECT DISTINCT user_id FROM usage_ledger WHERE job_id = $1")
        .bind(job)
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(user.0, f.user_id);
}

#[tokio::test]
async fn metrics_become_job_utilization_and_capacity_is_stored() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &c.id, 1, 2).await;
    let mut r = conn().await;
    publish(&mut r, &c.id, "h", Event::Hello { version: "0.1.0".into(), capabilities: vec!["sim".into()] }).await;
    publish(&mut r, &c.id, "inv", Event::Inventory { nodes: vec![a100_node("n1", 4)] }).await;
    let devs = vec![DeviceRef::share(0, 1000), DeviceRef::share(1, 1000)];
    publish(
        &mut r,
        &c.id,
        "run",
        job_state(job, Some(("main", 0)), State::Running, 1, now_ms(), Some("n1"), devs, None),
    )
    .await;
    let g = |index, busy, mem| GpuMetrics {
        node: "n1".into(),
        index,
        busy_pct: busy,
        memory_used_mib: mem,
        power_w: None,
        temperature_c: None,
    };
    publish(
        &mut r,
        &c.id,
        "m1",
        Event::Metrics { gpus: vec![g(0, 40.0, 1000), g(1, 60.0, 3000), g(3, 99.0, 5)], replicas: vec![] },
    )
    .await;
    let usage = |job: i64, replica: u32, cpu_milli: u64| ReplicaUsage {
        job: job as u64,
        task: "main".into(),
        replica,
        cpu_milli,
        memory_mib: 2048,
        disk_read_bps: 100,
        net_rx_bps: 7,
        ..ReplicaUsage::default()
    };
    // Readings of a replica that does not run (main/1) or of a job not here are dropped.
    let replicas = vec![usage(job, 0, 1500), usage(job, 1, 9000), usage(job + 1000, 0, 9000)];
    publish(&mut r, &c.id, "m2", Event::Metrics { gpus: vec![g(0, 80.0, 2000), g(1, 100.0, 4000)], replicas }).await;
    publish(&mut r, &c.id, "m3", Event::Metrics { gpus: vec![], replicas: vec![usage(job, 0, 500)] }).await;
    let summary = grus_protocol::wire::CapacitySummary {
        models: vec![grus_protocol::wire::ModelCapacity {
            model: "A100-80GB".into(),
            total_gpus: 4,
            free_whole_per_node: vec![2],
            ..Default::default()
        }],
        ..Default::default()
    };
    publish(&mut r, &c.id, "cap", Event::Capacity { summary: summary.clone() }).await;
    let (mut ing, _) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;

    let u = db::ingest::job_utilization(&t.pool, job).await.unwrap().expect("utilization");
    assert_eq!(u.samples, 4, "device 3 is not the job's");
    assert!((u.busy_pct_sum / 4.0 - 70.0).abs() < 1e-6);
    assert_eq!(u.busy_pct_max, 100.0);
    assert_eq!(u.memory_used_mib_max, 4000);
    assert_eq!(u.last_busy_pct, Some(90.0));
    // The same samples over time, at both resolutions (one bucket each, or two if the
    // messages straddled a boundary).
    let history: Vec<(i32, i64, f64, f32)> = sqlx::query_as(
        "SELECT resolution_s, sum(samples)::bigint, sum(busy_pct_sum), max(busy_pct_max)
         FROM job_metric_buckets WHERE job_id = $1 GROUP BY 1 ORDER BY 1",
    )
    .bind(job)
    .fetch_all(&t.pool)
    .await
    .unwrap();
    assert_eq!(history, [(10, 4, 280.0, 100.0), (60, 4, 280.0, 100.0)]);
    assert_eq!((u.usage_samples, u.cpu_milli_max, u.cpu_milli_sum, u.memory_mib_max), (2, 1500, 2000.0, 2048));
    let latest: Vec<(i64, i64, i64)> = sqlx::query_as("SELECT cpu_milli, disk_read_bps, net_rx_bps FROM replica_usage")
        .fetch_all(&t.pool)
        .await
        .unwrap();
    assert_eq!(latest, [(500, 100, 7)], "one row, the latest reading of the running replica");
    let usage_history: Vec<(i32, i64, f64)> = sqlx::query_as(
        "SELECT resolution_s, sum(usage_samples)::bigint, sum(cpu_milli_sum) FROM job_metric_buckets
         WHERE job_id = $1 GROUP BY 1 ORDER BY 1",
    )
    .bind(job)
    .fetch_all(&t.pool)
    .await
    .unwrap();
    assert_eq!(usage_history, [(10, 2, 2000.0), (60, 2, 2000.0)]);
    // The cluster's history: one sample per device per message (m1: three, m2: two).
    let cluster_history: Vec<(i64, f64)> = sqlx::query_as(
        "SELECT sum(samples)::bigint, sum(busy_pct_sum) FROM cluster_metric_buckets
         WHERE cluster_id = $1 AND resolution_s = 60",
    )
    .bind(&c.id)
    .fetch_all(&t.pool)
    .await
    .unwrap();
    assert_eq!(cluster_history, [(5, 379.0)]);
    let cluster = db::get_cluster(&t.pool, &c.id).await.unwrap();
    let stored: grus_protocol::wire::CapacitySummary = serde_json::from_value(cluster.capacity.unwrap()).unwrap();
    assert_eq!(stored, summary);
    let info = db::ingest::agent_info(&t.pool, &c.id).await.unwrap();
    assert_eq!(info.agent_version.as_deref(), Some("0.1.0"));
    assert!(info.capacity_at.is_some());
    let nodes = db::ingest::cluster_nodes(&t.pool, &c.id).await.unwrap();
    assert_eq!(nodes.len(), 1);
    assert_eq!(db::ingest::allocated_milli(&t.pool, &c.id).await.unwrap().values().sum::<u32>(), 2000);
}

#[tokio::test]
async fn loss_timeout_parks_running_jobs_and_leaves_unplaced_ones_to_their_deadline_then_the_agent_returns() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let lost = TestCluster::new(&t.pool).await;
    let other = TestCluster::new(&t.pool).await;
    let unstarted = dispatched_job(&t.pool, &f, &lost.id, 1, 1).await;
    let running = dispatched_job(&t.pool, &f, &lost.id, 1, 1).await;
    let mut r = conn().await;
    publish(&mut r, &lost.id, "run", job_state(running, None, State::Running, 1, now_ms(), None, vec![], None)).await;
    let (mut ing, _) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;
    assert_eq!(db::get_job(&t.pool, running).await.unwrap().state, JobState::Running);

    // Last heartbeat five minutes ago, and no heartbeat key: silent past the 60 s timeout.
    sqlx::query("UPDATE clusters SET health = 'healthy', last_heartbeat = now() - interval '5 minutes' WHERE id = $1")
        .bind(&lost.id)
        .execute(&t.pool)
        .await
        .unwrap();
    let mut monitor = monitor(&t.pool).await;
    let health = monitor.tick().await.unwrap();
    assert!(health.contains(&(lost.id.clone(), Health::Unreachable)), "{health:?}");
    assert!(health.contains(&(other.id.clone(), Health::Unknown)), "never heard from");
    assert_eq!(db::get_cluster(&t.pool, &lost.id).await.unwrap().health, "unreachable");
    // Silence does not tell whether a paused agent is about to place it: its answer deadline
    // decides, not the loss.
    assert_eq!(db::get_job(&t.pool, unstarted).await.unwrap().state, JobState::Dispatched);
    assert_eq!(dispatch_of(&t.pool, unstarted, 1).await.0, "pending");
    assert_eq!(db::get_job(&t.pool, running).await.unwrap().state, JobState::Unknown);
    time_out(&t.pool, unstarted, 1).await;
    // A second tick changes nothing more.
    monitor.tick().await.unwrap();
    assert_eq!(db::get_job(&t.pool, running).await.unwrap().state, JobState::Unknown);

    // The allocator re-dispatches the unstarted job elsewhere (epoch 2) ...
    assert_eq!(redispatch(&t.pool, unstarted, &other.id).await, 2);
    // ... and the lost agent comes back: heartbeat, then a snapshot with both jobs under epoch 1.
    let _: () = r.set_ex(keys::heartbeat_key(&lost.id), "{}", 30).await.unwrap();
    let health = monitor.tick().await.unwrap();
    assert!(health.contains(&(lost.id.clone(), Health::Healthy)));
    let snap = |job: i64| JobSnapshot {
        job: job as u64,
        epoch: 1,
        state: State::Running,
        replicas: vec![ReplicaSnapshot {
            task: "main".into(),
            replica: 0,
            state: State::Running,
            node: Some("n1".into()),
            devices: vec![DeviceRef::share(0, 1000)],
        }],
    };
    publish(
        &mut r,
        &lost.id,
        "snap",
        Event::Snapshot { jobs: vec![snap(unstarted), snap(running)], inventory: vec![] },
    )
    .await;
    drain(&mut ing).await;

    assert_eq!(db::get_job(&t.pool, running).await.unwrap().state, JobState::Running, "reported again: running");
    assert_eq!(db::replicas(&t.pool, running).await.unwrap()[0].state, grus_api::domain::UnitState::Running);
    let moved = db::get_job(&t.pool, unstarted).await.unwrap();
    assert_eq!((moved.state, moved.epoch), (JobState::Dispatched, 2), "the stale epoch changes nothing");
    assert_eq!(
        commands(&mut r, &lost.id).await,
        vec![
            Command::Resync { reason: "the cluster was unreachable past the loss timeout".into() },
            Command::Cancel { job: unstarted as u64, epoch: 1 }
        ],
        "back from a loss, the cluster is asked for its snapshot"
    );
}

#[tokio::test]
async fn a_placement_appended_after_the_answer_deadline_times_the_dispatch_out() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let late = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    let in_time = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    for (job, by) in [(late, "now() - interval '1 second'"), (in_time, "now() + interval '1 hour'")] {
        sqlx::query(&format!("UPDATE dispatches SET answer_by = {by} WHERE job_id = $1"))
            .bind(job)
            .execute(&t.pool)
            .await
            .unwrap();
    }
    let mut r = conn().await;
    for job in [late, in_time] {
        let placed = job_state(job, Some(("main", 0)), State::Placed, 1, now_ms(), Some("n1"), vec![], None);
        publish(&mut r, &c.id, &format!("placed-{job}"), placed).await;
        let scheduled = job_state(job, None, State::Scheduled, 1, now_ms(), None, vec![], None);
        publish(&mut r, &c.id, &format!("scheduled-{job}"), scheduled).await;
    }
    let (mut ing, _) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;

    // Redis appended the late one's placement after its deadline: given up as if unanswered, its
    // replica waiting again, a Cancel owed to the agent (which reads the same verdict off the
    // entry and launches nothing).
    assert_eq!(db::get_job(&t.pool, late).await.unwrap().state, JobState::Rejected);
    assert_eq!(dispatch_of(&t.pool, late, 1).await.0, "timed_out");
    assert_eq!(db::replicas(&t.pool, late).await.unwrap()[0].state, grus_api::domain::UnitState::Pending);
    let owed = db::dispatch::owed_cancels(&t.pool).await.unwrap();
    assert!(owed.iter().any(|o| (o.job_id, o.epoch) == (late, 1)), "{owed:?}");
    assert_eq!(db::get_job(&t.pool, in_time).await.unwrap().state, JobState::Scheduled);

    // Should the agent have judged otherwise (a copy of its report appended later), it gives the
    // placed job back: the control plane sends it elsewhere.
    let back = job_state(in_time, None, State::Rejected, 1, now_ms(), None, vec![], Some("placed after the deadline"));
    publish(&mut r, &c.id, "given-back", back).await;
    drain(&mut ing).await;
    assert_eq!(db::get_job(&t.pool, in_time).await.unwrap().state, JobState::Rejected);
    assert_eq!(db::replicas(&t.pool, in_time).await.unwrap()[0].state, grus_api::domain::UnitState::Pending);
}

/// The allocator's timeout of dispatch `job@epoch` (its answer deadline passed).
async fn time_out(pool: &sqlx::PgPool, job: i64, epoch: i64) {
    let mut tx = pool.begin().await.unwrap();
    let by = db::Cause { cause: "answer deadline passed", actor: "system:allocator" };
    assert!(db::dispatch::time_out(&mut tx, job, epoch, "not placed in time", by).await.unwrap());
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn a_cancel_answered_after_a_timed_out_dispatch_does_not_cancel_the_job() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let lost = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &lost.id, 1, 1).await;
    sqlx::query("UPDATE clusters SET health = 'healthy', last_heartbeat = now() - interval '5 minutes' WHERE id = $1")
        .bind(&lost.id)
        .execute(&t.pool)
        .await
        .unwrap();
    let mut monitor = monitor(&t.pool).await;
    monitor.tick().await.unwrap();
    time_out(&t.pool, job, 1).await;
    assert_eq!(db::get_job(&t.pool, job).await.unwrap().state, JobState::Rejected);
    assert_eq!(dispatch_of(&t.pool, job, 1).await.0, "timed_out");

    // The silent agent comes back and answers the Cancel of its timed-out dispatch, before the
    // allocator has re-dispatched the job: the job nobody cancelled keeps waiting.
    let mut r = conn().await;
    let cancelled = job_state(job, None, State::Cancelled, 1, now_ms(), None, vec![], Some("cancelled by the api"));
    publish(&mut r, &lost.id, "late-cancel", cancelled).await;
    let failed = job_state(job, Some(("main", 0)), State::Cancelled, 1, now_ms(), None, vec![], None);
    publish(&mut r, &lost.id, "late-replica", failed).await;
    let (mut ing, metrics) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;

    assert_eq!(db::get_job(&t.pool, job).await.unwrap().state, JobState::Rejected, "still waiting for a cluster");
    assert_eq!(db::replicas(&t.pool, job).await.unwrap()[0].state, grus_api::domain::UnitState::Pending);
    assert_eq!(metrics.stale.get(), 2);
    let other = TestCluster::new(&t.pool).await;
    assert_eq!(redispatch(&t.pool, job, &other.id).await, 2, "and is dispatched again");
}

#[tokio::test]
async fn snapshot_without_a_running_job_fails_it() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let gone = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    let waiting = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    let mut r = conn().await;
    publish(
        &mut r,
        &c.id,
        "run",
        job_state(
            gone,
            Some(("main", 0)),
            State::Running,
            1,
            now_ms(),
            Some("n1"),
            vec![DeviceRef::share(0, 500)],
            None,
        ),
    )
    .await;
    publish(&mut r, &c.id, "run-job", job_state(gone, None, State::Running, 1, now_ms(), None, vec![], None)).await;
    publish(&mut r, &c.id, "snap", Event::Snapshot { jobs: vec![], inventory: vec![] }).await;
    let (mut ing, _) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;
    assert_eq!(db::get_job(&t.pool, gone).await.unwrap().state, JobState::Failed);
    assert!(ledger(&t.pool, gone).await.iter().all(|row| row.4.is_some()), "its usage interval is closed");
    assert_eq!(db::get_job(&t.pool, waiting).await.unwrap().state, JobState::Dispatched, "a dispatch may be unread");
}

// ---- GraphQL: clusters, registerCluster, rotateAgentToken ----

#[tokio::test]
async fn cluster_queries_and_admin_mutations_are_authorized() {
    let t = TestDb::new().await;
    let pool = t.pool.clone();
    seed::platform_admin(&pool, "root").await;
    // What `--agent-redis-url` / `--agent-chart` give the server.
    let agents = AgentInstall {
        redis_url: "rediss://redis.grus.example.com:6380".into(),
        chart: "./helm/grus-agent".into(),
        api_url: None,
    };
    let app =
        TestApi::new(&pool).without_notifier().without_admission_batcher().jobs_cache(false).agents(agents).router();
    let id = unique("g");
    let register = "mutation R($id: String!, $labels: JSON) { registerCluster(id: $id, displayName: \"GPU east\", labels: $labels) { agentToken helmInstallCommand cluster { id displayName health labels } } }";
    let vars = json!({ "id": id, "labels": { "region": "east" } });

    assert_eq!(code(&gql(&app, None, register, vars.clone()).await), "UNAUTHENTICATED");
    assert_eq!(code(&gql(&app, Some("alice"), register, vars.clone()).await), "FORBIDDEN");
    assert_eq!(code(&gql(&app, Some("root"), register, json!({ "id": "Bad_Id" })).await), "VALIDATION");
    assert_eq!(code(&gql(&app, Some("root"), register, json!({ "id": id, "labels": { "n": 1 } })).await), "VALIDATION");
    let ok = gql(&app, Some("root"), register, vars.clone()).await;
    let payload = &ok["data"]["registerCluster"];
    let token = payload["agentToken"].as_str().expect("token").to_owned();
    // The chart's real values keys (helm/grus-agent; grus-helm-tests renders the chart with them).
    assert_eq!(
        payload["helmInstallCommand"],
        format!(
            "helm upgrade --install grus-agent ./helm/grus-agent --namespace grus-system --create-namespace \
             --set cluster.id={id} --set redis.url=rediss://redis.grus.example.com:6380"
        )
    );
    assert_eq!(payload["cluster"]["displayName"], "GPU east");
    assert_eq!(payload["cluster"]["labels"], json!({ "region": "east" }));
    assert_eq!(db::cluster_by_token_hash(&pool, &hash_token(&token)).await.unwrap().unwrap().id, id);
    assert_eq!(code(&gql(&app, Some("root"), register, vars.clone()).await), "CONFLICT");
    let none: Option<db::Cluster> = db::cluster_by_token_hash(&pool, &hash_token("grus_agent_guess")).await.unwrap();
    assert!(none.is_none());

    // Any signed-in user reads the fleet; nobody anonymous.
    let list = "{ clusters { id health capacity { model } nodes { name gpus { model allocatedMilli busyPct } } } }";
    assert_eq!(code(&gql(&app, None, list, json!({})).await), "UNAUTHENTICATED");
    let seen = gql(&app, Some("alice"), list, json!({})).await;
    assert!(seen["data"]["clusters"].as_array().unwrap().iter().any(|c| c["id"] == id.as_str()), "{seen}");
    let one = "query C($id: String!) { cluster(id: $id) { id health } }";
    assert_eq!(gql(&app, Some("alice"), one, json!({ "id": id })).await["data"]["cluster"]["health"], "unknown");
    assert_eq!(code(&gql(&app, Some("alice"), one, json!({ "id": "nope" })).await), "NOT_FOUND");

    let rotate = "mutation R($id: String!) { rotateAgentToken(clusterId: $id) { agentToken } }";
    assert_eq!(code(&gql(&app, Some("alice"), rotate, json!({ "id": id })).await), "FORBIDDEN");
    assert_eq!(code(&gql(&app, Some("root"), rotate, json!({ "id": "nope" })).await), "NOT_FOUND");
    let rotated = gql(&app, Some("root"), rotate, json!({ "id": id })).await;
    let fresh = rotated["data"]["rotateAgentToken"]["agentToken"].as_str().expect("new token").to_owned();
    assert_ne!(fresh, token);
    assert!(db::cluster_by_token_hash(&pool, &hash_token(&token)).await.unwrap().is_none(), "old token dead");
    assert_eq!(db::cluster_by_token_hash(&pool, &hash_token(&fresh)).await.unwrap().unwrap().id, id);
}

/// An elastic job grows beyond the replicas it was submitted with (up to its maximum), and a
/// replica it gave back in a shrink runs again: both are recorded and billed, whatever their
/// index; an index at or beyond the maximum, or of a job that is not elastic, stays unknown.
#[tokio::test]
async fn replicas_an_elastic_job_grows_are_recorded_up_to_its_maximum() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let elastic = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    sqlx::query("UPDATE jobs SET spec = jsonb_set(spec, '{elastic}', '{\"min\": 1, \"max\": 3}') WHERE id = $1")
        .bind(elastic)
        .execute(&t.pool)
        .await
        .unwrap();
    let plain = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    let mut r = conn().await;
    publish(&mut r, &c.id, "inv-1", Event::Inventory { nodes: vec![a100_node("n1", 4)] }).await;
    let t0 = Utc::now() - chrono::Duration::minutes(10);
    let at = |m: i64| ms(t0 + chrono::Duration::minutes(m));
    let dev = |i| vec![DeviceRef::share(i, 1000)];
    let run = |job, i: u32, m| job_state(job, Some(("main", i)), State::Running, 1, at(m), Some("n1"), dev(i), None);
    let evicted = job_state(elastic, Some(("main", 2)), State::Evicted, 1, at(2), Some("n1"), dev(2), Some("shrunk"));
    let events = [
        ("a", run(elastic, 0, 0)),
        ("b", run(elastic, 2, 0)),
        ("c", run(elastic, 3, 0)),
        ("d", evicted),
        ("e", run(elastic, 2, 4)),
        ("f", run(plain, 1, 0)),
    ];
    for (id, ev) in &events {
        publish(&mut r, &c.id, id, ev.clone()).await;
    }
    let (mut ing, _) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;

    let indexes = |job: i64| {
        let pool = t.pool.clone();
        async move {
            sqlx::query_as::<_, (i32, String)>("SELECT index, state FROM replicas WHERE job_id = $1 ORDER BY index")
                .bind(job)
                .fetch_all(&pool)
                .await
                .unwrap()
        }
    };
    assert_eq!(indexes(elastic).await, [(0, "running".to_string()), (2, "running".to_string())]);
    assert_eq!(indexes(plain).await, [(0, "pending".to_string())], "not elastic: index 1 stays unknown");
    // Replica 2 ran twice: the first run ended by the shrink, the second open.
    let rows = ledger(&t.pool, elastic).await;
    assert_eq!(rows.len(), 3, "{rows:?}");
    let ended: Vec<_> = rows.iter().filter(|row| row.4.is_some()).collect();
    assert_eq!(ended.len(), 1, "{rows:?}");
    assert!(ended[0].5 && ended[0].4.map(ms) == Some(at(2)), "ended by the shrink: {rows:?}");
    let reopened = rows.iter().filter(|row| row.4.is_none() && ms(row.3) == at(4)).count();
    assert_eq!(reopened, 1, "the given-back replica runs again: {rows:?}");
}

/// A running job its user suspends is evicted and, once its cluster reports it preempted,
/// waits suspended (holding no quota) instead of being requeued; resuming admits it again with
/// its replicas back to pending.
#[tokio::test]
async fn a_running_job_suspended_by_its_user_ends_suspended_not_requeued() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    // What admission stores with a job: resuming checks it against the queue's usage again.
    sqlx::query("INSERT INTO job_demands (job_id, resource, amount) VALUES ($1, 'gpu', 1000)")
        .bind(job)
        .execute(&t.pool)
        .await
        .unwrap();
    let mut r = conn().await;
    publish(&mut r, &c.id, "run", job_state(job, None, State::Running, 1, now_ms(), None, vec![], None)).await;
    let (mut ing, _) = ingester(&t.pool, config()).await;
    drain(&mut ing).await;
    let by = db::Cause { cause: "suspended by user:x", actor: "user:x" };
    let mut tx = t.pool.begin().await.unwrap();
    let done = db::suspend::suspend_job(&mut tx, job, 5, by).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(done, db::suspend::Suspension::Stopping { cluster: c.id.clone() });
    assert_eq!(db::get_job(&t.pool, job).await.unwrap().state, JobState::Preempting);
    let grace: Option<i32> = sqlx::query_scalar("SELECT evict_grace_s FROM dispatches WHERE job_id = $1")
        .bind(job)
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(grace, Some(5), "an Evict is owed to the cluster");
    publish(&mut r, &c.id, "gone", job_state(job, None, State::Preempted, 1, now_ms(), None, vec![], None)).await;
    drain(&mut ing).await;
    let stored = db::get_job(&t.pool, job).await.unwrap();
    assert_eq!(stored.state, JobState::Suspended, "not requeued");
    let mut tx = t.pool.begin().await.unwrap();
    let by = db::Cause { cause: "resumed by user:x", actor: "user:x" };
    let resumed = grus_api::admission::resume(&mut tx, job, by).await.unwrap();
    tx.commit().await.unwrap();
    assert!(matches!(resumed, grus_api::admission::Admission::Admitted { .. }));
    assert_eq!(db::get_job(&t.pool, job).await.unwrap().state, JobState::Admitted);
    let states: Vec<String> =
        sqlx::query_scalar("SELECT state FROM replicas WHERE job_id = $1").bind(job).fetch_all(&t.pool).await.unwrap();
    assert!(states.iter().all(|s| s == "pending"), "{states:?}");
}

#[tokio::test]
async fn metric_history_keeps_ten_second_buckets_a_day_and_minute_buckets_a_month() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "p").await;
    let c = TestCluster::new(&t.pool).await;
    let job = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    let now = Utc::now();
    let sample = grus_api::domain::reports::JobSample {
        samples: 1,
        busy_sum: 50.0,
        busy_max: 50.0,
        memory_sum: 100.0,
        memory_max: 100,
    };
    let usage = grus_api::domain::reports::JobUsage { cpu_milli: 4000, memory_mib: 512, ..Default::default() };
    let mut conn = t.pool.acquire().await.unwrap();
    for age in [chrono::Duration::minutes(1), chrono::Duration::days(2), chrono::Duration::days(40)] {
        db::metric_history::record(&mut conn, now - age, &[(job, &sample)]).await.unwrap();
        db::metric_history::record_usage(&mut conn, now - age, &[(job, usage)]).await.unwrap();
        db::metric_history::record_cluster(&mut conn, &c.id, now - age, &sample).await.unwrap();
    }
    // A job with resource readings and no GPU sample (CPU-only) has buckets too.
    let cpu_only = dispatched_job(&t.pool, &f, &c.id, 1, 1).await;
    db::metric_history::record_usage(&mut conn, now, &[(cpu_only, usage)]).await.unwrap();
    let cpu_points = db::metric_history::range(
        &t.pool,
        Subject::Job(cpu_only),
        10,
        now - chrono::Duration::hours(1),
        now + chrono::Duration::minutes(1),
    )
    .await
    .unwrap();
    assert_eq!(cpu_points.len(), 1);
    assert_eq!((cpu_points[0].busy_pct_avg, cpu_points[0].cpu_milli_avg), (None, Some(4000.0)));
    sqlx::query("DELETE FROM job_metric_buckets WHERE job_id = $1").bind(cpu_only).execute(&t.pool).await.unwrap();
    let count = |resolution: i32| {
        let pool = t.pool.clone();
        async move {
            let n: i64 =
                sqlx::query_scalar("SELECT count(*) FROM job_metric_buckets WHERE job_id = $1 AND resolution_s = $2")
                    .bind(job)
                    .bind(resolution)
                    .fetch_one(&pool)
                    .await
                    .unwrap();
            n
        }
    };
    assert_eq!((count(10).await, count(60).await), (3, 3));
    assert_eq!(
        db::metric_history::prune(&t.pool, now).await.unwrap(),
        6,
        "10 s: two days and 40 days; 60 s: 40 days; for the job and for the cluster"
    );
    assert_eq!((count(10).await, count(60).await), (1, 2));
    assert_eq!(db::metric_history::prune(&t.pool, now).await.unwrap(), 0, "bounded: nothing more to delete");
    let range = |subject| db::metric_history::range(&t.pool, subject, 60, now - chrono::Duration::days(3), now);
    let points = range(Subject::Job(job)).await.unwrap();
    assert_eq!(points.len(), 2);
    assert!(points[0].bucket < points[1].bucket, "oldest first");
    assert_eq!((points[1].busy_pct_avg, points[1].memory_used_mib_max), (Some(50.0), Some(100)));
    assert_eq!(
        (points[1].cpu_milli_max, points[1].memory_mib_avg),
        (Some(4000), Some(512.0)),
        "GPU and CPU in one bucket"
    );
    let cluster_points = range(Subject::Cluster(&c.id)).await.unwrap();
    assert_eq!(cluster_points.len(), 2);
    assert_eq!((cluster_points[1].busy_pct_avg, cluster_points[1].cpu_milli_avg), (Some(50.0), None));
}
