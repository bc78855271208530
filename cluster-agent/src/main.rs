//! `grus-agent`: the per-cluster agent binary. Parses flags (each with an env fallback),
//! builds the backend, connects to Redis and runs the agent loop until SIGTERM/ctrl-c.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use grus_agent::agent::{Agent, AgentSettings};
use grus_agent::backend::sim::{spec, SimBackend};
use grus_agent::clock::SystemClock;
use grus_agent::http;
use grus_agent::transport::{CommandReader, Inbound, Publisher, RedisSettings};
use grus_scheduler::cycle::SchedulerConfig;
use grus_scheduler::score::Policy;
use tokio::sync::mpsc;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BackendKind {
    /// Simulated nodes and GPUs.
    Sim,
    /// Pods on the Kubernetes cluster this agent runs in (or the kubeconfig's).
    Kube,
}

/// Grus cluster agent: places and runs the jobs the control plane dispatches to one cluster.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// This cluster's id (as registered with the control plane).
    #[arg(long, env = "GRUS_CLUSTER")]
    cluster: String,
    /// Redis URL; `redis://user:password@host:port` authenticates as the cluster's ACL user.
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    redis: String,
    /// Redis ACL user (overrides the URL's).
    #[arg(long, env = "GRUS_REDIS_USER")]
    redis_user: Option<String>,
    /// Redis ACL password (overrides the URL's).
    #[arg(long, env = "GRUS_REDIS_PASSWORD", hide_env_values = true)]
    redis_password: Option<String>,
    #[arg(long, env = "GRUS_BACKEND", value_enum, default_value = "sim")]
    backend: BackendKind,
    /// Simulated nodes: a spec like `8x8xA100-80GB,4x2xT4` (nodes x GPUs x model) or the path
    /// of a node CSV (`sn,cpu_milli,memory_mib,gpu,model`).
    #[arg(long, env = "GRUS_SIM_NODES", default_value = "4x8xA100-80GB,4x4xT4")]
    sim_nodes: String,
    /// How long simulated replicas run when the job has no `grus.io/sim-duration-s` label
    /// (unset: until stopped).
    #[arg(long, env = "GRUS_SIM_DEFAULT_DURATION", value_parser = humantime::parse_duration)]
    sim_default_duration: Option<Duration>,
    /// Where the agent keeps its book (and the simulator its journal).
    #[arg(long, env = "GRUS_STATE_DIR", default_value = "/var/lib/grus-agent")]
    state_dir: PathBuf,
    /// Serve /metrics (Prometheus), /healthz and, with the sim backend, /sim/* fault injection.
    #[arg(long, env = "GRUS_METRICS_ADDR")]
    metrics_addr: Option<SocketAddr>,
    /// Consumer name in the `agent` group; stable across restarts so pending entries return.
    #[arg(long, env = "GRUS_CONSUMER")]
    consumer: Option<String>,
    /// Reject a job that cannot be placed here within this time, so it can go elsewhere.
    #[arg(long, env = "GRUS_PLACE_DEADLINE", default_value = "5m", value_parser = humantime::parse_duration)]
    place_deadline: Duration,
    /// Grace period of local preemptions.
    #[arg(long, env = "GRUS_EVICTION_GRACE", default_value = "30s", value_parser = humantime::parse_duration)]
    eviction_grace: Duration,
    /// Commands read per batch.
    #[arg(long, env = "GRUS_COMMAND_BATCH", default_value_t = 256)]
    command_batch: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let args = Args::parse();
    if !grus_protocol::keys::is_valid_cluster_id(&args.cluster) {
        bail!("--cluster `{}` must be 1-63 characters of a-z, 0-9 and '-'", args.cluster);
    }
    let redis = RedisSettings { url: args.redis.clone(), username: args.redis_user.clone(), password: args.redis_password.clone() };
    let consumer = args.consumer.clone().unwrap_or_else(|| args.cluster.clone());
    let clock = Arc::new(SystemClock);
    let mut settings = AgentSettings::new(&args.cluster, args.state_dir.clone());
    settings.place_deadline = args.place_deadline;
    let scheduler = SchedulerConfig { eviction_grace_s: args.eviction_grace.as_secs(), ..SchedulerConfig::default() };
    let _ = Policy::binpack;

    let publisher = Publisher::connect(&redis, &args.cluster)
        .await
        .with_context(|| format!("connect to Redis at {} (is it running? start it with `redis-server`)", args.redis))?;
    let mut reader = CommandReader::connect(&redis, &args.cluster, &consumer, args.command_batch)
        .await
        .context("open the command stream")?;

    match args.backend {
        BackendKind::Sim => {
            let nodes = if args.sim_nodes.ends_with(".csv") || std::path::Path::new(&args.sim_nodes).is_file() {
                let text = std::fs::read_to_string(&args.sim_nodes).with_context(|| format!("read {}", args.sim_nodes))?;
                spec::parse_csv(&text).with_context(|| format!("parse {}", args.sim_nodes))?
            } else {
                spec::parse_compact(&args.sim_nodes).context("parse --sim-nodes")?
            };
            let backend = SimBackend::new(nodes, Some(&args.state_dir), args.sim_default_duration, clock.clone())?;
            let control = backend.control();
            if let Some(addr) = args.metrics_addr {
                let router = http::sim_router(control.clone());
                spawn_http(addr, router).await?;
            }
            let metrics = Box::new(move || control.gpu_metrics());
            let agent = Agent::start(settings, backend, publisher, clock, scheduler, Some(metrics)).await?;
            run(agent, reader_task(reader)).await
        }
        BackendKind::Kube => {
            let _ = &mut reader;
            bail!("the kube backend is not wired into this build yet")
        }
    }
}

async fn spawn_http(addr: SocketAddr, router: axum::Router) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("listen on {addr}"))?;
    tracing::info!(%addr, "serving /metrics and /healthz");
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            tracing::error!(error = %e, "metrics server stopped");
        }
    });
    Ok(())
}

/// Reads commands on its own connection and hands them to the agent; retries on errors.
fn reader_task(mut reader: CommandReader) -> mpsc::Receiver<Inbound> {
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(async move {
        loop {
            match reader.next(Duration::from_secs(1)).await {
                Ok(Inbound::Commands(batch)) if batch.is_empty() => {}
                Ok(inbound) => {
                    if tx.send(inbound).await.is_err() {
                        return;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "reading commands failed; retrying in 1s");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    });
    rx
}

async fn run<B: grus_agent::backend::Backend>(agent: Agent<B>, inbound: mpsc::Receiver<Inbound>) -> anyhow::Result<()> {
    let shutdown = async {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("install SIGTERM handler");
            tokio::select! { _ = ctrl_c => {}, _ = term.recv() => {} }
        }
        #[cfg(not(unix))]
        let _ = ctrl_c.await;
    };
    tokio::select! {
        r = agent.run(inbound) => r,
        _ = shutdown => {
            tracing::info!("shutting down");
            Ok(())
        }
    }
}
