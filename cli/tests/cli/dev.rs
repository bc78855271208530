//! `grus dev` as a user runs it: the built binary as a process over the local PostgreSQL and
//! Redis, on a free loopback port, with a fresh database (dropped afterwards) and cluster ids
//! with a random prefix (the shared Redis holds other tests' streams; ours are deleted after).
//!
//! Needs PostgreSQL (`DATABASE_URL` server, default postgres://postgres@127.0.0.1:5432) and
//! Redis (`REDIS_URL`, default redis://127.0.0.1:6379).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use grus_testkit::db::DbName as Db;
use grus_testkit::env::{free_port, random_hex, redis_url};
use grus_testkit::streams::ClusterKeys;
use grus_testkit::Gql;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_grus");
/// Generous bounds for waiting (not assertions on speed): a loaded CI machine is slow.
const START_WAIT: Duration = Duration::from_secs(180);
const JOB_WAIT: Duration = Duration::from_secs(240);

/// A running `grus dev`; interrupted (then killed) when dropped.
struct Dev {
    child: Child,
    base: String,
    stdout: mpsc::Receiver<String>,
    rt: tokio::runtime::Runtime,
}

impl Dev {
    fn spawn(args: &[&str]) -> Child {
        Command::new(BIN)
            .arg("dev")
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start grus dev")
    }

    /// Starts it and waits for its banner.
    fn start(port: u16, db: &Db, prefix: &str, state: &Path) -> Dev {
        let listen = format!("127.0.0.1:{port}");
        let url = db.url();
        let redis = redis_url();
        let mut child = Dev::spawn(&[
            "--listen",
            &listen,
            "--database-url",
            &url,
            "--redis-url",
            &redis,
            "--cluster-prefix",
            prefix,
            "--state-dir",
            state.to_str().expect("utf-8 path"),
        ]);
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let err = child.stderr.take().expect("stderr");
        let (etx, erx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                text.push_str(&line);
                text.push('\n');
            }
            let _ = etx.send(text);
        });
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let mut dev = Dev { child, base: format!("http://{listen}"), stdout: rx, rt };
        let mut banner = Vec::new();
        let deadline = Instant::now() + START_WAIT;
        loop {
            match dev.stdout.recv_timeout(Duration::from_millis(500)) {
                Ok(line) if line.starts_with("Ctrl-C stops everything") => break,
                Ok(line) => banner.push(line),
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                Err(_) => {
                    let _ = dev.child.kill();
                    let _ = dev.child.wait();
                    let stderr = erx.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
                    panic!("grus dev did not start:\n{}\nstderr:\n{stderr}", banner.join("\n"));
                }
            }
        }
        let banner = banner.join("\n");
        assert!(banner.contains("Grus is running"), "{banner}");
        for user in ["admin", "alice", "bob"] {
            assert!(banner.contains(user), "the banner names the dev user {user}:\n{banner}");
        }
        dev
    }

    fn gql(&self, user: &str, query: &str, variables: Value) -> Value {
        self.rt.block_on(Gql::dev(&self.base, user).data(query, variables))
    }

    /// Sends Ctrl-C and waits for a clean exit.
    fn interrupt(mut self) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-INT", &pid]).status().expect("run kill");
        assert!(sent.success());
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "grus dev did not stop after Ctrl-C");
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(status.success(), "Ctrl-C is a clean stop: {status}");
        let rest: Vec<String> = self.stdout.try_iter().collect();
        assert!(rest.iter().any(|l| l == "Grus stopped."), "{rest:?}");
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill").args(["-INT", &self.child.id().to_string()]).status();
            for _ in 0..100 {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Everything seeded, as counts and names, to compare two starts.
fn inventory(dev: &Dev) -> Value {
    let d = dev.gql(
        "admin",
        "{ tenants { slug } projects { slug members { user { subject } role }
           queues { name weight quotas { resource guaranteed limit } } }
           priceBook { gpuModel listPricePerGpuHour contractedPricePerGpuHour }
           clusters { id }
           jobs(first: 100) { nodes { name project { slug } } } }",
        json!({}),
    );
    let mut jobs: Vec<String> = d["jobs"]["nodes"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| format!("{}/{}", j["project"]["slug"].as_str().unwrap_or("?"), j["name"].as_str().unwrap_or("?")))
        .collect();
    jobs.sort();
    json!({ "tenants": d["tenants"], "projects": d["projects"], "prices": d["priceBook"],
            "clusters": d["clusters"], "jobs": jobs })
}

#[test]
fn grus_dev_starts_seeds_runs_jobs_and_restarts_idempotently() {
    let db = Db::reserve();
    let prefix = format!("t{}-", &random_hex()[..12]);
    let _keys = [
        ClusterKeys::new(&format!("{prefix}east"), &redis_url()),
        ClusterKeys::new(&format!("{prefix}west"), &redis_url()),
    ];
    let state = tempfile::tempdir().expect("state dir");
    let port = free_port();

    let dev = Dev::start(port, &db, &prefix, state.path());
    // The banner waits for the first heartbeats; the api must agree.
    let clusters = dev.gql("alice", "{ clusters { id health capacity { model totalGpus } } }", json!({}));
    let mut ids: Vec<(String, String, String, i64)> = clusters["clusters"]
        .as_array()
        .expect("clusters")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_owned(),
                c["health"].as_str().unwrap_or_default().to_owned(),
                c["capacity"][0]["model"].as_str().unwrap_or_default().to_owned(),
                c["capacity"][0]["totalGpus"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        vec![
            (format!("{prefix}east"), "healthy".into(), "A100-80GB".into(), 32),
            (format!("{prefix}west"), "healthy".into(), "T4".into(), 16),
        ]
    );

    // Projects, members and queues with quotas, as alice and bob see them.
    let alice = dev.gql(
        "alice",
        "{ me { platformAdmin } projects { slug myRole queues { name quotas { resource guaranteed limit } } } }",
        json!({}),
    );
    assert_eq!(alice["me"]["platformAdmin"], false);
    let projects = alice["projects"].as_array().expect("projects");
    assert_eq!(projects.len(), 1, "alice is a member of demo only: {projects:?}");
    assert_eq!(projects[0]["slug"], "demo");
    assert_eq!(projects[0]["myRole"], "MEMBER");
    let queues: Vec<&str> =
        projects[0]["queues"].as_array().unwrap().iter().map(|q| q["name"].as_str().unwrap()).collect();
    assert!(queues.contains(&"default") && queues.contains(&"batch"), "{queues:?}");
    let default = projects[0]["queues"].as_array().unwrap().iter().find(|q| q["name"] == "default").unwrap();
    assert_eq!(default["quotas"], json!([{ "resource": "gpu", "guaranteed": 16000, "limit": 32000 }]));
    let bob = dev.gql("bob", "{ projects { slug myRole } }", json!({}));
    assert_eq!(bob["projects"], json!([{ "slug": "vision", "myRole": "MEMBER" }]));
    let admin = dev.gql("admin", "{ me { platformAdmin subject } tenants { slug } }", json!({}));
    assert_eq!(admin["me"], json!({ "platformAdmin": true, "subject": "dev:admin" }));
    assert_eq!(admin["tenants"], json!([{ "slug": "acme" }]));

    // A price for each simulated GPU model.
    let prices = dev.gql("alice", "{ priceBook { gpuModel listPricePerGpuHour } }", json!({}));
    let mut models: Vec<&str> =
        prices["priceBook"].as_array().unwrap().iter().map(|p| p["gpuModel"].as_str().unwrap()).collect();
    models.sort();
    assert_eq!(models, ["A100-80GB", "T4"]);

    // The seeded jobs: the small one succeeds; the one too big for any node waits and says why.
    let deadline = Instant::now() + JOB_WAIT;
    let jobs_query = "{ jobs(first: 50) { nodes { name state whyPending { summary } } } }";
    loop {
        let jobs = dev.gql("alice", jobs_query, json!({}));
        let nodes = jobs["jobs"]["nodes"].as_array().expect("jobs").clone();
        let state = |name: &str| nodes.iter().find(|j| j["name"] == name).map(|j| j["state"].clone());
        assert_eq!(nodes.len(), 4, "alice sees demo's four seeded jobs: {nodes:?}");
        let pending = nodes.iter().find(|j| j["name"] == "llm-pretrain").expect("the job that fits nowhere");
        assert!(
            !matches!(pending["state"].as_str(), Some("RUNNING" | "SUCCEEDED" | "SCHEDULED")),
            "16 GPUs in one replica fit no node: {pending}"
        );
        if state("bert-eval") == Some(json!("SUCCEEDED")) && pending["whyPending"]["summary"].is_string() {
            break;
        }
        assert!(Instant::now() < deadline, "bert-eval did not succeed: {nodes:?}");
        std::thread::sleep(Duration::from_millis(500));
    }
    logs_follow_a_job_to_its_exit_code(&dev);
    let first = inventory(&dev);
    dev.interrupt();

    // A second start on the same database seeds nothing twice.
    let dev = Dev::start(free_port(), &db, &prefix, state.path());
    let second = inventory(&dev);
    assert_eq!(first, second, "a restart adds nothing");
    assert_eq!(
        second["jobs"].as_array().map(Vec::len),
        Some(7),
        "6 jobs in demo (2 of them the logs test's), 1 in vision"
    );
    dev.interrupt();
}

/// `grus logs` against the running system: a job followed from before it starts to its end
/// prints its output live and exits 0; a failing one exits 10 after its stderr line; a finished
/// job's output can be read again; bad arguments and other projects' jobs are refused.
fn logs_follow_a_job_to_its_exit_code(dev: &Dev) {
    let config = tempfile::tempdir().expect("config dir");
    let grus = |who: &str, args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .env("GRUS_SERVER", &dev.base)
            .env("GRUS_DEV_USER", who)
            .env("XDG_CONFIG_HOME", config.path())
            .env("HOME", config.path())
            .output()
            .expect("run grus logs")
    };
    let submit = |name: &str, labels: Value| -> String {
        let input = json!({ "name": name, "project": "demo", "labels": labels, "tasks": [{ "name": "main",
            "image": "example/train:1", "command": ["python", "train.py"], "resources": { "gpus": 1 } }] });
        let v = dev.gql(
            "alice",
            "mutation($in: JobInput!) { submitJob(input: $in) { job { id } } }",
            json!({ "in": input }),
        );
        v["submitJob"]["job"]["id"].as_str().expect("a job id").to_owned()
    };
    let ok = submit("logs-ok", json!([{ "key": "grus.io/sim-duration-s", "value": "12" }]));
    let out = grus("alice", &["logs", &ok, "-f"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.first().is_some_and(|l| l.starts_with("[sim] replica 0 of task main placed on node")), "{stdout}");
    assert!(lines.contains(&"[sim] started: python train.py"), "{stdout}");
    assert!(lines.iter().any(|l| l.starts_with("step 2: python train.py loss=")), "{stdout}");
    assert_eq!(lines.last(), Some(&"[sim] exited with code 0"), "{stdout}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("step 1:")).count(), 1, "each line once: {stdout}");

    let failing = submit(
        "logs-fail",
        json!([{ "key": "grus.io/sim-duration-s", "value": "60" }, { "key": "grus.io/sim-fail-after-s", "value": "3" }]),
    );
    let out = grus("alice", &["logs", &failing, "--follow", "--timestamps"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(10), "a failed job's code: {stdout}");
    assert!(stdout.contains("[stderr] error: simulated failure"), "{stdout}");
    let out = grus("alice", &["job", &failing]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.lines().any(|l| l.contains("failed") && l.trim_end().ends_with("Error (1)")),
        "the replica's exit: {shown}"
    );

    // Read again once it ended: the last lines, from the agent.
    let out = grus("admin", &["logs", &ok, "--tail", "1"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[sim] exited with code 0\n");
    let out = grus("alice", &["logs", &ok, "--replica", "3"]);
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("replica"));
    assert_eq!(grus("bob", &["logs", &ok]).status.code(), Some(4), "bob is not in demo");
}

fn run_failing(args: &[&str]) -> String {
    let out = Command::new(BIN).arg("dev").args(args).env("RUST_LOG", "off").output().expect("run grus dev");
    assert!(!out.status.success(), "grus dev {args:?} must fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_non_loopback_listen_address_is_refused() {
    let err = run_failing(&["--listen", "0.0.0.0:0", "--database-url", "postgres://postgres@127.0.0.1:1/never"]);
    assert!(err.contains("only listens on a loopback address, not 0.0.0.0:0"), "{err}");
}

#[test]
fn unreachable_servers_say_what_to_start() {
    let closed = free_port();
    let err = run_failing(&[
        "--listen",
        "127.0.0.1:0",
        "--database-url",
        &format!("postgres://postgres@127.0.0.1:{closed}/grus_dev"),
    ]);
    assert!(err.contains(&format!("PostgreSQL does not answer at 127.0.0.1:{closed}: start it with")), "{err}");
    assert!(err.contains("pg_ctlcluster") && err.contains("or set DATABASE_URL"), "{err}");

    let db = Db::reserve();
    let closed = free_port();
    let err = run_failing(&[
        "--listen",
        "127.0.0.1:0",
        "--database-url",
        &db.url(),
        "--redis-url",
        &format!("redis://127.0.0.1:{closed}"),
    ]);
    assert!(err.contains(&format!("Redis does not answer at 127.0.0.1:{closed}")), "{err}");
    assert!(err.contains("redis-server") && err.contains("or set REDIS_URL"), "{err}");
}
