//! What `grus dev` checks before it starts anything: a loopback address, a PostgreSQL that
//! answers (creating the dev database if it is missing) and a Redis that answers. Each failure
//! says exactly what to start or set.

use std::net::SocketAddr;
use std::str::FromStr as _;
use std::time::Duration;

use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions as _, Connection as _};

/// How long a server may take to answer before it counts as not answering.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    #[error(
        "grus dev offers an unauthenticated dev login, so it only listens on a loopback address, not {0} \
         (use e.g. --listen 127.0.0.1:8080)"
    )]
    NotLoopback(SocketAddr),
    #[error("DATABASE_URL `{url}`: {reason}")]
    DatabaseUrl { url: String, reason: String },
    #[error("PostgreSQL does not answer at {at}: start it with {start} or set DATABASE_URL ({detail})")]
    PostgresDown { at: String, start: String, detail: String },
    #[error("PostgreSQL at {at} refused the dev setup: {detail}")]
    Postgres { at: String, detail: String },
    #[error("REDIS_URL `{url}`: {reason}")]
    RedisUrl { url: String, reason: String },
    #[error("Redis does not answer at {at}: start it with `redis-server --daemonize yes` or set REDIS_URL ({detail})")]
    RedisDown { at: String, detail: String },
}

/// Refuses a non-loopback listen address (the dev login trusts a header).
pub fn check_loopback(listen: SocketAddr) -> Result<(), PreflightError> {
    if listen.ip().is_loopback() {
        Ok(())
    } else {
        Err(PreflightError::NotLoopback(listen))
    }
}

/// Database names `grus dev` creates: a plain identifier, so it needs no quoting.
fn valid_database_name(name: &str) -> bool {
    (1..=63).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit()
}

/// The dev database, ready.
#[derive(Debug)]
pub struct DevDatabase {
    pub name: String,
    /// Created by this run (it did not exist).
    pub created: bool,
}

/// Connects to the PostgreSQL server of `database_url` and creates its database when missing.
pub async fn ensure_database(database_url: &str) -> Result<DevDatabase, PreflightError> {
    let bad_url = |reason: String| PreflightError::DatabaseUrl { url: redact(database_url), reason };
    let options = PgConnectOptions::from_str(database_url).map_err(|e| bad_url(e.to_string()))?;
    let name = options.get_database().map(str::to_owned).ok_or_else(|| bad_url("names no database".into()))?;
    if !valid_database_name(&name) {
        return Err(bad_url(format!("database name `{name}`: use a-z, 0-9 and '_'")));
    }
    let at = format!("{}:{}", options.get_host(), options.get_port());
    let admin = options.clone().database("postgres").disable_statement_logging();
    let connect = tokio::time::timeout(ANSWER_TIMEOUT, admin.connect()).await;
    let mut conn = match connect {
        Err(_) => {
            return Err(PreflightError::PostgresDown {
                at,
                start: postgres_start_hint(),
                detail: format!("no answer within {}s", ANSWER_TIMEOUT.as_secs()),
            })
        }
        Ok(Err(e @ (sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut))) => {
            return Err(PreflightError::PostgresDown { at, start: postgres_start_hint(), detail: e.to_string() })
        }
        Ok(Err(e)) => return Err(PreflightError::Postgres { at, detail: e.to_string() }),
        Ok(Ok(conn)) => conn,
    };
    let pg = |e: sqlx::Error| PreflightError::Postgres { at: at.clone(), detail: e.to_string() };
    let exists: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
        .bind(&name)
        .fetch_optional(&mut conn)
        .await
        .map_err(pg)?;
    let created = if exists.is_none() {
        match sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut conn).await {
            Ok(_) => true,
            // Another `grus dev` created it between our check and our CREATE.
            Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("42P04") => false,
            Err(e) => return Err(pg(e)),
        }
    } else {
        false
    };
    let _ = conn.close().await;
    Ok(DevDatabase { name, created })
}

/// How to start PostgreSQL here: `pg_ctlcluster <version> main start` for a Debian cluster that
/// exists on this machine, else the generic service command.
fn postgres_start_hint() -> String {
    let versions = std::fs::read_dir("/etc/postgresql")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter(|e| e.path().join("main").is_dir())
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    match versions.iter().max_by_key(|v| v.parse::<u32>().unwrap_or(0)) {
        Some(v) => format!("`pg_ctlcluster {v} main start`"),
        None => "`pg_ctlcluster <version> main start` (or `systemctl start postgresql`)".to_owned(),
    }
}

/// PINGs Redis.
pub async fn check_redis(redis_url: &str) -> Result<(), PreflightError> {
    let client = redis::Client::open(redis_url)
        .map_err(|e| PreflightError::RedisUrl { url: redact(redis_url), reason: e.to_string() })?;
    let at = client.get_connection_info().addr.to_string();
    let down = |detail: String| PreflightError::RedisDown { at: at.clone(), detail };
    let ping = async {
        let mut conn = client.get_multiplexed_async_connection().await?;
        redis::cmd("PING").query_async::<String>(&mut conn).await
    };
    match tokio::time::timeout(ANSWER_TIMEOUT, ping).await {
        Err(_) => Err(down(format!("no answer within {}s", ANSWER_TIMEOUT.as_secs()))),
        Ok(Err(e)) => Err(down(e.to_string())),
        Ok(Ok(_)) => Ok(()),
    }
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            let masked = if userinfo.contains(':') { format!("{user}:***") } else { user.to_owned() };
            format!("{scheme}://{masked}@{host}{}", &rest[authority_end..])
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_only() {
        assert!(check_loopback("127.0.0.1:8080".parse().unwrap()).is_ok());
        assert!(check_loopback("[::1]:0".parse().unwrap()).is_ok());
        let e = check_loopback("0.0.0.0:8080".parse().unwrap()).unwrap_err();
        assert!(e.to_string().contains("loopback"), "{e}");
    }

    #[test]
    fn database_names() {
        assert!(valid_database_name("grus_dev"));
        assert!(!valid_database_name("Grus"));
        assert!(!valid_database_name("1db"));
        assert!(!valid_database_name("a;drop"));
        assert!(!valid_database_name(""));
    }

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(redact("redis://:pw@h:6379"), "redis://:***@h:6379");
        assert_eq!(redact("postgres://postgres@127.0.0.1/grus_dev"), "postgres://postgres@127.0.0.1/grus_dev");
        assert_eq!(redact("nonsense"), "nonsense");
    }

    #[tokio::test]
    async fn a_database_url_without_a_name_is_refused() {
        let e = ensure_database("postgres://postgres@127.0.0.1:1").await.unwrap_err();
        assert!(matches!(e, PreflightError::DatabaseUrl { .. }), "{e}");
    }
}
