//! `grus-agent`: the per-cluster agent binary. Parses flags (each with an env fallback),
//! builds the backend, connects to Redis and runs the agent loop until SIGTERM/ctrl-c.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};
use grus_agent::backend::kube::KubeConfig;
use grus_agent::backend::sim::spec;
use grus_agent::device_plugin::kube::KubePlacement;
use grus_agent::device_plugin::{plugin_gpus_feed, run_node_plugins, DevicePluginConfig, LimiterLibrary};
use grus_agent::http;
use grus_agent::profiler;
use grus_agent::run::{self, run_agent, AgentConfig, BackendConfig};
use grus_agent::transport::RedisSettings;
use grus_scheduler::cycle::{ConsolidationConfig, DEFAULT_SHARING_BUSY_LIMIT_PCT};
use grus_scheduler::fairshare::FairShareConfig;
use grus_scheduler::pool::{NodePools, PoolDef};

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
    /// Print the agent's book (what it holds for the control plane: jobs, epochs, holds) as
    /// JSON, read from the state directory without changing it; safe while the agent runs.
    Book(BookArgs),
}

#[derive(Debug, Args)]
struct BookArgs {
    /// The agent's state directory.
    #[arg(long, env = "GRUS_STATE_DIR", default_value = "/var/lib/grus-agent")]
    state_dir: PathBuf,
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
    /// How long the agent keeps the last lines of a replica that ended, for reading its output
    /// after its pod is gone.
    #[arg(long, env = "GRUS_KEEP_LOGS_FOR", default_value = "1h", value_parser = humantime::parse_duration)]
    keep_logs_for: Duration,
    /// Interference-aware sharing: a GPU share goes only to a device whose measured busy %,
    /// with the share's expected load (its booked part) added, stays at or under this percent,
    /// unless the device holds no work yet (0: no limit).
    #[arg(long, env = "GRUS_SHARING_BUSY_LIMIT", default_value_t = DEFAULT_SHARING_BUSY_LIMIT_PCT,
          value_parser = clap::value_parser!(u8).range(0..=100))]
    sharing_busy_limit: u8,
    /// Consolidation's disruption budget: at most this many jobs of one queue are moved at once
    /// to make room for a gang that waits only because free GPUs are scattered (0: never move).
    #[arg(long, env = "GRUS_CONSOLIDATION_MOVES_PER_QUEUE", default_value_t = ConsolidationConfig::default().max_moves_per_queue)]
    consolidation_moves_per_queue: u32,
    /// Consolidation's rate limit: at most this many moves an hour in the cluster.
    #[arg(long, env = "GRUS_CONSOLIDATION_MOVES_PER_HOUR", default_value_t = ConsolidationConfig::default().max_moves_per_hour)]
    consolidation_moves_per_hour: u32,
    /// Count each queue's decayed past usage in fair share, halving every this long (`7d`,
    /// `24h`): a queue, project or tenant that used much of the cluster lately waits behind
    /// one that did not (Slurm's PriorityDecayHalfLife). Unset: only current usage counts.
    #[arg(long, env = "GRUS_FAIR_SHARE_HALF_LIFE", value_parser = humantime::parse_duration)]
    fair_share_half_life: Option<Duration>,
    /// How much the decayed past share weighs against the current one, 0 to 1.
    #[arg(long, env = "GRUS_FAIR_SHARE_HISTORY_WEIGHT", default_value_t = run::DEFAULT_HISTORY_WEIGHT)]
    fair_share_history_weight: f64,
    /// A node pool: `NAME=SELECTOR`, the selector a Kubernetes equality selector over node
    /// labels (`a100-train=pool=a100-train`, `big=gpus=8,zone!=b`). Repeat for more pools; a node
    /// belongs to the first that matches, and nodes no pool matches to `default`. The
    /// environment variable takes several separated by `;`.
    #[arg(long = "node-pool", env = "GRUS_NODE_POOLS", value_delimiter = ';', value_parser = PoolDef::parse)]
    node_pools: Vec<PoolDef>,
    /// Commands read per batch.
    #[arg(long, env = "GRUS_COMMAND_BATCH", default_value_t = 256)]
    command_batch: usize,
    /// Serve this control plane (its incarnation, `grus-api migrate` prints it). Without it the
    /// first command's control plane is pinned; a different one here drops what the agent
    /// remembers of the old one (after its database was replaced or restored).
    #[arg(long, env = "GRUS_CONTROL_PLANE")]
    control_plane: Option<String>,
    /// The cluster's registration token (registerCluster, rotateAgentToken): exchanged once at
    /// `--api-url` for this agent's own Redis user, kept in the state directory.
    #[arg(long, env = "GRUS_AGENT_TOKEN", hide_env_values = true, requires = "api_url")]
    agent_token: Option<String>,
    /// grus-api's base URL, for the token exchange.
    #[arg(long, env = "GRUS_API_URL")]
    api_url: Option<String>,
    /// Keep the exchanged credentials in this Kubernetes Secret (in
    /// `--credentials-namespace`) instead of the state directory.
    #[arg(long, env = "GRUS_CREDENTIALS_SECRET", requires = "credentials_namespace")]
    credentials_secret: Option<String>,
    /// The namespace of `--credentials-secret` (the agent's own: the downward API's
    /// metadata.namespace).
    #[arg(long, env = "GRUS_CREDENTIALS_NAMESPACE")]
    credentials_namespace: Option<String>,
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
        Some(Sub::Book(args)) => {
            let book = grus_agent::book::BookStore::read(&args.state_dir)?;
            println!("{}", serde_json::to_string_pretty(&book)?);
            Ok(())
        }
        None => run_agent(cli.agent.into_config()?, shutdown_signal()).await,
    }
}

impl AgentArgs {
    /// Validates the flags into the library's [`AgentConfig`] (reads the node CSV, if named).
    fn into_config(self) -> anyhow::Result<AgentConfig> {
        let cluster = self.redis.cluster()?;
        let backend = match self.backend {
            BackendKind::Sim => {
                let nodes = if self.sim_nodes.ends_with(".csv") || std::path::Path::new(&self.sim_nodes).is_file() {
                    let text =
                        std::fs::read_to_string(&self.sim_nodes).with_context(|| format!("read {}", self.sim_nodes))?;
                    spec::parse_csv(&text).with_context(|| format!("parse {}", self.sim_nodes))?
                } else {
                    spec::parse_compact(&self.sim_nodes).context("parse --sim-nodes")?
                };
                BackendConfig::Sim { nodes, default_duration: self.sim_default_duration }
            }
            BackendKind::Kube => {
                let mut config =
                    KubeConfig { namespace_prefix: self.namespace_prefix.clone(), ..KubeConfig::default() };
                if self.whole_gpu_as_milli {
                    config.whole_gpu_resource = "grus.io/gpu-milli".to_string();
                }
                BackendConfig::Kube(config)
            }
        };
        let config = AgentConfig {
            consumer: self.consumer.clone().unwrap_or_else(|| cluster.clone()),
            cluster,
            redis: self.redis.settings(),
            backend,
            state_dir: self.state_dir,
            metrics_addr: self.metrics_addr,
            place_deadline: self.place_deadline,
            eviction_grace: self.eviction_grace,
            keep_logs_for: self.keep_logs_for,
            sharing_busy_limit_pct: (self.sharing_busy_limit > 0).then_some(self.sharing_busy_limit),
            consolidation: ConsolidationConfig {
                max_moves_per_queue: self.consolidation_moves_per_queue,
                max_moves_per_hour: self.consolidation_moves_per_hour,
            },
            node_pools: NodePools::new(self.node_pools)?,
            fair_share: FairShareConfig {
                half_life_s: self.fair_share_half_life.map(|d| d.as_secs().max(1)),
                history_weight: self.fair_share_history_weight,
            },
            command_batch: self.command_batch,
            control_plane: self.control_plane,
            token: match (self.agent_token, self.api_url) {
                (Some(token), Some(api_url)) => Some(grus_agent::credentials::TokenExchange { api_url, token }),
                _ => None,
            },
            credentials_secret: match (self.credentials_secret, self.credentials_namespace) {
                (Some(name), Some(namespace)) => Some(grus_agent::credentials::SecretRef { namespace, name }),
                _ => None,
            },
        };
        config.validate()?;
        Ok(config)
    }
}

/// The node daemon: profiler (NVML, or nothing without a driver), /metrics, and the device
/// plugin fed with GPU health from the profiler and placements from this node's pods.
async fn run_node(args: NodeArgs) -> anyhow::Result<()> {
    let client = kube::Client::try_default().await.context("connect to the Kubernetes API")?;
    let placement = KubePlacement::spawn(client, &args.node);
    let probe = profiler::nvml::nvml_or_noop(&args.node, Some(placement.clone()));
    let samples = profiler::spawn_sampler(probe, args.sample_every);
    run::spawn_http(
        args.metrics_addr,
        http::health_router().merge(profiler::prometheus::metrics_router(samples.clone())),
    )
    .await?;
    let feed = plugin_gpus_feed(samples, args.node.clone());
    let config = DevicePluginConfig {
        dir: args.device_plugin_dir,
        limiter: args
            .limiter_host_path
            .map(|host_path| LimiterLibrary { host_path, container_path: args.limiter_container_path }),
        ..DevicePluginConfig::default()
    };
    run_node_plugins(config, feed, placement, shutdown_signal()).await.context("device plugins")?;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_defaults_are_the_library_defaults() {
        let cli =
            Cli::try_parse_from(["grus-agent", "--cluster", "east", "--sim-nodes", "1x2xT4"]).expect("flags parse");
        let config = cli.agent.into_config().expect("valid");
        let lib = AgentConfig::sim("east", config.redis.clone(), vec![], config.state_dir.clone()).expect("valid");
        assert_eq!(config.place_deadline, lib.place_deadline);
        assert_eq!(config.eviction_grace, lib.eviction_grace);
        assert_eq!(config.keep_logs_for, lib.keep_logs_for);
        assert_eq!(config.sharing_busy_limit_pct, lib.sharing_busy_limit_pct);
        assert_eq!(config.consolidation, lib.consolidation);
        assert_eq!(config.fair_share.half_life_s, lib.fair_share.half_life_s);
        assert_eq!(config.command_batch, lib.command_batch);
        assert_eq!(config.consumer, lib.consumer);
        assert!(matches!(config.backend, BackendConfig::Sim { default_duration: None, ref nodes } if nodes.len() == 1));
    }

    #[test]
    fn node_pools_come_from_repeated_flags_in_order_and_bad_ones_are_refused() {
        let cli = Cli::try_parse_from([
            "grus-agent",
            "--cluster",
            "east",
            "--node-pool",
            "train=pool=a100-train",
            "--node-pool=big=gpus=8,zone!=b",
        ])
        .expect("flags parse");
        let config = cli.agent.into_config().expect("valid");
        let names: Vec<&str> = config.node_pools.defs().iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["train", "big"]);
        assert!(Cli::try_parse_from(["grus-agent", "--cluster", "east", "--node-pool", "Train=a=b"]).is_err());
        let twice =
            Cli::try_parse_from(["grus-agent", "--cluster", "east", "--node-pool", "a=x=1", "--node-pool", "a=x=2"])
                .expect("flags parse");
        assert!(twice.agent.into_config().is_err(), "a pool defined twice");
    }

    #[test]
    fn bad_cluster_ids_are_refused() {
        let cli = Cli::try_parse_from(["grus-agent", "--cluster", "East"]).expect("flags parse");
        assert!(cli.agent.into_config().is_err());
    }
}
