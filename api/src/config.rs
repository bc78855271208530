//! Command line and validated configuration of the `grus-api` binary (STYLE habit 7).
//!
//! Raw flags ([`ServeArgs`]) are parsed by clap, every one with an env fallback; [`ServeArgs::validate`]
//! turns them into [`ServeConfig`], the only thing the server receives, made of the types each
//! subsystem owns (`auth::AuthMode`, `graphql::GraphqlLimits`, `dispatcher::DispatcherConfig`,
//! ...): this module parses flags into them and defines no setting of its own. It fails closed: without
//! OIDC settings the server refuses to start unless `--dev` is explicit, and `--dev` (which
//! trusts an unauthenticated identity header) only listens on a loopback address.

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::admission::batcher::BatcherConfig;
use crate::auth::{valid_dev_name, AuthMode, LoginConfig, OidcConfig, Secret};
use crate::dispatcher::DispatcherConfig;
use crate::graphql::clusters::{AgentInstall, DEFAULT_AGENT_CHART};
use crate::graphql::GraphqlLimits;
use crate::ingest::health::HealthConfig;
use crate::ingest::IngestConfig;
use crate::job_cache::JobCacheLimits;
use grus_scheduler::fairshare::FairShareConfig;

#[derive(Debug, Parser)]
#[command(name = "grus-api", version, about = "Grus control plane server")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once at startup: the size of the `serve` variant costs nothing worth boxing for.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server (applies pending migrations first).
    Serve(ServeArgs),
    /// Apply pending database migrations and exit.
    Migrate(MigrateArgs),
    /// Print the GraphQL schema (SDL) to stdout.
    Schema,
}

#[derive(Debug, Args)]
pub struct DbArgs {
    /// PostgreSQL URL (postgres://user@host:port/db). Over loopback (localhost, 127.0.0.0/8,
    /// ::1, a Unix socket) the connection is not encrypted unless the URL or PGSSLMODE names
    /// `sslmode`; elsewhere libpq's default `prefer` applies.
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: String,
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Give the control plane a new identity (incarnation) after restoring its database from a
    /// backup: agents that served the old one refuse its commands until re-pinned with
    /// `grus-agent --control-plane <incarnation>`.
    #[arg(long)]
    pub new_incarnation: bool,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "GRUS_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub db: DbArgs,
    /// Redis URL (redis://host:port).
    #[arg(long, env = "REDIS_URL")]
    pub redis_url: String,
    /// OIDC issuer URL, exactly as the provider's discovery document names it (a trailing slash
    /// matters). Required unless --dev.
    #[arg(long, env = "GRUS_OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,
    /// OIDC audience (client id) expected in bearer JWTs. Required unless --dev.
    #[arg(long, env = "GRUS_OIDC_AUDIENCE")]
    pub oidc_audience: Option<String>,
    /// OIDC client id of the portal login (authorization code + PKCE). Without it only bearer
    /// JWTs and API tokens are accepted and /auth/login answers 404.
    #[arg(long, env = "GRUS_OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,
    /// OIDC client secret of the portal login; omit for a public client (PKCE only).
    #[arg(long, env = "GRUS_OIDC_CLIENT_SECRET", hide_env_values = true)]
    pub oidc_client_secret: Option<String>,
    /// Public base URL of this server as browsers see it (https://grus.example.com). Required
    /// with --oidc-client-id; https makes the cookies Secure.
    #[arg(long, env = "GRUS_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Redirect URL registered at the provider. Default: <public URL>/auth/callback.
    #[arg(long, env = "GRUS_OIDC_REDIRECT_URL")]
    pub oidc_redirect_url: Option<String>,
    /// Scopes requested at login, besides `openid` (comma-separated).
    #[arg(long, env = "GRUS_OIDC_SCOPES", value_delimiter = ',', default_value = "email,profile")]
    pub oidc_scopes: Vec<String>,
    /// OIDC subject (`sub`) that becomes platform admin when it signs in. With --dev, a dev
    /// identity (`dev:<name>`) that becomes platform admin on its first request.
    #[arg(long, env = "GRUS_PLATFORM_ADMIN_SUBJECT")]
    pub platform_admin_subject: Option<String>,
    /// Least time between two JWKS fetches caused by an unknown key id: keys rotate without a
    /// restart, but forged key ids cannot make the server hammer the provider.
    #[arg(long, env = "GRUS_OIDC_JWKS_REFETCH_INTERVAL", default_value = "30s", value_parser = humantime::parse_duration)]
    pub oidc_jwks_refetch_interval: Duration,
    /// Clock skew allowed on `exp` and `nbf`.
    #[arg(long, env = "GRUS_OIDC_LEEWAY", default_value = "30s", value_parser = humantime::parse_duration)]
    pub oidc_leeway: Duration,
    /// Lifetime of a portal session.
    #[arg(long, env = "GRUS_SESSION_TTL", default_value = "12h", value_parser = humantime::parse_duration)]
    pub session_ttl: Duration,
    /// Development mode: trusts the X-Grus-Dev-User header, enables introspection. Loopback only.
    #[arg(long, env = "GRUS_DEV")]
    pub dev: bool,
    /// Enable GraphQL introspection outside --dev.
    #[arg(long, env = "GRUS_GRAPHQL_INTROSPECTION")]
    pub graphql_introspection: bool,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "GRUS_MAX_BODY_BYTES", default_value_t = 1 << 20)]
    pub max_body_bytes: usize,
    /// The portal's built files (`portal/dist`), served with an SPA fallback to index.html.
    #[arg(long, env = "GRUS_PORTAL_DIR")]
    pub portal_dir: Option<std::path::PathBuf>,
    /// This replica's consumer name in the `api` group of the agents' event streams; unique
    /// per replica. Default: <hostname>-<pid>.
    #[arg(long, env = "GRUS_INGEST_CONSUMER")]
    pub ingest_consumer: Option<String>,
    /// Events another replica read but never acknowledged for this long are taken over.
    #[arg(long, env = "GRUS_INGEST_CLAIM_IDLE", default_value = "60s", value_parser = humantime::parse_duration)]
    pub ingest_claim_idle: Duration,
    /// A cluster without heartbeat for this long is unreachable: its jobs not yet running are
    /// re-dispatched, its running ones become `unknown`.
    #[arg(long, env = "GRUS_CLUSTER_LOSS_TIMEOUT", default_value = "60s", value_parser = humantime::parse_duration)]
    pub cluster_loss_timeout: Duration,
    /// How often cluster heartbeats are checked.
    #[arg(long, env = "GRUS_HEALTH_INTERVAL", default_value = "5s", value_parser = humantime::parse_duration)]
    pub health_interval: Duration,
    /// Shards of queues for admission: each admits the submissions to its queues in batches,
    /// one transaction at a time (one database connection each). More shards than the
    /// database has cores only makes the batches smaller (BENCHMARKS.md, "Control plane API").
    #[arg(long, env = "GRUS_ADMISSION_SHARDS", default_value_t = 2,
          value_parser = clap::value_parser!(u16).range(1..=64))]
    pub admission_shards: u16,
    /// Most submissions admitted in one transaction (1: a transaction per submission).
    #[arg(long, env = "GRUS_ADMISSION_MAX_BATCH", default_value_t = 64,
          value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub admission_max_batch: u16,
    /// Newest jobs of each project held in memory to answer `jobs` pages without reading
    /// them from PostgreSQL (0: every page reads PostgreSQL). Deeper pages read PostgreSQL.
    #[arg(long, env = "GRUS_JOBS_CACHE_PER_PROJECT", default_value_t = JobCacheLimits::default().per_project,
          value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub jobs_cache_per_project: u32,
    /// Most jobs the jobs cache holds over all projects (about 1.2 KiB each); beyond it the
    /// project holding the most gives up its oldest.
    #[arg(long, env = "GRUS_JOBS_CACHE_MAX_JOBS", default_value_t = JobCacheLimits::default().max_jobs,
          value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    pub jobs_cache_max_jobs: u32,
    #[command(flatten)]
    pub allocator: AllocatorArgs,
    #[command(flatten)]
    pub agents: AgentInstallArgs,
}

/// What `registerCluster` tells a new cluster: the install command of the grus-agent chart.
#[derive(Debug, Args)]
pub struct AgentInstallArgs {
    /// Redis as the agents reach it (redis://host:port or rediss://host:port, no credentials:
    /// each cluster's ACL user goes in its chart's secret). Default: --redis-url without its
    /// credentials.
    #[arg(long, env = "GRUS_AGENT_REDIS_URL")]
    pub agent_redis_url: Option<String>,
    /// The grus-agent Helm chart named in registerCluster's install command (an OCI or
    /// repository reference, or a path).
    #[arg(long, env = "GRUS_AGENT_CHART", default_value = DEFAULT_AGENT_CHART)]
    pub agent_chart: String,
    /// grus-api's URL as the agents reach it: registerCluster's install command then gives each
    /// agent its own Redis user (the chart's `registration.*`). Default: none.
    #[arg(long, env = "GRUS_AGENT_API_URL")]
    pub agent_api_url: Option<String>,
}

impl AgentInstallArgs {
    /// `api_redis_url` is this server's own `--redis-url`, the fallback without credentials.
    fn validate(self, api_redis_url: &str) -> Result<AgentInstall, ConfigError> {
        let redis_url = match self.agent_redis_url.filter(|u| !u.is_empty()) {
            Some(url) => {
                let (_, _, userinfo) = split_redis_url("--agent-redis-url", &url)?;
                if userinfo {
                    return Err(ConfigError::InvalidUrl {
                        flag: "--agent-redis-url",
                        reason: "must not carry credentials: each cluster's ACL user goes in its agent chart's secret"
                            .into(),
                    });
                }
                url
            }
            None => {
                let (scheme, rest, _) = split_redis_url("--redis-url", api_redis_url).map_err(|e| match e {
                    ConfigError::InvalidUrl { reason, .. } => ConfigError::InvalidUrl {
                        flag: "--agent-redis-url",
                        reason: format!("not set, and --redis-url cannot stand in for it ({reason})"),
                    },
                    other => other,
                })?;
                format!("{scheme}://{rest}")
            }
        };
        let chart = self.agent_chart;
        if chart.is_empty() || !chart.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:@".contains(c)) {
            return Err(ConfigError::AgentChart(chart));
        }
        let api_url = self.agent_api_url.filter(|u| !u.is_empty()).map(|u| u.trim_end_matches('/').to_owned());
        if let Some(url) = &api_url {
            let plain = url.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:@%".contains(c));
            if !(url.starts_with("http://") || url.starts_with("https://")) || !plain {
                return Err(ConfigError::InvalidUrl {
                    flag: "--agent-api-url",
                    reason: "an http(s) URL of characters that need no shell quoting".into(),
                });
            }
        }
        Ok(AgentInstall { redis_url, chart, api_url })
    }
}

/// Splits a TCP Redis URL into scheme, the rest without `user:password@`, and whether it had
/// credentials. Only characters that need no shell quoting: the URL is pasted into a command.
fn split_redis_url<'a>(flag: &'static str, url: &'a str) -> Result<(&'a str, &'a str, bool), ConfigError> {
    let bad = |reason: &str| ConfigError::InvalidUrl { flag, reason: reason.into() };
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("not an absolute URL"))?;
    if scheme != "redis" && scheme != "rediss" {
        return Err(bad("the scheme must be redis or rediss (a TCP address the agents can reach)"));
    }
    let (userinfo, host_part) = match rest.rsplit_once('@') {
        Some((_, host)) => (true, host),
        None => (false, rest),
    };
    let host = host_part.split(['/', '?', '#']).next().unwrap_or("");
    let safe = |c: char| c.is_ascii_alphanumeric() || "-._:/[]".contains(c);
    if host.is_empty() || !host_part.chars().all(safe) {
        return Err(bad("not a plain redis://host:port URL"));
    }
    Ok((scheme, host_part, userinfo))
}

/// The allocator loop (one replica leads at a time; see `dispatcher`).
#[derive(Debug, Args)]
pub struct AllocatorArgs {
    /// Do not run the allocator loop in this replica.
    #[arg(long, env = "GRUS_NO_ALLOCATOR")]
    pub no_allocator: bool,
    /// Time between allocator rounds (humantime: `1s`, `500ms`).
    #[arg(long, env = "GRUS_ALLOCATOR_INTERVAL", default_value = "1s", value_parser = humantime::parse_duration)]
    pub allocator_interval: Duration,
    /// An unanswered dispatch older than this times out; the job goes to another cluster.
    #[arg(long, env = "GRUS_DISPATCH_TIMEOUT", default_value = "2m", value_parser = humantime::parse_duration)]
    pub dispatch_timeout: Duration,
    /// How long capacity promised to a dispatched job stays reserved while its agent has not answered.
    #[arg(long, env = "GRUS_RESERVATION_TTL", default_value = "60s", value_parser = humantime::parse_duration)]
    pub reservation_ttl: Duration,
    /// Grace period a job evicted to reclaim borrowed capacity gets before its replicas are
    /// stopped (whole seconds; `0s` stops them at once). The agents' flag of the same name is
    /// the grace of their local preemptions. Formerly `--evict-grace`, still accepted.
    #[arg(long, alias = "evict-grace", env = "GRUS_EVICTION_GRACE", default_value = "30s",
          value_parser = humantime::parse_duration)]
    pub eviction_grace: Duration,
    /// Count each queue's decayed past GPU usage in the fleet's fair-share order, halving every
    /// this long (`7d`, `24h`): a tenant, project or queue that used much of the fleet lately
    /// is served after one that did not (as the agents' flag of the same name does on each
    /// cluster). Unset: only what is held now counts.
    #[arg(long, env = "GRUS_FAIR_SHARE_HALF_LIFE", value_parser = humantime::parse_duration)]
    pub fair_share_half_life: Option<Duration>,
    /// How much the decayed past share weighs against the current one, 0 to 1.
    #[arg(long, env = "GRUS_FAIR_SHARE_HISTORY_WEIGHT", default_value_t = 0.5)]
    pub fair_share_history_weight: f64,
}

impl AllocatorArgs {
    fn fair_share(&self) -> Result<FairShareConfig, ConfigError> {
        let weight = self.fair_share_history_weight;
        if !(0.0..=1.0).contains(&weight) {
            return Err(ConfigError::HistoryWeight(weight.to_string()));
        }
        let half_life_s = match self.fair_share_half_life {
            Some(d) if d.as_secs() == 0 => return Err(ConfigError::Duration("--fair-share-half-life")),
            d => d.map(|d| d.as_secs()),
        };
        Ok(FairShareConfig { half_life_s, history_weight: weight })
    }

    fn validate(&self) -> Result<Option<DispatcherConfig>, ConfigError> {
        if self.no_allocator {
            return Ok(None);
        }
        let positive = |name: &'static str, d: Duration| {
            chrono::Duration::from_std(d)
                .ok()
                .filter(|d| *d > chrono::Duration::zero())
                .ok_or(ConfigError::Duration(name))
        };
        if self.allocator_interval.is_zero() {
            return Err(ConfigError::Duration("--allocator-interval"));
        }
        Ok(Some(DispatcherConfig {
            interval: self.allocator_interval,
            dispatch_timeout: positive("--dispatch-timeout", self.dispatch_timeout)?,
            reservation_ttl: positive("--reservation-ttl", self.reservation_ttl)?,
            evict_grace_s: whole_seconds("--eviction-grace", self.eviction_grace)?,
            fair_share: self.fair_share()?,
            ..DispatcherConfig::default()
        }))
    }
}

/// A duration the wire carries in whole seconds (`Evict { grace_s }`): a fraction would be
/// silently dropped, so it is refused.
fn whole_seconds(flag: &'static str, d: Duration) -> Result<u32, ConfigError> {
    if d.subsec_nanos() != 0 {
        return Err(ConfigError::WholeSeconds(flag));
    }
    u32::try_from(d.as_secs()).map_err(|_| ConfigError::WholeSeconds(flag))
}

/// Validated settings of `serve`.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub database_url: String,
    pub redis_url: String,
    pub auth: AuthMode,
    pub graphql: GraphqlLimits,
    pub max_body_bytes: usize,
    /// Directory holding the portal's `index.html`; `None`: the api serves no portal.
    pub portal_dir: Option<std::path::PathBuf>,
    pub ingest: IngestConfig,
    pub health: HealthConfig,
    /// `None` with `--no-allocator`.
    pub allocator: Option<DispatcherConfig>,
    pub admission: BatcherConfig,
    /// What the jobs cache holds; `None`: no cache.
    pub jobs_cache: Option<JobCacheLimits>,
    /// `--dev` only: the dev identity (`dev:<name>`) made platform admin when it is seen. (In
    /// OIDC mode the subject is part of [`OidcConfig`].)
    pub dev_platform_admin: Option<String>,
    /// What registerCluster's install command names.
    pub agent_install: AgentInstall,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(
        "OIDC is not configured (--oidc-issuer and --oidc-audience); pass --dev for a local, unauthenticated setup"
    )]
    NoAuth,
    #[error("--dev trusts an unauthenticated identity header and may only listen on a loopback address, not {0}")]
    DevNotLoopback(SocketAddr),
    #[error("--portal-dir {0}: no index.html there (build the portal first: npm --prefix portal run build)")]
    NoPortal(String),
    #[error("{flag}: {reason}")]
    InvalidUrl { flag: &'static str, reason: String },
    #[error("--oidc-client-id needs --public-url (the browser-facing base URL of this server)")]
    NoPublicUrl,
    #[error("{0} must not be zero")]
    ZeroDuration(&'static str),
    #[error("--ingest-consumer must be 1 to 200 characters")]
    BadConsumer,
    #[error("{0} must be a positive duration")]
    Duration(&'static str),
    #[error("{0} must be a whole number of seconds (at most {max})", max = u32::MAX)]
    WholeSeconds(&'static str),
    #[error("--platform-admin-subject {0}: with --dev it must be a dev identity `dev:<name>` (name: a-z, 0-9, '-', '_', '.')")]
    DevAdminSubject(String),
    #[error("--agent-chart `{0}`: expected a chart reference (oci://..., repo/chart or a path)")]
    AgentChart(String),
    #[error("--fair-share-history-weight must be between 0 and 1, not {0}")]
    HistoryWeight(String),
}

/// Checks an absolute http(s) URL. Plain http only for loopback hosts: tokens and cookies must
/// not cross a network in clear text.
pub fn check_url(flag: &'static str, value: &str) -> Result<(), ConfigError> {
    let bad = |reason: &str| ConfigError::InvalidUrl { flag, reason: reason.into() };
    let (scheme, rest) = value.split_once("://").ok_or_else(|| bad("not an absolute URL"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') || value.contains(char::is_whitespace) {
        return Err(bad("not a plain http(s) URL with a host"));
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    match scheme {
        "https" => Ok(()),
        "http" if host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()) => Ok(()),
        "http" => Err(bad("http is only allowed for loopback hosts; use https")),
        _ => Err(bad("the scheme must be https")),
    }
}

impl ServeArgs {
    pub fn validate(self) -> Result<ServeConfig, ConfigError> {
        let mut dev_platform_admin = None;
        let auth = match (self.dev, self.oidc_issuer, self.oidc_audience) {
            (true, _, _) => {
                if !self.listen.ip().is_loopback() {
                    return Err(ConfigError::DevNotLoopback(self.listen));
                }
                if let Some(subject) = self.platform_admin_subject.filter(|s| !s.is_empty()) {
                    let valid = subject.strip_prefix("dev:").is_some_and(valid_dev_name);
                    if !valid {
                        return Err(ConfigError::DevAdminSubject(subject));
                    }
                    dev_platform_admin = Some(subject);
                }
                AuthMode::Dev
            }
            (false, Some(issuer), Some(audience)) if !issuer.is_empty() && !audience.is_empty() => {
                check_url("--oidc-issuer", &issuer)?;
                if self.session_ttl.is_zero() {
                    return Err(ConfigError::ZeroDuration("--session-ttl"));
                }
                let login = match self.oidc_client_id.filter(|c| !c.is_empty()) {
                    None => None,
                    Some(client_id) => {
                        let public_url = self.public_url.ok_or(ConfigError::NoPublicUrl)?;
                        check_url("--public-url", &public_url)?;
                        let public_url = public_url.trim_end_matches('/').to_owned();
                        let redirect_url =
                            self.oidc_redirect_url.unwrap_or_else(|| format!("{public_url}/auth/callback"));
                        check_url("--oidc-redirect-url", &redirect_url)?;
                        let mut scopes: Vec<String> = Vec::new();
                        for s in self.oidc_scopes.iter().map(|s| s.trim()) {
                            if !s.is_empty() && s != "openid" && !scopes.iter().any(|x| x == s) {
                                scopes.push(s.to_owned());
                            }
                        }
                        Some(LoginConfig {
                            client_id,
                            client_secret: self.oidc_client_secret.filter(|s| !s.is_empty()).map(Secret),
                            secure_cookies: public_url.starts_with("https://"),
                            public_url,
                            redirect_url,
                            scopes,
                            session_ttl: self.session_ttl,
                        })
                    }
                };
                AuthMode::Oidc(OidcConfig {
                    issuer,
                    audience,
                    login,
                    platform_admin_subject: self.platform_admin_subject.filter(|s| !s.is_empty()),
                    jwks_refetch_interval: self.oidc_jwks_refetch_interval,
                    leeway: self.oidc_leeway,
                })
            }
            _ => return Err(ConfigError::NoAuth),
        };
        if let Some(dir) = &self.portal_dir {
            if !dir.join("index.html").is_file() {
                return Err(ConfigError::NoPortal(dir.display().to_string()));
            }
        }
        let allocator = self.allocator.validate()?;
        let introspection = self.dev || self.graphql_introspection;
        for (flag, d) in [
            ("--cluster-loss-timeout", self.cluster_loss_timeout),
            ("--health-interval", self.health_interval),
            ("--ingest-claim-idle", self.ingest_claim_idle),
        ] {
            if d.is_zero() {
                return Err(ConfigError::ZeroDuration(flag));
            }
        }
        let consumer = self.ingest_consumer.unwrap_or_else(crate::ingest::default_consumer_name);
        if consumer.is_empty() || consumer.len() > 200 {
            return Err(ConfigError::BadConsumer);
        }
        let ingest = IngestConfig { claim_idle: self.ingest_claim_idle, ..IngestConfig::new(consumer) };
        let health = HealthConfig { loss_timeout: self.cluster_loss_timeout, interval: self.health_interval };
        let agent_install = self.agents.validate(&self.redis_url)?;
        Ok(ServeConfig {
            listen: self.listen,
            database_url: self.db.database_url,
            redis_url: self.redis_url,
            auth,
            graphql: GraphqlLimits { introspection, ..GraphqlLimits::production() },
            max_body_bytes: self.max_body_bytes,
            jobs_cache: (self.jobs_cache_per_project > 0).then_some(JobCacheLimits {
                per_project: self.jobs_cache_per_project,
                max_jobs: self.jobs_cache_max_jobs,
            }),
            portal_dir: self.portal_dir,
            ingest,
            health,
            allocator,
            admission: BatcherConfig {
                shards: usize::from(self.admission_shards),
                max_batch: usize::from(self.admission_max_batch),
            },
            dev_platform_admin,
            agent_install,
        })
    }
}

/// Environment variables `grus-api` once read under another name, `(old, new)`: the database and
/// Redis URLs now have the names of every other Grus binary and tool (`DATABASE_URL`,
/// `REDIS_URL`), and the eviction grace the agents' name.
pub const RENAMED_ENV: &[(&str, &str)] = &[
    ("GRUS_DATABASE_URL", "DATABASE_URL"),
    ("GRUS_REDIS_URL", "REDIS_URL"),
    ("GRUS_EVICT_GRACE", "GRUS_EVICTION_GRACE"),
];

/// Keeps a deployment that still sets an old name of [`RENAMED_ENV`] working: for each
/// `(old, new)` with `old` set, sets `new` to its value and warns on stderr (one line). `old`
/// wins over a `new` that is set too, as it did before the rename: a deployment that set only
/// the old names may have the new ones set for something else (`DATABASE_URL` and `REDIS_URL`
/// are common names).
///
/// Call it before any other thread exists (first thing in `main`, before the Tokio runtime is
/// built): changing the environment races with a thread reading it outside Rust's lock.
pub fn adopt_renamed_env(renamed: &[(&str, &str)]) {
    for &(old, new) in renamed {
        let Some(value) = std::env::var_os(old) else { continue };
        if std::env::var_os(new).is_some_and(|v| v != value) {
            eprintln!("warning: {old} is deprecated and overrides {new}, which is set too: set only {new}");
        } else {
            eprintln!("warning: {old} is deprecated: set {new} instead");
        }
        std::env::set_var(new, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<ServeConfig, ConfigError> {
        let mut all = vec!["grus-api", "serve", "--database-url", "postgres://x/y", "--redis-url", "redis://r"];
        all.extend_from_slice(args);
        match Cli::try_parse_from(all).expect("flags parse").command {
            Command::Serve(a) => a.validate(),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn fails_closed_without_auth() {
        assert_eq!(parse(&[]).unwrap_err(), ConfigError::NoAuth);
        assert_eq!(parse(&["--oidc-issuer", "https://i"]).unwrap_err(), ConfigError::NoAuth);
    }

    #[test]
    fn portal_dir_must_hold_index_html() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap();
        assert!(matches!(parse(&["--dev", "--portal-dir", path]), Err(ConfigError::NoPortal(_))));
        std::fs::write(dir.path().join("index.html"), "<html></html>").unwrap();
        assert_eq!(parse(&["--dev", "--portal-dir", path]).unwrap().portal_dir.as_deref(), Some(dir.path()));
    }

    #[test]
    fn dev_only_on_loopback() {
        assert!(matches!(parse(&["--dev", "--listen", "0.0.0.0:8080"]), Err(ConfigError::DevNotLoopback(_))));
        let c = parse(&["--dev", "--listen", "[::1]:8080"]).unwrap();
        assert_eq!(c.auth, AuthMode::Dev);
        assert!(c.graphql.introspection);
        assert_eq!(c.dev_platform_admin, None);
    }

    #[test]
    fn dev_platform_admin_is_a_dev_identity() {
        let c = parse(&["--dev", "--platform-admin-subject", "dev:admin"]).unwrap();
        assert_eq!(c.dev_platform_admin.as_deref(), Some("dev:admin"));
        for bad in ["admin", "dev:", "dev:Admin", "oidc|123"] {
            assert_eq!(
                parse(&["--dev", "--platform-admin-subject", bad]).unwrap_err(),
                ConfigError::DevAdminSubject(bad.to_owned()),
                "{bad}"
            );
        }
        let oidc = ["--oidc-issuer", "https://i", "--oidc-audience", "grus", "--platform-admin-subject", "u1"];
        let c = parse(&oidc).unwrap();
        assert_eq!(c.dev_platform_admin, None, "OIDC mode keeps the subject in OidcConfig");
        let AuthMode::Oidc(o) = c.auth else { panic!("oidc mode") };
        assert_eq!(o.platform_admin_subject.as_deref(), Some("u1"));
    }

    #[test]
    fn login_settings() {
        let base = ["--oidc-issuer", "https://idp.example", "--oidc-audience", "grus"];
        let with = |extra: &[&str]| parse(&[&base[..], extra].concat());
        assert_eq!(with(&["--oidc-client-id", "portal"]).unwrap_err(), ConfigError::NoPublicUrl);
        let c = with(&[
            "--oidc-client-id",
            "portal",
            "--public-url",
            "https://grus.example/",
            "--oidc-scopes",
            "openid,email,email",
        ])
        .unwrap();
        let AuthMode::Oidc(oidc) = c.auth else { panic!("oidc mode") };
        let login = oidc.login.unwrap();
        assert_eq!(login.redirect_url, "https://grus.example/auth/callback");
        assert_eq!(login.scopes, vec!["email".to_owned()]);
        assert!(login.secure_cookies);
        assert!(matches!(
            with(&["--oidc-client-id", "p", "--public-url", "http://grus.example"]),
            Err(ConfigError::InvalidUrl { flag: "--public-url", .. })
        ));
        let local = with(&["--oidc-client-id", "p", "--public-url", "http://127.0.0.1:8080"]).unwrap();
        let AuthMode::Oidc(oidc) = local.auth else { panic!("oidc mode") };
        assert!(!oidc.login.unwrap().secure_cookies);
        assert!(matches!(
            parse(&["--oidc-issuer", "ftp://x", "--oidc-audience", "grus"]),
            Err(ConfigError::InvalidUrl { flag: "--oidc-issuer", .. })
        ));
        assert_eq!(with(&["--session-ttl", "0s"]).unwrap_err(), ConfigError::ZeroDuration("--session-ttl"));
        let secret = with(&["--oidc-client-id", "p", "--public-url", "https://g", "--oidc-client-secret", "s3cr3t"]);
        assert!(!format!("{secret:?}").contains("s3cr3t"));
    }

    #[test]
    fn urls() {
        assert!(check_url("f", "https://idp.example/realms/x").is_ok());
        assert!(check_url("f", "http://localhost:8080").is_ok());
        assert!(check_url("f", "http://[::1]:8080/").is_ok());
        assert!(check_url("f", "http://10.0.0.1").is_err());
        assert!(check_url("f", "https://user@idp.example").is_err());
        assert!(check_url("f", "idp.example").is_err());
    }

    #[test]
    fn ingestion_flags() {
        let c = parse(&["--dev", "--cluster-loss-timeout", "90s", "--ingest-consumer", "api-0"]).unwrap();
        assert_eq!(c.health.loss_timeout, Duration::from_secs(90));
        assert_eq!(c.ingest.consumer, "api-0");
        let c = parse(&["--dev"]).unwrap();
        assert_eq!(c.health.loss_timeout, Duration::from_secs(60));
        assert!(c.ingest.consumer.ends_with(&format!("-{}", std::process::id())));
        assert_eq!(
            parse(&["--dev", "--cluster-loss-timeout", "0s"]).unwrap_err(),
            ConfigError::ZeroDuration("--cluster-loss-timeout")
        );
    }

    #[test]
    fn jobs_cache_flags() {
        assert_eq!(parse(&["--dev"]).unwrap().jobs_cache, Some(JobCacheLimits::default()));
        assert_eq!(parse(&["--dev", "--jobs-cache-per-project", "0"]).unwrap().jobs_cache, None);
        let c = parse(&["--dev", "--jobs-cache-per-project", "50", "--jobs-cache-max-jobs", "900"]).unwrap();
        assert_eq!(c.jobs_cache, Some(JobCacheLimits { per_project: 50, max_jobs: 900 }));
        let all = ["grus-api", "serve", "--database-url", "postgres://x/y", "--redis-url", "redis://r", "--dev"];
        for bad in [["--jobs-cache-max-jobs", "0"], ["--jobs-cache-per-project", "-1"]] {
            assert!(Cli::try_parse_from(all.iter().chain(&bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn admission_flags_default_and_refuse_zero() {
        assert_eq!(parse(&["--dev"]).unwrap().admission, BatcherConfig::default());
        let c = parse(&["--dev", "--admission-shards", "2", "--admission-max-batch", "1"]).unwrap();
        assert_eq!(c.admission, BatcherConfig { shards: 2, max_batch: 1 });
        let all = ["grus-api", "serve", "--database-url", "postgres://x/y", "--redis-url", "redis://r", "--dev"];
        for bad in [["--admission-shards", "0"], ["--admission-max-batch", "0"], ["--admission-shards", "65"]] {
            assert!(Cli::try_parse_from(all.iter().chain(&bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn allocator_flags_parse_humantime_and_can_be_turned_off() {
        let c = parse(&["--dev", "--allocator-interval", "250ms", "--dispatch-timeout", "5m"]).unwrap();
        let a = c.allocator.expect("on by default");
        assert_eq!(a.interval, Duration::from_millis(250));
        assert_eq!(a.dispatch_timeout, chrono::Duration::minutes(5));
        assert_eq!(a.reservation_ttl, chrono::Duration::seconds(60));
        assert_eq!(a.evict_grace_s, 30, "the reclaim grace defaults to 30s");
        assert!(parse(&["--dev", "--no-allocator"]).unwrap().allocator.is_none());
        let quick = parse(&["--dev", "--eviction-grace", "3s"]).unwrap().allocator.unwrap();
        assert_eq!(quick.evict_grace_s, 3);
        assert_eq!(parse(&["--dev", "--eviction-grace", "0s"]).unwrap().allocator.unwrap().evict_grace_s, 0);
        let old_flag = parse(&["--dev", "--evict-grace", "4s"]).unwrap().allocator.unwrap();
        assert_eq!(old_flag.evict_grace_s, 4, "the flag's former name still works");
        assert_eq!(
            parse(&["--dev", "--eviction-grace", "1500ms"]).unwrap_err(),
            ConfigError::WholeSeconds("--eviction-grace"),
            "the wire carries whole seconds"
        );
        assert_eq!(
            parse(&["--dev", "--reservation-ttl", "0s"]).unwrap_err(),
            ConfigError::Duration("--reservation-ttl")
        );
        assert_eq!(a.fair_share.half_life_s, None, "history does not count by default");
        let history = parse(&["--dev", "--fair-share-half-life", "7d", "--fair-share-history-weight", "0.3"]).unwrap();
        let fs = history.allocator.unwrap().fair_share;
        assert_eq!((fs.half_life_s, fs.history_weight), (Some(7 * 86_400), 0.3));
        assert_eq!(
            parse(&["--dev", "--fair-share-history-weight", "1.5"]).unwrap_err(),
            ConfigError::HistoryWeight("1.5".into())
        );
        assert_eq!(
            parse(&["--dev", "--fair-share-half-life", "0s"]).unwrap_err(),
            ConfigError::Duration("--fair-share-half-life")
        );
    }

    #[test]
    fn agent_redis_url_is_explicit_or_the_api_one_without_credentials() {
        let c = parse(&["--dev", "--agent-redis-url", "rediss://redis.grus.example.com:6380"]).unwrap();
        assert_eq!(c.agent_install.redis_url, "rediss://redis.grus.example.com:6380");
        assert_eq!(c.agent_install.chart, DEFAULT_AGENT_CHART);
        // The fallback is --redis-url ("redis://r" in `parse`).
        assert_eq!(parse(&["--dev"]).unwrap().agent_install.redis_url, "redis://r");
        let all = ["grus-api", "serve", "--dev", "--database-url", "postgres://x/y"];
        let with_redis = |url: &str| match Cli::try_parse_from(all.iter().copied().chain(["--redis-url", url])).unwrap()
        {
            Cli { command: Command::Serve(a) } => a.validate(),
            _ => unreachable!(),
        };
        let c = with_redis("redis://api:s3cret@redis.internal:6379/0").unwrap();
        assert_eq!(c.agent_install.redis_url, "redis://redis.internal:6379/0");
        assert!(matches!(
            with_redis("redis+unix:///run/redis.sock").unwrap_err(),
            ConfigError::InvalidUrl { flag: "--agent-redis-url", .. }
        ));
        for bad in ["redis://agent:pw@redis:6379", "http://redis:6379", "redis://", "redis://h;rm -rf /:6379"] {
            assert!(
                matches!(
                    parse(&["--dev", "--agent-redis-url", bad]).unwrap_err(),
                    ConfigError::InvalidUrl { flag: "--agent-redis-url", .. }
                ),
                "{bad}"
            );
        }
        let c = parse(&["--dev", "--agent-chart", "./helm/grus-agent"]).unwrap();
        assert_eq!(c.agent_install.chart, "./helm/grus-agent");
        assert_eq!(
            parse(&["--dev", "--agent-chart", "x $(id)"]).unwrap_err(),
            ConfigError::AgentChart("x $(id)".into())
        );
    }

    #[test]
    fn oidc_is_production() {
        let c = parse(&["--oidc-issuer", "https://i", "--oidc-audience", "grus", "--listen", "0.0.0.0:80"]).unwrap();
        assert!(matches!(c.auth, AuthMode::Oidc(_)));
        assert!(!c.graphql.introspection);
    }

    #[test]
    fn a_renamed_environment_variable_still_configures_the_server() {
        // Names no other test reads or sets (tests share the process's environment).
        let (old_only, new_only, both, neither) = (
            ("GRUS_TEST_ADOPT_OLD_ONLY_OLD", "GRUS_TEST_ADOPT_OLD_ONLY_NEW"),
            ("GRUS_TEST_ADOPT_NEW_ONLY_OLD", "GRUS_TEST_ADOPT_NEW_ONLY_NEW"),
            ("GRUS_TEST_ADOPT_BOTH_OLD", "GRUS_TEST_ADOPT_BOTH_NEW"),
            ("GRUS_TEST_ADOPT_NEITHER_OLD", "GRUS_TEST_ADOPT_NEITHER_NEW"),
        );
        std::env::set_var(old_only.0, "postgres://old/db");
        std::env::set_var(new_only.1, "redis://new");
        std::env::set_var(both.0, "30s");
        std::env::set_var(both.1, "5s");
        adopt_renamed_env(&[old_only, new_only, both, neither]);
        assert_eq!(std::env::var(old_only.1).as_deref(), Ok("postgres://old/db"), "the old name is adopted");
        assert_eq!(std::env::var(new_only.1).as_deref(), Ok("redis://new"), "the new name alone is kept");
        assert_eq!(std::env::var(both.1).as_deref(), Ok("30s"), "the old name wins, as before the rename");
        assert!(std::env::var_os(neither.1).is_none(), "nothing is invented");
        assert!(std::env::var_os(new_only.0).is_none() && std::env::var_os(neither.0).is_none());
    }

    #[test]
    fn renamed_environment_variables_are_the_ones_the_flags_read() {
        let cmd = <Cli as clap::CommandFactory>::command();
        let serve = cmd.find_subcommand("serve").expect("serve");
        let reads = |name: &str| serve.get_arguments().any(|a| a.get_env().is_some_and(|e| e == name));
        for &(old, new) in RENAMED_ENV {
            assert!(reads(new), "`grus-api serve` reads {new}");
            assert!(!reads(old), "`grus-api serve` no longer reads {old}");
        }
    }
}
