//! `grus-apiload`: load generator for a running `grus-api serve --dev` (see
//! `scripts/api-bench.sh`).
//!
//! 1. Seeds a tenant, a project (no quota: admission always admits) and dev users directly in
//!    the server's database.
//! 2. Closed loop: `--clients` concurrent clients each submit jobs back to back
//!    (`submitJob`) until `--submissions` are done: throughput and latency.
//! 3. Open loop: `jobs(first: 100)` with nested project/queue/tasks at a fixed `--rate`, and
//!    with `--submit-rate` an open loop of submissions beside it.
//!    Requests are sent on a fixed timetable (request i at start + i/rate) whatever the
//!    server does, and latency is measured from the scheduled send time, so a slow server
//!    cannot hide its queueing delay (no coordinated omission).
//!
//! The HTTP/1.1 client is a minimal keep-alive one over tokio's TcpStream (requests with
//! Content-Length, responses with Content-Length, which is what axum sends for GraphQL).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use clap::Parser;
use grus_api::db::{self, Scope, UserProfile};
use grus_api::domain::Role;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Debug, Parser)]
#[command(name = "grus-apiload", about = "Load generator for the Grus control plane API")]
struct Args {
    /// Address of the server (`grus-api serve --dev`).
    #[arg(long, env = "GRUS_LOAD_ADDR", default_value = "127.0.0.1:18080")]
    addr: SocketAddr,
    /// The server's database, to seed the tenant, project and users.
    #[arg(long, env = "DATABASE_URL")]
    database_url: String,
    /// Concurrent clients of the submit phase (each its own dev user and connection).
    #[arg(long, default_value_t = 32)]
    clients: usize,
    /// Projects the clients are spread over (round robin). Admission locks the queue, so
    /// submissions to one queue are serialized; a fleet has many.
    #[arg(long, default_value_t = 1)]
    projects: usize,
    /// Jobs submitted in the submit phase (0 skips it).
    #[arg(long, default_value_t = 5000)]
    submissions: usize,
    /// Requests per second of the open-loop read phase.
    #[arg(long, default_value_t = 500.0)]
    rate: f64,
    /// Length of the read phase in seconds (0 skips it).
    #[arg(long, default_value_t = 20.0)]
    read_seconds: f64,
    /// Seconds to wait between the phases: autovacuum and the allocator's plan of the new jobs
    /// run meanwhile, so the read phase meets a settled database.
    #[arg(long, default_value_t = 0.0)]
    pause_seconds: f64,
    /// Requests of the read phase sent before measuring (connections, caches).
    #[arg(long, default_value_t = 200)]
    warmup: usize,
    /// Submissions per second sent during the read phase, in an open loop of their own (0:
    /// none): reads then meet a stream of changes.
    #[arg(long, default_value_t = 0.0)]
    submit_rate: f64,
    /// The read phase's GraphQL query (default: the benchmark's `jobs(first: 100)` page).
    #[arg(long, default_value = READ)]
    read_query: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

const SUBMIT: &str = "mutation($input: JobInput!) { submitJob(input: $input) { job { id } } }";
const READ: &str = "{ jobs(first: 100) { edges { node { id name state submittedAt \
                    project { slug } queue { name } tasks { name replicaCount } } } } }";

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> anyhow::Result<Conn> {
        let stream = TcpStream::connect(addr).await.context("connect")?;
        stream.set_nodelay(true)?;
        Ok(Conn { stream, buf: Vec::with_capacity(64 * 1024) })
    }

    /// POSTs a GraphQL request as `user`; `Ok(true)` when the answer is 200 without errors.
    async fn post(&mut self, user: &str, body: &[u8]) -> anyhow::Result<bool> {
        let head = format!(
            "POST /graphql HTTP/1.1\r\nHost: grus\r\nContent-Type: application/json\r\n\
             X-Grus-Dev-User: {user}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        self.stream.write_all(head.as_bytes()).await?;
        self.stream.write_all(body).await?;
        let (status, body) = self.read_response().await?;
        Ok(status == 200 && !contains(&body, b"\"errors\""))
    }

    async fn read_response(&mut self) -> anyhow::Result<(u16, Vec<u8>)> {
        let header_end = loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                break i + 4;
            }
            self.fill().await?;
        };
        let head = std::str::from_utf8(&self.buf[..header_end]).context("response head")?.to_owned();
        let status: u16 = head.split(' ').nth(1).and_then(|s| s.parse().ok()).context("status line")?;
        let length: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length").then(|| v.trim().parse().ok())?
            })
            .context("response without Content-Length")?;
        while self.buf.len() < header_end + length {
            self.fill().await?;
        }
        let body = self.buf[header_end..header_end + length].to_vec();
        self.buf.drain(..header_end + length);
        Ok((status, body))
    }

    async fn fill(&mut self) -> anyhow::Result<()> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).await?;
        if n == 0 {
            bail!("connection closed by the server");
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, needle).is_some()
}

/// Latency summary in milliseconds.
#[derive(Debug, serde::Serialize)]
struct Summary {
    count: usize,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

fn summarize(mut micros: Vec<u64>) -> Summary {
    micros.sort_unstable();
    let at = |q: f64| -> f64 {
        if micros.is_empty() {
            return 0.0;
        }
        let i = ((q * micros.len() as f64).ceil() as usize).clamp(1, micros.len()) - 1;
        micros[i] as f64 / 1000.0
    };
    Summary { count: micros.len(), p50_ms: at(0.50), p90_ms: at(0.90), p99_ms: at(0.99), max_ms: at(1.0) }
}

fn job_input(project: &str, client: usize, i: usize) -> serde_json::Value {
    json!({
        "name": format!("load-{client}-{i}"),
        "project": project,
        "tasks": [{ "name": "main", "replicas": 1, "image": "busybox",
                    "resources": { "gpus": 1, "cpuMilli": 1000, "memoryMib": 1024 } }],
    })
}

/// Seeds a tenant with `projects` projects (queue `default` with a GPU quota that every
/// submission is checked against and none exceeds), `clients` users who
/// are members of all of them and a viewer `reader` of the first; returns the project slugs.
async fn seed(database_url: &str, clients: usize, projects: usize) -> anyhow::Result<Vec<String>> {
    let pool = db::connect(database_url).await.context("connect to PostgreSQL")?;
    let stamp = chrono::Utc::now().timestamp_millis();
    let tenant = db::create_tenant(&pool, &format!("load-{stamp}"), "Load").await?;
    let mut users = Vec::new();
    for c in 0..clients.max(1) {
        // The profile the dev header gives, so sign-ins find it unchanged.
        let (subject, name) = (format!("dev:load-{c}"), format!("load-{c}"));
        let profile = UserProfile { subject: &subject, email: None, display_name: Some(&name) };
        users.push(db::upsert_user(&pool, &profile).await?.id);
    }
    let reader = UserProfile { subject: "dev:reader", email: None, display_name: Some("reader") };
    let reader = db::upsert_user(&pool, &reader).await?.id;
    let mut slugs = Vec::new();
    for p in 0..projects.max(1) {
        let slug = format!("load-{stamp}-{p}");
        let project = db::create_project(&pool, tenant.id, &slug, "Load").await?;
        let queue = db::QueueSettings::named("default");
        let queue = db::create_queue(&pool, project.id, &queue).await?;
        // 1,000 GPUs guaranteed, 10,000 at most (milli): checked, never binding here.
        let quota = db::Quota { resource: "gpu".into(), guaranteed: 1_000_000, limit: Some(10_000_000) };
        db::set_quota(&pool, queue.id, &quota).await?;
        for u in &users {
            db::grant(&pool, *u, Scope::Project(project.id), Role::Member).await?;
        }
        if p == 0 {
            db::grant(&pool, reader, Scope::Project(project.id), Role::Viewer).await?;
        }
        slugs.push(slug);
    }
    pool.close().await;
    Ok(slugs)
}

#[derive(Debug, serde::Serialize)]
struct SubmitReport {
    clients: usize,
    projects: usize,
    submissions: usize,
    errors: usize,
    elapsed_s: f64,
    per_second: f64,
    latency: Summary,
}

async fn submit_phase(args: &Args, projects: &[String]) -> anyhow::Result<SubmitReport> {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..args.clients {
        let project = projects[c % projects.len()].clone();
        let (next, addr, total) = (next.clone(), args.addr, args.submissions);
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::open(addr).await?;
            let user = format!("load-{c}");
            let (mut lat, mut errors) = (Vec::new(), 0usize);
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let body = serde_json::to_vec(
                    &json!({ "query": SUBMIT, "variables": { "input": job_input(&project, c, i) } }),
                )?;
                let t = Instant::now();
                if !conn.post(&user, &body).await? {
                    errors += 1;
                }
                lat.push(t.elapsed().as_micros() as u64);
            }
            anyhow::Ok((lat, errors))
        }));
    }
    let (mut all, mut errors) = (Vec::new(), 0);
    for t in tasks {
        let (lat, e) = t.await??;
        all.extend(lat);
        errors += e;
    }
    let elapsed = started.elapsed().as_secs_f64();
    Ok(SubmitReport {
        clients: args.clients,
        projects: projects.len(),
        submissions: all.len(),
        errors,
        elapsed_s: elapsed,
        per_second: all.len() as f64 / elapsed,
        latency: summarize(all),
    })
}

#[derive(Debug, serde::Serialize)]
struct ReadReport {
    target_rate: f64,
    achieved_rate: f64,
    duration_s: f64,
    sent: usize,
    errors: usize,
    /// Most connections open at once (the open loop opens one more whenever all are busy).
    connections: usize,
    /// From the scheduled send time to the complete response.
    latency: Summary,
    /// The submissions sent meanwhile (`--submit-rate`).
    submissions: Option<OpenLoopReport>,
}

/// An open loop of submissions beside the reads.
#[derive(Debug, serde::Serialize)]
struct OpenLoopReport {
    target_rate: f64,
    achieved_rate: f64,
    errors: usize,
    latency: Summary,
}

/// Idle keep-alive connections shared by the open loop.
#[derive(Clone)]
struct ConnPool {
    addr: SocketAddr,
    idle: Arc<Mutex<VecDeque<Conn>>>,
    opened: Arc<std::sync::atomic::AtomicUsize>,
}

impl ConnPool {
    async fn get(&self) -> anyhow::Result<Conn> {
        let idle = self.idle.lock().map_err(|_| anyhow::anyhow!("pool lock"))?.pop_front();
        match idle {
            Some(c) => Ok(c),
            None => {
                self.opened.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Conn::open(self.addr).await
            }
        }
    }

    fn put(&self, c: Conn) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.push_back(c);
        }
    }
}

/// Latencies (from each request's scheduled send time) and the failures of an open loop that
/// sends request `i` of `total` at `start + i / rate` on `pool`'s connections, whatever the
/// server does.
async fn open_loop(
    pool: &ConnPool,
    start: tokio::time::Instant,
    rate: f64,
    total: usize,
    request: impl Fn(usize) -> anyhow::Result<(String, Arc<[u8]>)>,
) -> anyhow::Result<(Vec<u64>, usize)> {
    let interval = Duration::from_secs_f64(1.0 / rate);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, bool)>();
    for i in 0..total {
        let scheduled = start + interval.mul_f64(i as f64);
        tokio::time::sleep_until(scheduled).await;
        let (user, body) = request(i)?;
        let (pool, tx) = (pool.clone(), tx.clone());
        tokio::spawn(async move {
            let ok = match pool.get().await {
                Ok(mut c) => {
                    let ok = c.post(&user, &body).await;
                    if ok.is_ok() {
                        pool.put(c);
                    }
                    ok.unwrap_or(false)
                }
                Err(_) => false,
            };
            let latency = tokio::time::Instant::now().duration_since(scheduled);
            let _ = tx.send((latency.as_micros() as u64, ok));
        });
    }
    drop(tx);
    let (mut lat, mut errors) = (Vec::with_capacity(total), 0);
    while let Some((l, ok)) = rx.recv().await {
        lat.push(l);
        errors += usize::from(!ok);
    }
    Ok((lat, errors))
}

async fn read_phase(args: &Args, projects: &[String]) -> anyhow::Result<ReadReport> {
    let pool = ConnPool { addr: args.addr, idle: Default::default(), opened: Default::default() };
    let body: Arc<[u8]> = serde_json::to_vec(&json!({ "query": args.read_query }))?.into();
    // Warm-up, closed loop on one connection: not measured.
    let mut conn = pool.get().await?;
    for _ in 0..args.warmup {
        if !conn.post("reader", &body).await? {
            bail!("the read query fails; is the server up and seeded?");
        }
    }
    pool.put(conn);

    let start = tokio::time::Instant::now() + Duration::from_millis(50);
    let total = (args.rate * args.read_seconds).round() as usize;
    let reads = open_loop(&pool, start, args.rate, total, |_| Ok(("reader".to_owned(), body.clone())));
    // Submissions meanwhile, on connections of their own, spread over the clients and projects.
    let writers = ConnPool { addr: args.addr, idle: Default::default(), opened: Default::default() };
    let writes = async {
        if args.submit_rate <= 0.0 {
            return Ok(None);
        }
        let total = (args.submit_rate * args.read_seconds).round() as usize;
        let clients = args.clients.max(1);
        let submit = |i: usize| {
            let c = i % clients;
            let input = job_input(&projects[c % projects.len()], c, args.submissions + i);
            let body = serde_json::to_vec(&json!({ "query": SUBMIT, "variables": { "input": input } }))?;
            Ok((format!("load-{c}"), body.into()))
        };
        open_loop(&writers, start, args.submit_rate, total, submit).await.map(Some)
    };
    let ((lat, errors), writes) = tokio::try_join!(reads, writes)?;
    let duration = start.elapsed().as_secs_f64();
    let submissions = writes.map(|(lat, errors)| OpenLoopReport {
        target_rate: args.submit_rate,
        achieved_rate: lat.len() as f64 / duration,
        errors,
        latency: summarize(lat),
    });
    Ok(ReadReport {
        target_rate: args.rate,
        achieved_rate: lat.len() as f64 / duration,
        duration_s: duration,
        sent: lat.len(),
        errors,
        connections: pool.opened.load(std::sync::atomic::Ordering::Relaxed),
        latency: summarize(lat),
        submissions,
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    // Its old name still works, with a warning, as in grus-api (one thread so far: the runtime
    // is this one).
    grus_api::config::adopt_renamed_env(&[("GRUS_DATABASE_URL", "DATABASE_URL")]);
    let args = Args::parse();
    let projects = seed(&args.database_url, args.clients, args.projects).await?;
    let submit = if args.submissions > 0 { Some(submit_phase(&args, &projects).await?) } else { None };
    if args.pause_seconds > 0.0 {
        tokio::time::sleep(std::time::Duration::from_secs_f64(args.pause_seconds)).await;
    }
    let read = if args.read_seconds > 0.0 { Some(read_phase(&args, &projects).await?) } else { None };
    if args.json {
        println!("{}", json!({ "submit": submit, "read": read }));
    } else {
        if let Some(s) = &submit {
            println!(
                "submitJob: {} jobs by {} clients into {} projects in {:.2} s = {:.0}/s, {} errors; latency p50 {:.1} ms p99 {:.1} ms max {:.1} ms",
                s.submissions, s.clients, s.projects, s.elapsed_s, s.per_second, s.errors, s.latency.p50_ms, s.latency.p99_ms, s.latency.max_ms
            );
        }
        if let Some(r) = &read {
            println!(
                "jobs(first: 100) open loop at {:.0}/s for {:.1} s ({} sent, {:.0}/s achieved, {} errors, {} connections): \
                 p50 {:.2} ms p90 {:.2} ms p99 {:.2} ms max {:.2} ms",
                r.target_rate, r.duration_s, r.sent, r.achieved_rate, r.errors, r.connections,
                r.latency.p50_ms, r.latency.p90_ms, r.latency.p99_ms, r.latency.max_ms
            );
            if let Some(w) = &r.submissions {
                println!(
                    "submitJob meanwhile, open loop at {:.0}/s ({:.0}/s achieved, {} errors): p50 {:.2} ms p99 {:.2} ms max {:.2} ms",
                    w.target_rate, w.achieved_rate, w.errors, w.latency.p50_ms, w.latency.p99_ms, w.latency.max_ms
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let s = summarize((1..=100).map(|ms| ms * 1000).collect());
        assert_eq!((s.p50_ms, s.p90_ms, s.p99_ms, s.max_ms), (50.0, 90.0, 99.0, 100.0));
        assert_eq!(summarize(vec![]).count, 0);
    }

    #[test]
    fn finds_header_end() {
        assert_eq!(find(b"HTTP/1.1 200 OK\r\n\r\nbody", b"\r\n\r\n"), Some(15));
        assert!(!contains(b"{\"data\":{}}", b"\"errors\""));
    }
}
