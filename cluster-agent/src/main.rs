//! `grus-agent`: the per-cluster agent binary. Parses flags (each with an env fallback),
//! builds the backend, connects to Redis and runs the agent loop until SIGTERM/ctrl-c.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};
use grus_agent::agent::{Agent, AgentSettings};
use grus_agent::backend::kube::{KubeBackend, KubeConfig};
use grus_agent::backend::sim::{spec, SimBackend};
use grus_agent::clock::SystemClock;
use grus_agent::device_plugin::kube::KubePlacement;
use grus_agent::device_plugin::{DevicePluginConfig, GpuSharePlugin, LimiterLibrary};
use grus_agent::http;
use grus_agent::profiler;
use grus_agent::transport::{CommandReader, Inbound, Publisher, RedisSettings};
use grus_scheduler::cycle::SchedulerConfig;
use tokio::sync::mpsc;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BackendKind {
    /// Simulated nodes and GPUs.
    Sim,
    /// Pods on the Kubernetes cluster this agent runs in (or the kubeconfig's).
    Kube,
}

/// Grus cluster agent: places and runs the jobs the control plane dispatches to one cluster.
/// `grus-agent node` runs the per-node part instead: device plugin and GPU profiler.
#[derive(Debug, Parser)]
#[command(version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Sub>,
    #[command(flatten)]
    agent: AgentArgs,
}

#[derive(Debug, Subcommand)]
enum Sub {
    /// Per-node daemon (a DaemonSet on GPU nodes): the `grus.io/gpu-milli` device plugin and
    /// the GPU profiler with Prometheus metrics.
    Node(NodeArgs),
}

#[derive(Debug, Args)]
struct RedisArgs {
    /// This cluster's id (as registered with the control plane).
    #[arg(long, env = "GRUS_CLUSTER")]
    cluster: Option<String>,
    /// Redis URL; `redis://user:password@host:port` authenticates as the cluster's ACL user.
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    redis: String,
    /// Redis ACL user (overrides the URL's).
    #[arg(long, env = "GRUS_REDIS_USER")]
    redis_user: Option<String>,
    /// Redis ACL password (overrides the URL's).
    #[arg(long, env = "GRUS_REDIS_PASSWORD", hide_env_values = true)]
    redis_password: Option<String>,
}

impl RedisArgs {
    fn settings(&self) -> RedisSettings {
        RedisSettings {
            url: self.redis.clone(),
            username: self.redis_user.clone(),
            password: self.redis_password.clone(),
        }
    }

    fn cluster(&self) -> anyhow::Result<String> {
        let Some(cluster) = self.cluster.clone() else { bail!("--cluster (or GRUS_CLUSTER) is required") };
        if !grus_protocol::keys::is_valid_cluster_id(&cluster) {
            bail!("--cluster `{cluster}` must be 1-63 characters of a-z, 0-9 and '-'");
        }
        Ok(cluster)
    }
}

#[derive(Debug, Args)]
struct AgentArgs {
    #[command(flatten)]
    redis: RedisArgs,
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
    /// Serve /metrics (Prometheus, sim backend), /healthz and, with the sim backend, /sim/*
    /// fault injection.
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
    /// Kube backend: namespace of project P's pods is this prefix + P.
    #[arg(long, env = "GRUS_NAMESPACE_PREFIX", default_value = "grus-")]
    namespace_prefix: String,
    /// Kube backend: request whole GPUs as `grus.io/gpu-milli` (only Grus' device plugin on
    /// the nodes) instead of `nvidia.com/gpu`.
    #[arg(long, env = "GRUS_WHOLE_GPU_AS_MILLI")]
    whole_gpu_as_milli: bool,
}

#[derive(Debug, Args)]
struct NodeArgs {
    /// The Kubernetes node this daemon runs on (the downward API's spec.nodeName).
    #[arg(long, env = "NODE_NAME")]
    node: String,
    /// The kubelet's device-plugin directory.
    #[arg(long, env = "GRUS_DEVICE_PLUGIN_DIR", default_value = "/var/lib/kubelet/device-plugins")]
    device_plugin_dir: PathBuf,
    /// Host path of the CUDA limiter library, mounted and preloaded into containers with a share.
    #[arg(long, env = "GRUS_LIMITER_HOST_PATH")]
    limiter_host_path: Option<PathBuf>,
    /// Where the limiter library appears inside containers.
    #[arg(long, env = "GRUS_LIMITER_CONTAINER_PATH", default_value = "/usr/local/grus/libgrus_cuda_limiter.so")]
    limiter_container_path: String,
    /// Serve /metrics (DCGM exporter names) and /healthz.
    #[arg(long, env = "GRUS_METRICS_ADDR", default_value = "0.0.0.0:9400")]
    metrics_addr: SocketAddr,
    /// How often GPUs are sampled.
    #[arg(long, env = "GRUS_SAMPLE_EVERY", default_value = "5s", value_parser = humantime::parse_duration)]
    sample_every: Duration,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    let cli = Cli::parse();
    match cli.command {
        Some(Sub::Node(args)) => run_node(args).await,
        None => run_agent(cli.agent).await,
    }
}

async fn run_agent(args: AgentArgs) -> anyhow::Result<()> {
    let cluster = args.redis.cluster()?;
    let redis = args.redis.settings();
    let consumer = args.consumer.clone().unwrap_or_else(|| cluster.clone());
    let clock = Arc::new(SystemClock);
    let mut settings = AgentSettings::new(&cluster, args.state_dir.clone());
    settings.place_deadline = args.place_deadline;
    let scheduler = SchedulerConfig { eviction_grace_s: args.eviction_grace.as_secs(), ..SchedulerConfig::default() };

    let publisher = Publisher::connect(&redis, &cluster).await.with_context(|| {
        format!("connect to Redis at {} (is it running? start it with `redis-server`)", args.redis.redis)
    })?;
    let reader = CommandReader::connect(&redis, &cluster, &consumer, args.command_batch)
        .await
        .context("open the command stream")?;

    match args.backend {
        BackendKind::Sim => {
            let nodes = if args.sim_nodes.ends_with(".csv") || std::path::Path::new(&args.sim_nodes).is_file() {
                let text =
                    std::fs::read_to_string(&args.sim_nodes).with_context(|| format!("read {}", args.sim_nodes))?;
                spec::parse_csv(&text).with_context(|| format!("parse {}", args.sim_nodes))?
            } else {
                spec::parse_compact(&args.sim_nodes).context("parse --sim-nodes")?
            };
            let backend = SimBackend::new(nodes, Some(&args.state_dir), args.sim_default_duration, clock.clone())?;
            let control = backend.control();
            let samples = profiler::spawn_sampler(Arc::new(control.clone()), settings.metrics_every);
            if let Some(addr) = args.metrics_addr {
                let router = http::sim_router(control).merge(profiler::prometheus::metrics_router(samples.clone()));
                spawn_http(addr, router).await?;
            }
            let metrics = Box::new(move || profiler::to_wire(&samples.borrow()));
            let agent = Agent::start(settings, backend, publisher, clock, scheduler, Some(metrics)).await?;
            run(agent, reader_task(reader)).await
        }
        BackendKind::Kube => {
            let mut config = KubeConfig { namespace_prefix: args.namespace_prefix.clone(), ..KubeConfig::default() };
            if args.whole_gpu_as_milli {
                config.whole_gpu_resource = "grus.io/gpu-milli".to_string();
            }
            let backend = KubeBackend::connect(config).await.context("connect to the Kubernetes API")?;
            if let Some(addr) = args.metrics_addr {
                spawn_http(addr, http::health_router()).await?;
            }
            // GPU metrics come from the node daemons (`grus-agent node`), not from here.
            let agent = Agent::start(settings, backend, publisher, clock, scheduler, None).await?;
            run(agent, reader_task(reader)).await
        }
    }
}

/// The node daemon: profiler (NVML, or nothing without a driver), /metrics, and the device
/// plugin fed with GPU health from the profiler and placements from this node's pods.
async fn run_node(args: NodeArgs) -> anyhow::Result<()> {
    let client = kube::Client::try_default().await.context("connect to the Kubernetes API")?;
    let placement = KubePlacement::spawn(client, &args.node);
    let probe = profiler::nvml::nvml_or_noop(&args.node, Some(placement.clone()));
    let samples = profiler::spawn_sampler(probe, args.sample_every);
    spawn_http(args.metrics_addr, http::health_router().merge(profiler::prometheus::metrics_router(samples.clone())))
        .await?;
    let feed = profiler::plugin_gpus_feed(samples, args.node.clone());
    let config = DevicePluginConfig {
        dir: args.device_plugin_dir,
        limiter: args
            .limiter_host_path
            .map(|host_path| LimiterLibrary { host_path, container_path: args.limiter_container_path }),
        ..DevicePluginConfig::default()
    };
    GpuSharePlugin::new(config, feed, placement).run(shutdown_signal()).await.context("device plugin")?;
    Ok(())
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

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! { _ = ctrl_c => {}, _ = term.recv() => {} }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutting down");
}

async fn run<B: grus_agent::backend::Backend>(agent: Agent<B>, inbound: mpsc::Receiver<Inbound>) -> anyhow::Result<()> {
    tokio::select! {
        r = agent.run(inbound) => r,
        _ = shutdown_signal() => Ok(()),
    }
}
