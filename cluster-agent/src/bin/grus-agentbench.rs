//! `grus-agentbench`: throughput of the real `grus-agent` binary through a real Redis.
//!
//! Starts the agent with the sim backend (default 1,000 nodes x 8 A100), queues `--jobs`
//! Dispatch commands on its command stream as the api would, and reads the event stream until
//! every job has succeeded. Reports commands applied per second (until the last one is
//! acknowledged), replica transitions per second (replica-level JobState events, first to
//! last), all events per second, and the agent's peak resident memory (VmHWM).
//!
//! ```sh
//! cargo build --release -p grus-agent --bins
//! /var/tmp/grus-target-agent/release/grus-agentbench --jobs 40000 --json
//! ```

use std::path::PathBuf;
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use clap::Parser;
use grus_protocol::codec::{encode, Envelope};
use grus_protocol::keys;
use grus_protocol::wire::{JobSpec, ResourcesSpec, TaskSpec};
use grus_protocol::Command;
use redis::streams::StreamRangeReply;
use redis::Commands;
use serde::Deserialize;

/// Measures the agent's command and event throughput through Redis.
#[derive(Debug, Parser)]
struct Args {
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    redis: String,
    /// Simulated nodes (nodes x GPUs x model).
    #[arg(long, default_value = "1000x8xA100-80GB")]
    nodes: String,
    /// Jobs to dispatch (one replica of one GPU each, unless changed).
    #[arg(long, default_value_t = 40_000)]
    jobs: u64,
    /// Tasks per job (each with `--replicas` replicas): one job of many tasks is the costly
    /// case for the agent's per-job work.
    #[arg(long, default_value_t = 1)]
    tasks: u32,
    #[arg(long, default_value_t = 1)]
    replicas: u32,
    #[arg(long, default_value_t = 1)]
    gpus: u32,
    /// How long each simulated replica runs.
    #[arg(long, default_value_t = 1.0)]
    duration_s: f64,
    /// Most jobs outstanding (dispatched, not yet succeeded); 0: all at once. The first
    /// window is sent as one burst, which measures commands per second.
    #[arg(long, default_value_t = 8_000)]
    window: u64,
    /// Give up after this long.
    #[arg(long, default_value_t = 300)]
    timeout_s: u64,
    /// The agent binary (default: `grus-agent` next to this one).
    #[arg(long)]
    agent_bin: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Deserialize)]
struct Peek {
    kind: String,
    #[serde(default)]
    body: PeekBody,
}

#[derive(Default, Deserialize)]
struct PeekBody {
    #[serde(default)]
    task: Option<String>,
    #[serde(default)]
    replica: Option<u32>,
    #[serde(default)]
    state: Option<String>,
}

struct Agent(Child);

/// The agent's state directory, removed at the end.
struct TempDir(PathBuf);

impl TempDir {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

fn spec(id: u64, args: &Args) -> JobSpec {
    JobSpec {
        id,
        name: format!("bench-{id}"),
        project: "bench".into(),
        queue: "default".into(),
        priority: 100,
        preemptible: true,
        may_preempt: true,
        tasks: (0..args.tasks.max(1))
            .map(|t| TaskSpec {
                name: if t == 0 { "main".into() } else { format!("task-{t}") },
                replicas: args.replicas,
                image: "bench".into(),
                command: Vec::new(),
                env: Default::default(),
                resources: ResourcesSpec {
                    gpus: args.gpus,
                    gpu_milli: None,
                    gpu_memory_mib: None,
                    gpu_models: Vec::new(),
                    cpu_milli: 1_000,
                    memory_mib: 1_024,
                    mig_profile: None,
                },
                topology: None,
            })
            .collect(),
        gang: None,
        elastic: None,
        policies: Vec::new(),
        max_runtime_s: None,
        min_runtime_s: None,
        predicted_runtime_s: None,
        labels: [("grus.io/sim-duration-s".to_string(), args.duration_s.to_string())].into_iter().collect(),
        node_selector: Default::default(),
        pools: Vec::new(),
        submitted_by: "bench".into(),
        submitted_at_ms: now_ms(),
        checkpoint: None,
        workspace: None,
        service: None,
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let agent_bin = match &args.agent_bin {
        Some(p) => p.clone(),
        None => std::env::current_exe()?.with_file_name("grus-agent"),
    };
    if !agent_bin.is_file() {
        bail!(
            "{} not found; build it (`cargo build --release -p grus-agent --bins`) or pass --agent-bin",
            agent_bin.display()
        );
    }
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH)?.subsec_nanos();
    let cluster = format!("bench-{}-{nanos:x}", std::process::id());
    let mut conn = redis::Client::open(args.redis.as_str())?.get_connection().context("connect to Redis")?;
    let result = run(&args, &agent_bin, &cluster, &mut conn);
    let names = [
        keys::command_stream(&cluster),
        keys::event_stream(&cluster),
        keys::heartbeat_key(&cluster),
        keys::dead_letter_stream(&cluster),
    ];
    let _: Result<i64, _> = conn.del(&names);
    result
}

fn run(args: &Args, agent_bin: &PathBuf, cluster: &str, conn: &mut redis::Connection) -> anyhow::Result<()> {
    let state = TempDir(std::env::temp_dir().join(cluster));
    std::fs::create_dir_all(state.path())?;
    let log = std::fs::File::create(state.path().join("agent.log"))?;
    let child = Process::new(agent_bin)
        .args(["--cluster", cluster, "--redis", &args.redis, "--backend", "sim", "--sim-nodes", &args.nodes])
        .arg("--state-dir")
        .arg(state.path().join("state"))
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("start {}", agent_bin.display()))?;
    let agent = Agent(child);
    let pid = agent.0.id();
    let evt = keys::event_stream(cluster);
    let cmd = keys::command_stream(cluster);

    // Wait for the agent's Snapshot: it is up and reading.
    let started = Instant::now();
    let mut last = loop {
        let reply: StreamRangeReply = conn.xrange_count(&evt, "-", "+", 100)?;
        let snapshot = reply.ids.iter().find(|e| {
            let raw: Vec<u8> = e.get(keys::PAYLOAD_FIELD).unwrap_or_default();
            serde_json::from_slice::<Peek>(&raw).is_ok_and(|p| p.kind == "Snapshot")
        });
        if let Some(e) = snapshot {
            break e.id.clone();
        }
        if started.elapsed() > Duration::from_secs(60) {
            bail!("the agent did not start; see {}", state.path().join("agent.log").display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let rss_idle = vm_hwm_kib(pid).unwrap_or(0);

    // The commands, encoded up front so that encoding is not measured.
    let payloads: Vec<String> = (1..=args.jobs)
        .map(|id| {
            let command = Command::Dispatch { job: Box::new(spec(id, args)), epoch: 1, answer_by_ms: None };
            encode(&Envelope::new(format!("bench-{id}"), cluster, now_ms(), command))
        })
        .collect();

    let window = if args.window == 0 { payloads.len() } else { args.window as usize };
    let t0 = Instant::now();
    // The first window at once: how fast the agent applies a burst of commands.
    let burst_last = xadd_all(conn, &cmd, &payloads[..window.min(payloads.len())])?;
    let mut sent = window.min(payloads.len());

    let total_replicas = args.jobs * u64::from(args.tasks.max(1)) * u64::from(args.replicas);
    let (mut replica_transitions, mut events, mut succeeded_jobs) = (0u64, 0u64, 0u64);
    let mut first_replica: Option<Duration> = None;
    let mut last_replica = Duration::ZERO;
    let mut acked_at: Option<Duration> = None;
    let deadline = Duration::from_secs(args.timeout_s);
    while succeeded_jobs < args.jobs {
        if t0.elapsed() > deadline {
            bail!(
                "timed out: {succeeded_jobs} of {} jobs succeeded, {replica_transitions} replica transitions",
                args.jobs
            );
        }
        let reply: StreamRangeReply = conn.xrange_count(&evt, format!("({last}"), "+", 5_000)?;
        if reply.ids.is_empty() {
            std::thread::sleep(Duration::from_millis(20));
        }
        let now = t0.elapsed();
        for e in &reply.ids {
            last = e.id.clone();
            events += 1;
            let raw: Vec<u8> = e.get(keys::PAYLOAD_FIELD).unwrap_or_default();
            let Ok(p) = serde_json::from_slice::<Peek>(&raw) else { continue };
            if p.kind != "JobState" {
                continue;
            }
            if p.body.replica.is_some() {
                replica_transitions += 1;
                first_replica.get_or_insert(now);
                last_replica = now;
            } else if p.body.task.is_none() && p.body.state.as_deref() == Some("succeeded") {
                succeeded_jobs += 1;
            }
        }
        // Keep `window` jobs outstanding, as the allocator keeps a cluster busy but not flooded.
        let outstanding = sent - succeeded_jobs as usize;
        if sent < payloads.len() && outstanding < window {
            let more = (window - outstanding).min(payloads.len() - sent);
            xadd_all(conn, &cmd, &payloads[sent..sent + more])?;
            sent += more;
        }
        if acked_at.is_none() && burst_acked(conn, &cmd, &burst_last)? {
            acked_at = Some(now);
        }
    }
    let elapsed = t0.elapsed();
    let rss_peak = vm_hwm_kib(pid).unwrap_or(0);
    let acked = acked_at.unwrap_or(elapsed).as_secs_f64();
    let span = (last_replica - first_replica.unwrap_or_default()).as_secs_f64().max(1e-3);
    let report = serde_json::json!({
        "nodes": args.nodes,
        "jobs": args.jobs,
        "replicas": total_replicas,
        "duration_s": args.duration_s,
        "window": window,
        "burst_acked_s": acked,
        "commands_per_s": window as f64 / acked,
        "replica_transitions": replica_transitions,
        "replica_transitions_per_s": replica_transitions as f64 / span,
        "events": events,
        "events_per_s": events as f64 / elapsed.as_secs_f64(),
        "elapsed_s": elapsed.as_secs_f64(),
        "agent_rss_idle_mib": rss_idle as f64 / 1024.0,
        "agent_peak_rss_mib": rss_peak as f64 / 1024.0,
    });
    if args.json {
        println!("{report}");
    } else {
        println!(
            "{} jobs on {}: commands {:.0}/s (a burst of {window} acknowledged after {:.2} s), replica transitions {:.0}/s \
             ({replica_transitions} in {span:.2} s), events {:.0}/s, agent peak RSS {:.1} MiB (idle {:.1})",
            args.jobs,
            args.nodes,
            window as f64 / acked,
            acked,
            replica_transitions as f64 / span,
            events as f64 / elapsed.as_secs_f64(),
            rss_peak as f64 / 1024.0,
            rss_idle as f64 / 1024.0,
        );
    }
    Ok(())
}

/// Appends the commands in pipelines of 1,000; returns the last entry id.
fn xadd_all(conn: &mut redis::Connection, stream: &str, payloads: &[String]) -> anyhow::Result<String> {
    let mut last = String::new();
    for chunk in payloads.chunks(1_000) {
        let mut pipe = redis::pipe();
        for p in chunk {
            pipe.cmd("XADD").arg(stream).arg("*").arg(keys::PAYLOAD_FIELD).arg(p);
        }
        let ids: Vec<String> = pipe.query(conn)?;
        last = ids.last().cloned().unwrap_or(last);
    }
    Ok(last)
}

/// Every entry up to `last` was delivered to the agent group and acknowledged.
fn burst_acked(conn: &mut redis::Connection, stream: &str, last: &str) -> anyhow::Result<bool> {
    let groups: Vec<std::collections::HashMap<String, redis::Value>> =
        redis::cmd("XINFO").arg("GROUPS").arg(stream).query(conn)?;
    let delivered = groups
        .iter()
        .find(|g| {
            g.get("name").and_then(|n| redis::from_redis_value::<String>(n).ok()).as_deref() == Some(keys::AGENT_GROUP)
        })
        .and_then(|g| g.get("last-delivered-id"))
        .and_then(|n| redis::from_redis_value::<String>(n).ok())
        .unwrap_or_default();
    let id = |s: &str| -> (u64, u64) {
        let (a, b) = s.split_once('-').unwrap_or((s, "0"));
        (a.parse().unwrap_or(0), b.parse().unwrap_or(0))
    };
    if id(&delivered) < id(last) {
        return Ok(false);
    }
    let pending: Vec<redis::Value> =
        redis::cmd("XPENDING").arg(stream).arg(keys::AGENT_GROUP).arg("-").arg(last).arg(1).query(conn)?;
    Ok(pending.is_empty())
}
