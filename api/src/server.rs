//! The `serve` process as a library: what `grus-api serve` runs, and what `grus dev` runs in
//! its own process next to simulated agents.
//!
//! [`Server::start`] does everything that can fail before traffic is accepted (connect to
//! PostgreSQL, apply migrations, connect the loops to Redis, bind the listener), so a caller
//! learns about a bad setting before it announces anything; [`Server::run`] then spawns the
//! ingestion, health and allocator loops, serves HTTP until `shutdown` resolves, and waits for
//! the loops to stop. This is startup glue, hence `anyhow` with context rather than a typed
//! error: no caller branches on why a server could not start.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use sqlx::PgPool;

use crate::admission::batcher::{AdmissionBatcher, AdmissionMetrics};
use crate::auth::AuthMode;
use crate::commands::CommandPublisher;
use crate::config::ServeConfig;
use crate::dispatcher::{AllocatorMetrics, Dispatcher};
use crate::graphql::auth::Authenticator;
use crate::http::{router, AppState};
use crate::ingest::health::HealthMonitor;
use crate::ingest::{IngestMetrics, Ingester};
use crate::job_cache::{JobCache, JobCacheMetrics};
use crate::logs::{LogReader, DEFAULT_LOG_TIMEOUT};
use crate::notify::{AllocatorWake, Notifier};
use crate::{db, graphql};

/// Without `jobs` requests, the jobs cache reads changes this often (the first request after a
/// quiet spell then reads a second's changes, not a backlog).
const JOBS_CACHE_IDLE_ROUND: std::time::Duration = std::time::Duration::from_secs(1);

/// A started server: connected, migrated and bound, not yet serving.
pub struct Server {
    config: ServeConfig,
    pool: PgPool,
    redis: redis::Client,
    notifier: Notifier,
    ingest_metrics: Arc<IngestMetrics>,
    ingester: Ingester,
    monitor: HealthMonitor,
    publisher: Option<CommandPublisher>,
    /// `jobLogs` asks agents through it (its own connection, stamped like every command).
    logs: LogReader,
    listener: tokio::net::TcpListener,
    /// This control plane's identity (`db::control_plane`).
    incarnation: String,
}

impl Server {
    /// Connects to PostgreSQL (applying pending migrations) and Redis, and binds `config.listen`.
    pub async fn start(config: ServeConfig) -> anyhow::Result<Server> {
        match &config.auth {
            AuthMode::Dev => tracing::warn!("--dev: the X-Grus-Dev-User header is trusted without authentication"),
            AuthMode::Oidc(oidc) => {
                tracing::info!(issuer = %oidc.issuer, portal_login = oidc.login.is_some(), "OIDC authentication")
            }
        }
        let pool = db::connect(&config.database_url).await.context("connect to PostgreSQL")?;
        db::migrate(&pool).await.context("apply migrations")?;
        // One LISTEN per process for subscriptions, started now so the first subscriber does not
        // wait for it.
        let notifier = Notifier::new(pool.clone());
        notifier.start();
        let redis = redis::Client::open(config.redis_url.as_str()).context("parse the Redis URL")?;
        let ingest_metrics = Arc::new(IngestMetrics::default());
        let ingester = Ingester::connect(pool.clone(), &redis, ingest_metrics.clone(), config.ingest.clone())
            .await
            .context("connect the event ingestion to Redis")?;
        let monitor = HealthMonitor::connect(pool.clone(), &redis, ingest_metrics.clone(), config.health)
            .await
            .context("connect the cluster health monitor to Redis")?;
        let incarnation =
            db::control_plane::incarnation(&pool).await.context("read the control plane's incarnation")?;
        tracing::info!(incarnation, "control-plane incarnation");
        let publisher = match config.allocator {
            Some(_) => Some(
                CommandPublisher::connect(&redis).await.context("connect to Redis for commands")?.stamped(&incarnation),
            ),
            None => None,
        };
        let logs = LogReader::new(
            CommandPublisher::connect(&redis).await.context("connect to Redis for log requests")?.stamped(&incarnation),
            DEFAULT_LOG_TIMEOUT,
        );
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("listen on {}", config.listen))?;
        Ok(Server {
            config,
            pool,
            redis,
            notifier,
            ingest_metrics,
            ingester,
            monitor,
            publisher,
            logs,
            listener,
            incarnation,
        })
    }

    /// The control plane's incarnation, which its agents serve.
    pub fn incarnation(&self) -> &str {
        &self.incarnation
    }

    /// The bound address (the real port when `listen` named port 0).
    pub fn local_addr(&self) -> anyhow::Result<SocketAddr> {
        self.listener.local_addr().context("the listener's address")
    }

    /// Serves until `shutdown` resolves, then drains HTTP and stops the background loops.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let Server {
            config, pool, redis, notifier, ingest_metrics, ingester, monitor, publisher, logs, listener, ..
        } = self;
        let admission_metrics = Arc::new(AdmissionMetrics::default());
        let jobs_cache_metrics = Arc::new(JobCacheMetrics::default());
        let allocator_metrics = Arc::new(AllocatorMetrics::default());
        // Background loops stop when this turns true: as soon as shutdown starts, so that the
        // allocator resigns its leadership while the HTTP server drains.
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let mut loops = vec![tokio::spawn(ingester.run(stopped.clone())), tokio::spawn(monitor.run(stopped.clone()))];
        let wake = AllocatorWake::default();
        if let (Some(cfg), Some(publisher)) = (config.allocator, publisher) {
            let dispatcher = Dispatcher::new(pool.clone(), publisher, cfg, allocator_metrics.clone())
                .wake_on(wake.clone(), notifier.subscribe());
            loops.push(tokio::spawn(dispatcher.run(stopped)));
        }
        let jobs_cache = config.jobs_cache.map(|limits| {
            let cache = JobCache::with(pool.clone(), limits, Some(JOBS_CACHE_IDLE_ROUND), jobs_cache_metrics.clone());
            cache.start();
            cache
        });
        let schema = graphql::build_server_schema(
            Some(pool.clone()),
            config.graphql,
            Some(notifier),
            config.agent_install.clone(),
            Some(AdmissionBatcher::start_waking(pool.clone(), config.admission, admission_metrics.clone(), Some(wake))),
            jobs_cache,
            Some(logs),
        );
        let auth = Authenticator::new(config.auth.clone()).with_dev_platform_admin(config.dev_platform_admin.clone());
        let mut state = AppState::new(schema, pool, auth);
        state.redis = Some(redis);
        state.metrics.register(ingest_metrics);
        state.metrics.register(admission_metrics);
        state.metrics.register(jobs_cache_metrics);
        state.metrics.register(allocator_metrics);
        let addr = listener.local_addr().context("the listener's address")?;
        tracing::info!(listen = %addr, "grus-api serving");
        let mut app = router(state, config.max_body_bytes);
        if let Some(dir) = &config.portal_dir {
            tracing::info!(dir = %dir.display(), "serving the portal");
            app = crate::portal::with_portal(app, dir);
        }
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                shutdown.await;
                let _ = stop.send(true);
            })
            .await
            .context("serve")?;
        // The allocator resigns its leadership before it returns, so another replica takes over.
        for task in loops {
            let _ = task.await;
        }
        tracing::info!("stopped");
        Ok(())
    }
}

/// [`Server::start`] then [`Server::run`].
pub async fn run(config: ServeConfig, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
    Server::start(config).await?.run(shutdown).await
}

/// Resolves on SIGTERM (how Kubernetes stops a pod) or ctrl-c.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}
