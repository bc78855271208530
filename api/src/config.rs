//! Command line and validated configuration of the `grus-api` binary (STYLE habit 7).
//!
//! Raw flags ([`ServeArgs`]) are parsed by clap, every one with an env fallback; [`ServeArgs::validate`]
//! turns them into [`ServeConfig`], the only thing the server receives. It fails closed: without
//! OIDC settings the server refuses to start unless `--dev` is explicit, and `--dev` (which
//! trusts an unauthenticated identity header) only listens on a loopback address.

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::ingest::health::HealthConfig;
use crate::ingest::IngestConfig;

#[derive(Debug, Parser)]
#[command(name = "grus-api", version, about = "Grus control plane server")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server (applies pending migrations first).
    Serve(ServeArgs),
    /// Apply pending database migrations and exit.
    Migrate(DbArgs),
    /// Print the GraphQL schema (SDL) to stdout.
    Schema,
}

#[derive(Debug, Args)]
pub struct DbArgs {
    /// PostgreSQL URL (postgres://user@host:port/db).
    #[arg(long, env = "GRUS_DATABASE_URL")]
    pub database_url: String,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "GRUS_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub db: DbArgs,
    /// Redis URL (redis://host:port).
    #[arg(long, env = "GRUS_REDIS_URL")]
    pub redis_url: String,
    /// OIDC issuer URL. Required unless --dev.
    #[arg(long, env = "GRUS_OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,
    /// OIDC audience (client id) expected in bearer JWTs. Required unless --dev.
    #[arg(long, env = "GRUS_OIDC_AUDIENCE")]
    pub oidc_audience: Option<String>,
    /// Development mode: trusts the X-Grus-Dev-User header, enables introspection. Loopback only.
    #[arg(long, env = "GRUS_DEV")]
    pub dev: bool,
    /// Enable GraphQL introspection outside --dev.
    #[arg(long, env = "GRUS_GRAPHQL_INTROSPECTION")]
    pub graphql_introspection: bool,
    /// Largest accepted request body, in bytes.
    #[arg(long, env = "GRUS_MAX_BODY_BYTES", default_value_t = 1 << 20)]
    pub max_body_bytes: usize,
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
}

/// OIDC settings; verification itself is a later task (see `graphql::auth`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OidcConfig {
    pub issuer: String,
    pub audience: String,
}

/// How callers authenticate. Encodes "dev or OIDC" in the type, so no code path runs
/// without one of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthMode {
    /// Dev identity header accepted (plus API tokens). Loopback only.
    Dev,
    /// API tokens, and OIDC bearer JWTs once implemented.
    Oidc(OidcConfig),
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
    pub ingest: IngestConfig,
    pub health: HealthConfig,
}

/// Limits applied to every GraphQL request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphqlLimits {
    pub max_depth: usize,
    pub max_complexity: usize,
    pub introspection: bool,
}

impl GraphqlLimits {
    /// Production defaults: introspection off.
    pub const fn production() -> Self {
        GraphqlLimits { max_depth: 12, max_complexity: 5000, introspection: false }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(
        "OIDC is not configured (--oidc-issuer and --oidc-audience); pass --dev for a local, unauthenticated setup"
    )]
    NoAuth,
    #[error("--dev trusts an unauthenticated identity header and may only listen on a loopback address, not {0}")]
    DevNotLoopback(SocketAddr),
    #[error("--{0} must be longer than zero")]
    ZeroDuration(&'static str),
    #[error("--ingest-consumer must be 1 to 200 characters")]
    BadConsumer,
}

impl ServeArgs {
    pub fn validate(self) -> Result<ServeConfig, ConfigError> {
        let auth = match (self.dev, self.oidc_issuer, self.oidc_audience) {
            (true, _, _) => {
                if !self.listen.ip().is_loopback() {
                    return Err(ConfigError::DevNotLoopback(self.listen));
                }
                AuthMode::Dev
            }
            (false, Some(issuer), Some(audience)) if !issuer.is_empty() && !audience.is_empty() => {
                AuthMode::Oidc(OidcConfig { issuer, audience })
            }
            _ => return Err(ConfigError::NoAuth),
        };
        let introspection = self.dev || self.graphql_introspection;
        for (flag, d) in [
            ("cluster-loss-timeout", self.cluster_loss_timeout),
            ("health-interval", self.health_interval),
            ("ingest-claim-idle", self.ingest_claim_idle),
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
        Ok(ServeConfig {
            listen: self.listen,
            database_url: self.db.database_url,
            redis_url: self.redis_url,
            auth,
            graphql: GraphqlLimits { introspection, ..GraphqlLimits::production() },
            max_body_bytes: self.max_body_bytes,
            ingest,
            health,
        })
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
    fn dev_only_on_loopback() {
        assert!(matches!(parse(&["--dev", "--listen", "0.0.0.0:8080"]), Err(ConfigError::DevNotLoopback(_))));
        let c = parse(&["--dev", "--listen", "[::1]:8080"]).unwrap();
        assert_eq!(c.auth, AuthMode::Dev);
        assert!(c.graphql.introspection);
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
            ConfigError::ZeroDuration("cluster-loss-timeout")
        );
    }

    #[test]
    fn oidc_is_production() {
        let c = parse(&["--oidc-issuer", "https://i", "--oidc-audience", "grus", "--listen", "0.0.0.0:80"]).unwrap();
        assert!(matches!(c.auth, AuthMode::Oidc(_)));
        assert!(!c.graphql.introspection);
    }
}
