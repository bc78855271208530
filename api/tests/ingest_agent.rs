//! End to end with the real agent: the `grus-agent` binary (sim backend) runs a job the api
//! dispatched, and the api's ingester turns its event stream into stored state (job states,
//! dispatch acknowledgement, usage ledger, inventory, capacity, heartbeat health).
//!
//! Opt-in (it needs the agent binary, which this crate cannot depend on):
//! `cargo build -p grus-agent && cargo test -p grus-api --features e2e --test ingest_agent`.
//! The only wait is a bounded poll for the agent process to make progress.

mod support;

use std::process::{Child, Command as Process, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use grus_api::auth::web::hash_token;
use grus_api::commands::CommandPublisher;
use grus_api::db::{self, Cause};
use grus_api::domain::Health;
use grus_api::domain::JobState;
use grus_api::ingest::health::{HealthConfig, HealthMonitor};
use grus_api::ingest::{IngestConfig, IngestMetrics, Ingester};
use grus_protocol::command::Command;
use grus_protocol::keys;
use grus_protocol::wire::{JobSpec, ResourcesSpec, TaskSpec};
use support::{by_user, fixture, gpu_job, TestDb};

const SYSTEM: Cause<'static> = Cause { cause: "test setup", actor: "system:test" };

fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// Path of the `grus-agent` binary in this test's target directory. Cargo holds the target
/// directory's lock while tests run, so the test cannot build it itself: this target needs the
/// `e2e` feature, and the agent is built first (`cargo build -p grus-agent`).
fn agent_binary() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test> -> target/<profile>/grus-agent
    let bin = exe.parent().and_then(|d| d.parent()).expect("target directory").join("grus-agent");
    assert!(bin.exists(), "{} is missing: run `cargo build -p grus-agent` before this test", bin.display());
    bin
}

struct Agent {
    child: Child,
    cluster: String,
    _dir: tempfile::TempDir,
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Ok(mut c) = redis::Client::open(redis_url()).and_then(|c| c.get_connection()) {
            let keys = [
                keys::event_stream(&self.cluster),
                keys::command_stream(&self.cluster),
                keys::dead_letter_stream(&self.cluster),
                keys::heartbeat_key(&self.cluster),
            ];
            let _: Result<(), _> = redis::cmd("DEL").arg(&keys[..]).query(&mut c);
        }
    }
}

fn start_agent(cluster: &str) -> Agent {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = std::fs::File::create(dir.path().join("agent.log")).expect("log file");
    let child = Process::new(agent_binary())
        .args(["--cluster", cluster, "--redis", &redis_url(), "--backend", "sim", "--sim-nodes", "1x4xA100-80GB"])
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .env("RUST_LOG", "info")
        .env_remove("GRUS_METRICS_ADDR")
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .spawn()
        .expect("start grus-agent");
    Agent { child, cluster: cluster.to_owned(), _dir: dir }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sim_agent_runs_a_dispatched_job_and_ingestion_records_it() {
    let t = TestDb::new().await;
    let f = fixture(&t.pool, "vision").await;
    let cluster = format!("t-e2e-{}-{}", std::process::id(), chrono::Utc::now().timestamp_micros() & 0xffffff);
    db::register_cluster(&t.pool, &cluster, &serde_json::json!({}), &hash_token("grus_agent_e2e")).await.unwrap();

    // A one-GPU job, admitted and dispatched to the cluster under epoch 1.
    let mut tx = t.pool.begin().await.unwrap();
    let actor = format!("user:{}", f.user_id);
    let job = db::insert_job(&mut tx, &gpu_job(&f, "e2e", 1, 1, &["A100-80GB"]), by_user(&actor)).await.unwrap();
    db::transition_job(&mut tx, job.id, JobState::Admitted, SYSTEM).await.unwrap();
    let d = db::insert_dispatch(&mut tx, job.id, &cluster).await.unwrap();
    db::transition_job(&mut tx, job.id, JobState::Dispatched, SYSTEM).await.unwrap();
    tx.commit().await.unwrap();
    let spec = JobSpec {
        id: job.id as u64,
        name: "e2e".into(),
        project: "vision".into(),
        queue: "default".into(),
        priority: 100,
        preemptible: false,
        tasks: vec![TaskSpec {
            name: "main".into(),
            replicas: 1,
            image: "busybox".into(),
            command: vec![],
            env: Default::default(),
            resources: ResourcesSpec {
                gpus: 1,
                gpu_models: vec!["A100-80GB".into()],
                cpu_milli: 1000,
                memory_mib: 1024,
                ..Default::default()
            },
            topology: None,
        }],
        gang: None,
        elastic: None,
        policies: vec![],
        max_runtime_s: None,
        min_runtime_s: None,
        labels: [("grus.io/sim-duration-s".to_string(), "1".to_string())].into_iter().collect(),
        node_selector: Default::default(),
        submitted_by: actor.clone(),
        submitted_at_ms: chrono::Utc::now().timestamp_millis(),
    };
    let redis = redis::Client::open(redis_url()).unwrap();
    let publisher = CommandPublisher::connect(&redis).await.unwrap();
    let dispatch = Command::Dispatch { job: Box::new(spec), epoch: d.epoch as u64 };
    publisher.send(&cluster, &format!("dispatch-{}-{}", job.id, d.epoch), 0, dispatch).await.unwrap();

    let _agent = start_agent(&cluster);
    let metrics = Arc::new(IngestMetrics::default());
    let cfg = IngestConfig { block: Duration::from_millis(200), ..IngestConfig::new("e2e") };
    let mut ing = Ingester::connect(t.pool.clone(), &redis, metrics.clone(), cfg).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        ing.step().await.expect("ingest step");
        if db::get_job(&t.pool, job.id).await.unwrap().state == JobState::Succeeded {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the job did not succeed; events: {:?}",
            db::job_events(&t.pool, job.id).await
        );
    }

    let states: Vec<String> = db::job_events(&t.pool, job.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.task_id.is_none())
        .map(|e| e.to_state)
        .collect();
    assert_eq!(states.last().map(String::as_str), Some("succeeded"), "{states:?}");
    assert!(states.iter().any(|s| s == "running"), "{states:?}");
    let (outcome,): (String,) = sqlx::query_as("SELECT outcome FROM dispatches WHERE job_id = $1 AND epoch = 1")
        .bind(job.id)
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(outcome, "acknowledged");
    let rows: Vec<(String, i64, bool)> =
        sqlx::query_as("SELECT gpu_model, gpu_milli, ended_at IS NOT NULL FROM usage_ledger WHERE job_id = $1")
            .bind(job.id)
            .fetch_all(&t.pool)
            .await
            .unwrap();
    assert_eq!(rows, vec![("A100-80GB".to_string(), 1000, true)]);
    let info = db::ingest::agent_info(&t.pool, &cluster).await.unwrap();
    assert!(info.agent_version.is_some(), "Hello recorded");
    assert_eq!(db::ingest::cluster_nodes(&t.pool, &cluster).await.unwrap().len(), 1, "Inventory recorded");
    assert!(db::get_cluster(&t.pool, &cluster).await.unwrap().capacity.is_some(), "Capacity recorded");
    assert_eq!(metrics.dead_lettered.load(std::sync::atomic::Ordering::Relaxed), 0);

    // The agent's heartbeat key makes the cluster healthy.
    let hc = HealthConfig { loss_timeout: Duration::from_secs(60), interval: Duration::from_secs(5) };
    let mut monitor = HealthMonitor::connect(t.pool.clone(), &redis, metrics, hc).await.unwrap();
    let health = monitor.tick().await.unwrap();
    assert!(health.contains(&(cluster.clone(), Health::Healthy)), "{health:?}");
    assert!(db::get_cluster(&t.pool, &cluster).await.unwrap().last_heartbeat.is_some());
}
