//! Command line and validated configuration of the `grus-api` binary (STYLE habit 7).
//!
//! Raw flags ([`ServeArgs`]) are parsed by clap, every one with an env fallback; [`ServeArgs::validate`]
//! turns them into [`ServeConfig`], the only thing the server receives. It fails closed: without
//! OIDC settings the server refuses to start unless `--dev` is explicit, and `--dev` (which
//! trusts an unauthenticated identity header) only listens on a loopback address.

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::dispatcher::DispatcherConfig;

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
    #[command(flatten)]
    pub allocator: AllocatorArgs,
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
}

impl AllocatorArgs {
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
            ..DispatcherConfig::default()
        }))
    }
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
    /// `None` with `--no-allocator`.
    pub allocator: Option<DispatcherConfig>,
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
    #[error("{0} must be a positive duration")]
    Duration(&'static str),
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
        let allocator = self.allocator.validate()?;
        let introspection = self.dev || self.graphql_introspection;
        Ok(ServeConfig {
            listen: self.listen,
            database_url: self.db.database_url,
            redis_url: self.redis_url,
            auth,
            graphql: GraphqlLimits { introspection, ..GraphqlLimits::production() },
            max_body_bytes: self.max_body_bytes,
            allocator,
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
    fn allocator_flags_parse_humantime_and_can_be_turned_off() {
        let c = parse(&["--dev", "--allocator-interval", "250ms", "--dispatch-timeout", "5m"]).unwrap();
        let a = c.allocator.expect("on by default");
        assert_eq!(a.interval, Duration::from_millis(250));
        assert_eq!(a.dispatch_timeout, chrono::Duration::minutes(5));
        assert_eq!(a.reservation_ttl, chrono::Duration::seconds(60));
        assert!(parse(&["--dev", "--no-allocator"]).unwrap().allocator.is_none());
        assert_eq!(
            parse(&["--dev", "--reservation-ttl", "0s"]).unwrap_err(),
            ConfigError::Duration("--reservation-ttl")
        );
    }

    #[test]
    fn oidc_is_production() {
        let c = parse(&["--oidc-issuer", "https://i", "--oidc-audience", "grus", "--listen", "0.0.0.0:80"]).unwrap();
        assert!(matches!(c.auth, AuthMode::Oidc(_)));
        assert!(!c.graphql.introspection);
    }
}
