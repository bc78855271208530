//! End to end with the real agent: the `grus-agent` binary (sim backend) runs a job the api
//! dispatched, and the api's ingester turns its event stream into stored state (job states,
//! dispatch acknowledgement, usage ledger, inventory, capacity, heartbeat health).
//!
//! Opt-in (it needs the agent binary, which this crate cannot depend on):
//! `cargo build -p grus-agent && cargo test -p grus-api --features e2e --test api ingest_agent::`.
//! The only wait is a bounded poll for the agent process to make progress.

use std::sync::Arc;
use std::time::{Duration, Instant};

use grus_api::commands::CommandPublisher;
use grus_api::db;
use grus_api::domain::{Health, JobState};
use grus_api::ingest::health::{HealthConfig, HealthMonitor};
use grus_api::ingest::{IngestConfig, IngestMetrics, Ingester};
use grus_protocol::command::Command;
use grus_protocol::wire::JobSpec;
use grus_testkit::agent::Agent;
use grus_testkit::env::{redis_url, unique};
use grus_testkit::seed::{self, fixture};
use grus_testkit::spec;
use grus_testkit::streams::ClusterKeys;
use grus_testkit::TestDb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sim_agent_runs_a_dispatched_job_and_ingestion_records_it() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "vision").await;
    let cluster = unique("t-e2e");
    let _keys = ClusterKeys::new(&cluster, &redis_url());
    seed::cluster_with_token(&t.pool, &cluster, "grus_agent_e2e").await;

    // A one-GPU job, admitted and dispatched to the cluster under epoch 1.
    let job = seed::dispatched_job(&t.pool, &f, &cluster, 1, 1).await;
    let actor = format!("user:{}", f.user_id);
    let task = spec::task("main", 1, 1, "A100-80GB");
    let spec = JobSpec {
        name: "e2e".into(),
        preemptible: false,
        submitted_by: actor.clone(),
        ..spec::job(job as u64, vec![task], 1.0)
    };
    let redis = redis::Client::open(redis_url()).unwrap();
    let publisher = CommandPublisher::connect(&redis).await.unwrap();
    let dispatch = Command::Dispatch { job: Box::new(spec), epoch: 1, answer_by_ms: None };
    publisher.send(&cluster, &format!("dispatch-{job}-1"), 0, dispatch).await.unwrap();

    let dir = tempfile::tempdir().expect("temp dir");
    let (state, log) = (dir.path().join("state"), dir.path().join("agent.log"));
    let _agent = Agent::start(&cluster, "1x4xA100-80GB", state, &redis_url(), Default::default(), log);
    let metrics = Arc::new(IngestMetrics::default());
    let cfg = IngestConfig { block: Duration::from_millis(200), ..IngestConfig::new("e2e") };
    let mut ing = Ingester::connect(t.pool.clone(), &redis, metrics.clone(), cfg).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        ing.step().await.expect("ingest step");
        if db::get_job(&t.pool, job).await.unwrap().state == JobState::Succeeded {
            break;
        }
        assert!(Instant::now() < deadline, "the job did not succeed; events: {:?}", db::job_events(&t.pool, job).await);
    }

    let states: Vec<String> = db::job_events(&t.pool, job)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.task_id.is_none())
        .map(|e| e.to_state)
        .collect();
    assert_eq!(states.last().map(String::as_str), Some("succeeded"), "{states:?}");
    assert!(states.iter().any(|s| s == "running"), "{states:?}");
    let (outcome,): (String,) = sqlx::query_as("SELECT outcome FROM dispatches WHERE job_id = $1 AND epoch = 1")
        .bind(job)
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(outcome, "acknowledged");
    let rows: Vec<(String, i64, bool)> =
        sqlx::query_as("SELECT gpu_model, gpu_milli, ended_at IS NOT NULL FROM usage_ledger WHERE job_id = $1")
            .bind(job)
            .fetch_all(&t.pool)
            .await
            .unwrap();
    assert_eq!(rows, vec![("A100-80GB".to_string(), 1000, true)]);
    let info = db::ingest::agent_info(&t.pool, &cluster).await.unwrap();
    assert!(info.agent_version.is_some(), "Hello recorded");
    assert_eq!(db::ingest::cluster_nodes(&t.pool, &cluster).await.unwrap().len(), 1, "Inventory recorded");
    assert!(db::get_cluster(&t.pool, &cluster).await.unwrap().capacity.is_some(), "Capacity recorded");
    assert_eq!(metrics.dead_lettered.get(), 0);

    // The agent's heartbeat key makes the cluster healthy.
    let hc = HealthConfig { loss_timeout: Duration::from_secs(60), interval: Duration::from_secs(5) };
    let mut monitor = HealthMonitor::connect(t.pool.clone(), &redis, metrics, hc).await.unwrap();
    let health = monitor.tick().await.unwrap();
    assert!(health.contains(&(cluster.clone(), Health::Healthy)), "{health:?}");
    assert!(db::get_cluster(&t.pool, &cluster).await.unwrap().last_heartbeat.is_some());
}
