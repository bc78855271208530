//! A grus-api in the test's own process: the server's router over a test database, with the
//! authentication, limits and schema parts a test chooses. [`TestApi::router`] is driven
//! in-process ([`crate::client`]); [`TestApi::serve`] listens on a loopback port for clients
//! that need a real socket (websockets, the CLI, a browser).
//!
//! The defaults are the server's: dev authentication, production limits, a 1 MiB body limit,
//! a change feed for subscriptions, the admission batcher and the jobs cache.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use grus_api::admission::batcher::{AdmissionBatcher, AdmissionMetrics, BatcherConfig};
use grus_api::auth::AuthMode;
use grus_api::db;
use grus_api::graphql::auth::Authenticator;
use grus_api::graphql::clusters::AgentInstall;
use grus_api::graphql::{build_server_schema, Caller, GraphqlLimits, GrusSchema};
use grus_api::http::{router, AppState};
use grus_api::job_cache::{JobCache, JobCacheLimits};
use grus_api::notify::Notifier;
use serde_json::Value;
use sqlx::PgPool;

/// The server's default `--max-body-bytes`.
pub const DEFAULT_BODY_LIMIT: usize = 1 << 20;

/// What the api of a test is made of; build it with [`TestApi::router`], [`TestApi::state`]
/// or [`TestApi::serve`].
pub struct TestApi {
    pool: PgPool,
    auth: AuthMode,
    dev_platform_admin: Option<String>,
    limits: GraphqlLimits,
    body_limit: usize,
    notifier: Option<Notifier>,
    admission_batcher: bool,
    jobs_cache: bool,
    agents: AgentInstall,
    logs: Option<grus_api::logs::LogReader>,
}

impl TestApi {
    pub fn new(pool: &PgPool) -> TestApi {
        TestApi {
            pool: pool.clone(),
            auth: AuthMode::Dev,
            dev_platform_admin: None,
            limits: GraphqlLimits::production(),
            body_limit: DEFAULT_BODY_LIMIT,
            notifier: Some(Notifier::new(pool.clone())),
            admission_batcher: true,
            jobs_cache: true,
            agents: AgentInstall::default(),
            logs: None,
        }
    }

    pub fn auth(mut self, auth: AuthMode) -> TestApi {
        self.auth = auth;
        self
    }

    /// `--dev --platform-admin-subject <subject>`.
    pub fn dev_platform_admin(mut self, subject: &str) -> TestApi {
        self.dev_platform_admin = Some(subject.to_owned());
        self
    }

    pub fn limits(mut self, limits: GraphqlLimits) -> TestApi {
        self.limits = limits;
        self
    }

    /// `--max-body-bytes`.
    pub fn body_limit(mut self, bytes: usize) -> TestApi {
        self.body_limit = bytes;
        self
    }

    /// The change feed subscriptions read (default: one of its own over the pool).
    pub fn notifier(mut self, notifier: Notifier) -> TestApi {
        self.notifier = Some(notifier);
        self
    }

    /// No change feed: subscriptions fail (as in a schema built without a pool's feed).
    pub fn without_notifier(mut self) -> TestApi {
        self.notifier = None;
        self
    }

    /// `submitJob` admits each job in a transaction of its own instead of through the batcher.
    pub fn without_admission_batcher(mut self) -> TestApi {
        self.admission_batcher = false;
        self
    }

    /// Whether `jobs` pages may come from the jobs cache (`--jobs-cache-per-project 0`: never).
    pub fn jobs_cache(mut self, on: bool) -> TestApi {
        self.jobs_cache = on;
        self
    }

    /// What `registerCluster`'s install command names (`--agent-redis-url`, `--agent-chart`).
    pub fn agents(mut self, agents: AgentInstall) -> TestApi {
        self.agents = agents;
        self
    }

    /// The schema alone (for `execute` without HTTP). Starts the batcher's workers and the
    /// cache on the current runtime.
    pub fn schema(&self) -> GrusSchema {
        let pool = &self.pool;
        let batcher = self.admission_batcher.then(|| {
            AdmissionBatcher::start(pool.clone(), BatcherConfig::default(), Arc::new(AdmissionMetrics::default()))
        });
        let cache = self.jobs_cache.then(|| JobCache::new(pool.clone(), JobCacheLimits::default()));
        let (notifier, agents, logs) = (self.notifier.clone(), self.agents.clone(), self.logs.clone());
        build_server_schema(Some(pool.clone()), self.limits, notifier, agents, batcher, cache, logs)
    }

    /// `jobLogs` asks agents through this reader (none: it answers that no logs are read).
    pub fn logs(mut self, reader: grus_api::logs::LogReader) -> TestApi {
        self.logs = Some(reader);
        self
    }

    /// The handlers' state (no Redis: `/readyz` checks PostgreSQL only).
    pub fn state(&self) -> AppState {
        let auth = Authenticator::new(self.auth.clone()).with_dev_platform_admin(self.dev_platform_admin.clone());
        AppState::new(self.schema(), self.pool.clone(), auth)
    }

    /// The server's router, to drive in-process.
    pub fn router(&self) -> Router {
        router(self.state(), self.body_limit)
    }

    /// Serves the router on a free loopback port until the returned handle is dropped.
    pub async fn serve(&self) -> Served {
        self.serve_on(loopback_listener().await)
    }

    /// Serves on `listener` (bound before the api could be configured: its address goes into
    /// an OIDC provider's redirect URLs first).
    pub fn serve_on(&self, listener: tokio::net::TcpListener) -> Served {
        let addr = listener.local_addr().expect("the listener's address");
        let app = self.router();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Served { addr, base: format!("http://{addr}"), task }
    }
}

/// `query` executed by `schema` as `user` (no HTTP): the whole answer as JSON.
pub async fn execute_as(schema: &GrusSchema, user: &db::User, query: &str, variables: Value) -> Value {
    let req = async_graphql::Request::new(query)
        .variables(async_graphql::Variables::from_json(variables))
        .data(Caller { user: user.clone() });
    serde_json::to_value(schema.execute(req).await).expect("a response serializes")
}

/// A listener on a free loopback port.
pub async fn loopback_listener() -> tokio::net::TcpListener {
    tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port")
}

/// A [`TestApi`] listening on a loopback port; stops serving when dropped.
pub struct Served {
    pub addr: SocketAddr,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}
