//! The whole control plane end to end: the real `grus-api` binary (GraphQL, allocator loop,
//! event ingestion, health monitor) and the real `grus-agent` binary (sim backend) over the
//! local PostgreSQL and Redis. A researcher submits a gang job through GraphQL; the allocator
//! sends it to the only cluster whose GPUs fit; the agent runs it; ingestion records it, and
//! the usage ledger holds one closed interval per replica.
//!
//! Needs the agent built first (cargo holds the build lock while tests run):
//! `cargo build -p grus-agent && cargo test -p grus-api --features e2e --test control_plane_e2e`.
//! `scripts/test.sh` does both.

mod support;

use std::net::TcpListener;
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use grus_protocol::keys;
use serde_json::{json, Value};
use support::TestDb;

fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// A child process killed on drop, with its output in a temp file shown when a test fails.
struct Proc {
    child: Child,
    log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Proc {
    fn spawn(program: &std::path::Path, args: &[&str]) -> Proc {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("out.log");
        let file = std::fs::File::create(&log).expect("log file");
        let child = Process::new(program)
            .args(args)
            .env("RUST_LOG", "info")
            .env("GRUS_STATE_DIR", dir.path().join("state"))
            .env_remove("GRUS_METRICS_ADDR")
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("log"))
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
        Proc { child, log, _dir: dir }
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `grus-agent` binary next to this test's deps directory.
fn agent_binary() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test path");
    let bin = exe.parent().and_then(|d| d.parent()).expect("target directory").join("grus-agent");
    assert!(bin.exists(), "{} is missing: run `cargo build -p grus-agent` before this test", bin.display());
    bin
}

struct Api {
    base: String,
    http: reqwest::Client,
}

impl Api {
    /// Runs one GraphQL request as the dev user `user`; panics on transport errors and returns
    /// the whole response (data and errors).
    async fn gql(&self, user: &str, query: &str, variables: Value) -> Value {
        self.http
            .post(format!("{}/graphql", self.base))
            .header("x-grus-dev-user", user)
            .json(&json!({ "query": query, "variables": variables }))
            .send()
            .await
            .expect("POST /graphql")
            .json()
            .await
            .expect("JSON response")
    }

    async fn data(&self, user: &str, query: &str, variables: Value) -> Value {
        let response = self.gql(user, query, variables).await;
        assert!(response.get("errors").is_none(), "{query}: {response}");
        response["data"].clone()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gang_job_submitted_through_graphql_runs_on_the_cluster_that_fits_and_is_billed() {
    let t = TestDb::new().await;
    let suffix = format!("{}-{}", std::process::id(), chrono::Utc::now().timestamp_micros() & 0xffffff);
    let (small, big) = (format!("e2e-small-{suffix}"), format!("e2e-big-{suffix}"));
    let port = free_port();
    let server = Proc::spawn(
        std::path::Path::new(env!("CARGO_BIN_EXE_grus-api")),
        &[
            "serve",
            "--dev",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--database-url",
            &t.url,
            "--redis-url",
            &redis_url(),
            "--allocator-interval",
            "200ms",
            "--health-interval",
            "500ms",
            "--ingest-consumer",
            &format!("e2e-{suffix}"),
        ],
    );
    let api = Api { base: format!("http://127.0.0.1:{port}"), http: reqwest::Client::new() };
    let started = Instant::now();
    while api.http.get(format!("{}/healthz", api.base)).send().await.is_err() {
        assert!(started.elapsed() < Duration::from_secs(60), "grus-api did not start:\n{}", server.output());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The platform admin is whoever the operator marks; here, the dev user `admin`.
    let me = api.data("admin", "{ me { id } }", json!({})).await;
    let admin_id: i64 = me["me"]["id"].as_str().unwrap().parse().unwrap();
    grus_api::db::set_platform_admin(&t.pool, admin_id, true).await.unwrap();
    api.data("alice", "{ me { id } }", json!({})).await;

    for id in [&small, &big] {
        let r = api
            .data(
                "admin",
                "mutation($id: String!) { registerCluster(id: $id) { agentToken helmInstallCommand } }",
                json!({ "id": id }),
            )
            .await;
        assert!(r["registerCluster"]["agentToken"].as_str().unwrap().len() >= 32);
    }
    let tenant = api.data("admin", r#"mutation { createTenant(slug: "acme", name: "Acme") { id } }"#, json!({})).await;
    let project = api
        .data(
            "admin",
            r#"mutation($t: ID!) { createProject(tenantId: $t, slug: "vision", name: "Vision") { id queues { id name } } }"#,
            json!({ "t": tenant["createTenant"]["id"] }),
        )
        .await;
    let project_id = project["createProject"]["id"].clone();
    let queue_id = project["createProject"]["queues"][0]["id"].clone();
    api.data(
        "admin",
        r#"mutation($p: ID!) { addMember(projectId: $p, subject: "dev:alice", role: MEMBER) }"#,
        json!({ "p": project_id }),
    )
    .await;
    api.data(
        "admin",
        r#"mutation($q: ID!) { updateQuota(queueId: $q, resource: "gpu", guaranteed: 8000, limit: 8000) { id } }"#,
        json!({ "q": queue_id }),
    )
    .await;

    // Two clusters: one node of 2 GPUs (cannot hold the gang) and two nodes of 4.
    let agents: Vec<Proc> = [(&small, "1x2xA100-80GB"), (&big, "2x4xA100-80GB")]
        .into_iter()
        .map(|(cluster, nodes)| {
            Proc::spawn(
                &agent_binary(),
                &["--cluster", cluster, "--redis", &redis_url(), "--backend", "sim", "--sim-nodes", nodes],
            )
        })
        .collect();

    let submitted = api
        .data(
            "alice",
            r#"mutation($input: JobInput!) { submitJob(input: $input) { borrowed job { id state } } }"#,
            json!({ "input": {
                "name": "train",
                "project": "vision",
                "gang": { "minMembers": 2 },
                "labels": [{ "key": "grus.io/sim-duration-s", "value": "2" }],
                "tasks": [{
                    "name": "worker",
                    "replicas": 2,
                    "image": "busybox",
                    "resources": { "gpus": 2, "gpuModels": ["A100-80GB"], "cpuMilli": 1000, "memoryMib": 1024 }
                }]
            }}),
        )
        .await;
    let job_id = submitted["submitJob"]["job"]["id"].clone();
    assert_eq!(submitted["submitJob"]["borrowed"], json!(false));

    let query = r#"query($id: ID!) { job(id: $id) { state dispatches { epoch clusterId } } }"#;
    let started = Instant::now();
    let job = loop {
        let job = api.data("alice", query, json!({ "id": job_id })).await["job"].clone();
        if job["state"] == "SUCCEEDED" {
            break job;
        }
        assert!(
            !matches!(job["state"].as_str(), Some("FAILED" | "CANCELLED")),
            "job ended {job}\napi:\n{}",
            server.output()
        );
        if started.elapsed() > Duration::from_secs(120) {
            let logs: Vec<String> = agents.iter().map(Proc::output).collect();
            panic!("job did not succeed: {job}\napi:\n{}\nagents:\n{}", server.output(), logs.join("\n---\n"));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(job["dispatches"], json!([{ "epoch": 1, "clusterId": big }]), "one dispatch, to the cluster that fits");

    // One closed ledger interval per replica, 2 GPUs each, on the cluster that ran them.
    let rows: Vec<(String, i64, bool)> = sqlx::query_as(
        "SELECT cluster_id, gpu_milli, ended_at IS NOT NULL FROM usage_ledger WHERE job_id = $1 ORDER BY replica_id",
    )
    .bind(job_id.as_str().unwrap().parse::<i64>().unwrap())
    .fetch_all(&t.pool)
    .await
    .unwrap();
    assert_eq!(rows, vec![(big.clone(), 2000, true), (big.clone(), 2000, true)]);

    let clusters = api.data("alice", "{ clusters { id health } }", json!({})).await;
    for c in clusters["clusters"].as_array().unwrap() {
        assert_eq!(c["health"], "healthy", "{c}");
    }

    drop(agents);
    drop(server);
    if let Ok(mut c) = redis::Client::open(redis_url()).and_then(|c| c.get_connection()) {
        for cluster in [&small, &big] {
            let keys = [
                keys::event_stream(cluster),
                keys::command_stream(cluster),
                keys::dead_letter_stream(cluster),
                keys::heartbeat_key(cluster),
            ];
            let _: Result<(), _> = redis::cmd("DEL").arg(&keys[..]).query(&mut c);
        }
    }
}
