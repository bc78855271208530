//! The agent process as a library: what the `grus-agent` binary runs, and what `grus dev` runs
//! N times in its own process.
//!
//! [`AgentConfig`] is the validated configuration (the binary parses its flags into it);
//! [`run_agent`] builds the backend, connects to Redis and runs the agent loop until the loop
//! fails or `shutdown` resolves. Startup glue, hence `anyhow` with context.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use grus_protocol::wire::NodeInfo;
use grus_scheduler::cycle::{ConsolidationConfig, SchedulerConfig, DEFAULT_SHARING_BUSY_LIMIT_PCT};
use grus_scheduler::fairshare::FairShareConfig;
use grus_scheduler::pool::NodePools;
use tokio::sync::mpsc;

use crate::agent::{Agent, AgentSettings};
use crate::backend::kube::{KubeBackend, KubeConfig};
use crate::backend::sim::SimBackend;
use crate::backend::Backend;
use crate::clock::{Clock as _, SystemClock};
use crate::credentials::CredentialStore;
use crate::heartbeat::{self, HeartbeatSettings};
use crate::http;
use crate::profiler;
use crate::transport::{CommandReader, Inbound, Publisher, RedisSettings};

/// Where the jobs run.
#[derive(Clone, Debug)]
pub enum BackendConfig {
    /// Simulated nodes and GPUs.
    Sim {
        nodes: Vec<NodeInfo>,
        /// How long replicas run without a `grus.io/sim-duration-s` label (`None`: until stopped).
        default_duration: Option<Duration>,
    },
    /// Pods on a Kubernetes cluster.
    Kube(KubeConfig),
}

/// Validated settings of one agent.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// A valid cluster id (`grus_protocol::keys::is_valid_cluster_id`).
    pub cluster: String,
    pub redis: RedisSettings,
    /// Consumer name in the `agent` group; stable across restarts so pending entries return.
    pub consumer: String,
    pub backend: BackendConfig,
    /// The book (and the simulator's journal).
    pub state_dir: PathBuf,
    /// `/metrics`, `/healthz` and, with the sim backend, `/sim/*`; `None`: no HTTP server.
    pub metrics_addr: Option<SocketAddr>,
    /// A job that cannot be placed within this time is rejected, so it can go elsewhere.
    pub place_deadline: Duration,
    /// Grace period of local preemptions.
    pub eviction_grace: Duration,
    /// The last lines of a replica that ended are kept this long after it is gone.
    pub keep_logs_for: Duration,
    /// Consolidation's disruption budget and rate limit.
    pub consolidation: ConsolidationConfig,
    /// Interference-aware sharing (`SchedulerConfig::sharing_busy_limit_pct`); `None`: off.
    pub sharing_busy_limit_pct: Option<u8>,
    /// The cluster's node pools, by label selector, in order (the first match wins).
    pub node_pools: NodePools,
    /// Whether and how queues' decayed past usage counts in fair share.
    pub fair_share: FairShareConfig,
    /// Commands read per batch.
    pub command_batch: usize,
    /// Serve this control plane (its incarnation): the operator's pin, which drops a book that
    /// served another. `None`: the first command's control plane is pinned.
    pub control_plane: Option<String>,
    /// Exchange this registration token at grus-api for the agent's own Redis credentials
    /// (`crate::credentials`); `None`: `redis` as given.
    pub token: Option<crate::credentials::TokenExchange>,
    /// Keep those credentials in this Secret (under Kubernetes) instead of the state directory.
    pub credentials_secret: Option<crate::credentials::SecretRef>,
}

/// A loop without progress for this long is hung: its heartbeat stops (`crate::heartbeat`).
pub const HEARTBEAT_MAX_STALL: Duration = Duration::from_secs(120);

/// Defaults shared with the binary's flags (a test in `main.rs` keeps them equal).
pub const DEFAULT_PLACE_DEADLINE: Duration = Duration::from_secs(300);
pub const DEFAULT_EVICTION_GRACE: Duration = Duration::from_secs(30);
/// How long the last lines of an ended replica are kept by default.
pub const DEFAULT_KEEP_LOGS_FOR: Duration = Duration::from_secs(3600);
pub const DEFAULT_COMMAND_BATCH: usize = 256;
/// The decayed past share's weight once a half-life is set (`--fair-share-history-weight`).
pub const DEFAULT_HISTORY_WEIGHT: f64 = 0.5;

/// Why an [`AgentConfig`] was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AgentConfigError {
    #[error("cluster id `{0}` must be 1-63 characters of a-z, 0-9 and '-'")]
    ClusterId(String),
    #[error("the command batch must be at least 1")]
    CommandBatch,
    #[error("the fair-share history weight must be between 0 and 1, not {0}")]
    HistoryWeight(f64),
}

impl AgentConfig {
    /// A simulated cluster with the binary's defaults: no HTTP server, replicas without a
    /// duration label run until stopped, the consumer named after the cluster.
    pub fn sim(
        cluster: &str,
        redis: RedisSettings,
        nodes: Vec<NodeInfo>,
        state_dir: PathBuf,
    ) -> Result<AgentConfig, AgentConfigError> {
        let config = AgentConfig {
            cluster: cluster.to_owned(),
            redis,
            consumer: cluster.to_owned(),
            backend: BackendConfig::Sim { nodes, default_duration: None },
            state_dir,
            metrics_addr: None,
            place_deadline: DEFAULT_PLACE_DEADLINE,
            eviction_grace: DEFAULT_EVICTION_GRACE,
            keep_logs_for: DEFAULT_KEEP_LOGS_FOR,
            consolidation: ConsolidationConfig::default(),
            sharing_busy_limit_pct: Some(DEFAULT_SHARING_BUSY_LIMIT_PCT),
            node_pools: NodePools::default(),
            fair_share: FairShareConfig::default(),
            command_batch: DEFAULT_COMMAND_BATCH,
            control_plane: None,
            token: None,
            credentials_secret: None,
        };
        config.validate()?;
        Ok(config)
    }

    pub fn validate(&self) -> Result<(), AgentConfigError> {
        if !grus_protocol::keys::is_valid_cluster_id(&self.cluster) {
            return Err(AgentConfigError::ClusterId(self.cluster.clone()));
        }
        if self.command_batch == 0 {
            return Err(AgentConfigError::CommandBatch);
        }
        let weight = self.fair_share.history_weight;
        if !(0.0..=1.0).contains(&weight) {
            return Err(AgentConfigError::HistoryWeight(weight));
        }
        Ok(())
    }
}

/// Runs one agent until its loop fails or `shutdown` resolves.
pub async fn run_agent(config: AgentConfig, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
    config.validate()?;
    let cluster = config.cluster.clone();
    let clock = Arc::new(SystemClock);
    let mut settings = AgentSettings::new(&cluster, config.state_dir.clone());
    settings.place_deadline = config.place_deadline;
    settings.keep_logs_for = config.keep_logs_for;
    settings.control_plane = config.control_plane.clone();
    settings.node_pools = config.node_pools.clone();
    let scheduler = SchedulerConfig {
        eviction_grace_s: config.eviction_grace.as_secs(),
        consolidation: config.consolidation,
        fair_share: config.fair_share,
        sharing_busy_limit_pct: config.sharing_busy_limit_pct,
        ..SchedulerConfig::default()
    };

    let kept = match &config.credentials_secret {
        Some(secret) => {
            let client =
                kube::Client::try_default().await.context("connect to the Kubernetes API for the credentials")?;
            CredentialStore::secret(client, &secret.namespace, &secret.name)
        }
        None => CredentialStore::File(config.state_dir.clone()),
    };
    let redis = crate::credentials::redis_settings(&config.redis, &kept, &cluster, config.token.as_ref())
        .await
        .context("the agent's Redis credentials")?;
    let config = AgentConfig { redis, ..config };
    let publisher = Publisher::connect(&config.redis, &cluster).await.with_context(|| {
        format!("connect to Redis at {} (is it running? start it with `redis-server`)", config.redis.url)
    })?;
    let reader = CommandReader::connect(&config.redis, &cluster, &config.consumer, config.command_batch)
        .await
        .context("open the command stream")?;
    // Beating from here on, through the rebuild after a restart too.
    settings.progress.tick();
    let beats = HeartbeatSettings {
        every: settings.heartbeat_every,
        ttl: settings.heartbeat_ttl,
        max_stall: HEARTBEAT_MAX_STALL,
        version: settings.version.clone(),
        boot: clock.now_ms(),
        serves: settings.serves.clone(),
    };
    let _heartbeat = heartbeat::spawn(config.redis.clone(), cluster.clone(), beats, settings.progress.clone())
        .context("start the heartbeat thread")?;

    match config.backend {
        BackendConfig::Sim { nodes, default_duration } => {
            let backend = SimBackend::new(nodes, Some(&config.state_dir), default_duration, clock.clone())?;
            let control = backend.control();
            let samples = profiler::spawn_sampler(Arc::new(control.clone()), settings.metrics_every);
            if let Some(addr) = config.metrics_addr {
                let router = http::sim_router(control).merge(profiler::prometheus::metrics_router(samples.clone()));
                spawn_http(addr, router).await?;
            }
            let metrics = Box::new(move || profiler::to_wire(&samples.borrow()));
            let agent = Agent::start(settings, backend, publisher, clock, scheduler, Some(metrics)).await?;
            run_until(agent, reader, shutdown).await
        }
        BackendConfig::Kube(kube) => {
            let backend = KubeBackend::connect(kube).await.context("connect to the Kubernetes API")?;
            if let Some(addr) = config.metrics_addr {
                spawn_http(addr, http::health_router()).await?;
            }
            // GPU metrics come from the node daemons (`grus-agent node`), not from here.
            let agent = Agent::start(settings, backend, publisher, clock, scheduler, None).await?;
            run_until(agent, reader, shutdown).await
        }
    }
}

/// Serves `router` on `addr` in the background.
pub async fn spawn_http(addr: SocketAddr, router: axum::Router) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("listen on {addr}"))?;
    tracing::info!(%addr, "serving /metrics and /healthz");
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            tracing::error!(error = %e, "metrics server stopped");
        }
    });
    Ok(())
}

/// Reads commands on its own connection and hands them to the agent; retries on errors. Ends
/// when the agent drops the receiver.
fn reader_task(mut reader: CommandReader) -> (mpsc::Receiver<Inbound>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel(4);
    let task = tokio::spawn(async move {
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
            if tx.is_closed() {
                return;
            }
        }
    });
    (rx, task)
}

/// The agent loop, stopped by `shutdown`. Dropping the loop mid-batch is safe: a batch is
/// acknowledged only after the book holds its effect, so unacknowledged commands come back.
async fn run_until<B: Backend>(
    agent: Agent<B>,
    reader: CommandReader,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let (inbound, reader) = reader_task(reader);
    let result = tokio::select! {
        r = agent.run(inbound) => r,
        _ = shutdown => Ok(()),
    };
    reader.abort();
    let _ = reader.await;
    result
}
