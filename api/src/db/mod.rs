//! PostgreSQL storage: connection pool, embedded migrations and the repository functions the
//! GraphQL layer, the allocator and the event ingester call.
//!
//! PostgreSQL is the source of truth (invariant 1). Functions take either any executor (a pool
//! or a transaction: `impl PgExecutor`) or, when they run several statements that must commit
//! together, a `&mut PgConnection` (pass `&mut *tx`). Errors are [`DbError`]: constraint
//! violations arrive as CONFLICT/VALIDATION, never as SQL text.

pub mod aging;
pub mod audit;
pub mod batch;
pub mod billing;
pub mod budgets;
pub mod clusters;
pub mod control_plane;
pub mod dispatch;
mod error;
pub mod fair_share;
pub mod ingest;
pub mod ingest_batch;
pub mod job_changes;
pub mod jobs;
pub mod metric_history;
pub mod operations;
pub mod queues;
pub mod services;
pub mod sessions;
pub mod suspend;
pub mod tenancy;
pub mod tenant_rights;
pub mod workspaces;

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgSslMode};
use sqlx::PgPool;

pub use clusters::{
    cluster_by_token_hash, create_api_token, get_cluster, list_api_tokens, list_clusters, record_heartbeat,
    register_cluster, revoke_api_token, sign_in_with_api_token, ApiToken, Cluster, NewApiToken,
    TOKEN_USE_RESOLUTION_SECS,
};
pub use dispatch::{answer_dispatch, insert_dispatch, Dispatch};
pub use error::{DbError, DbResult};
pub use jobs::{
    check_insertable, get_job, insert_admitted_jobs, insert_job, job_events, list_jobs, list_visible_jobs,
    queue_position, replicas, set_why_pending, tasks, transition_job, transition_job_from, transition_replica,
    transition_task, AdmittedJob, Cause, EventOrigin, Job, JobEvent, JobFilter, JobHead, JobHeadPage, JobPage, NewJob,
    NewTask, PageIncludes, Replica, ReplicaReport, Task, TaskSpec, VisibleJobFilter,
};
pub use queues::{
    create_queue, delete_queue, get_queue, get_queue_by_name, list_queues, lock_queue_for_admission,
    lock_queues_for_admission, pool_weights, queue_usage, quotas, remove_quota, set_pool_weights, set_quota,
    submission_target, update_queue, LockedQueue, Queue, QueueSettings, Quota, SubmissionTarget, DEFAULT_QUEUE,
    FOLD_DELTAS_ABOVE,
};
pub use sessions::{
    create_pending_login, create_session, delete_session, find_user_by_subject, get_session, identity_changed,
    session_user, sign_in, sweep_expired, take_pending_login, upsert_identity, IdentityClaims, PendingLogin, Session,
};
pub use tenancy::{
    create_project, create_tenant, get_project, get_project_by_slug, get_tenant, get_user, get_user_by_subject, grant,
    projects_for_user, revoke, role_in_project, role_in_tenant, set_platform_admin, tenants_for_user, upsert_user,
    Project, Scope, Tenant, User, UserProfile,
};

/// The migrations in `migrations/`, embedded at build time.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// Pool settings; the defaults suit one api replica.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    pub max_connections: u32,
    pub acquire_timeout: Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig { max_connections: 20, acquire_timeout: Duration::from_secs(10) }
    }
}

/// Connects to `url` (`postgres://user@host:port/db`).
pub async fn connect(url: &str) -> Result<PgPool, sqlx::Error> {
    connect_with(url, &PoolConfig::default()).await
}

pub async fn connect_with(url: &str, config: &PoolConfig) -> Result<PgPool, sqlx::Error> {
    let mut options: PgConnectOptions = url.parse()?;
    if !names_ssl_mode(url, std::env::var_os("PGSSLMODE").is_some()) && is_loopback(&options) {
        // libpq's default `prefer` encrypts even over loopback, where the bytes never leave
        // the host's kernel: TLS cost a fifth of the CPU of a `jobs` page here, on both ends
        // (BENCHMARKS.md). An explicit `sslmode` (URL or PGSSLMODE) is always honoured.
        options = options.ssl_mode(PgSslMode::Disable);
    }
    PgPoolOptions::new()
        .max_connections(config.max_connections)
        .acquire_timeout(config.acquire_timeout)
        // No ping before handing out an idle connection: it doubled the round trips of every
        // statement. A connection that died idle fails its statement instead (a 500 for that
        // request) and is dropped from the pool.
        .test_before_acquire(false)
        // No JIT: its compile time (tens of ms) dwarfs these short statements, and a page query
        // whose estimate passes `jit_above_cost` got it on every call. Generic plans: the
        // planner's custom plans for statements over arrays (`id = ANY($1)`) and for the jobs
        // page never looked costlier than the generic one, so those prepared statements were
        // planned again at every call (about 1 ms of PostgreSQL CPU per `jobs(first: 100)`).
        // Every statement here is a key or index lookup whose plan does not depend on the
        // values, and partial indexes are matched by literals in the text, never parameters.
        .connect_with(
            options.application_name("grus-api").options([("jit", "off"), ("plan_cache_mode", "force_generic_plan")]),
        )
        .await
}

/// Whether the connection's TLS mode was chosen explicitly: `sslmode` in the URL's query, or
/// the PGSSLMODE variable (`env_ssl_mode`).
fn names_ssl_mode(url: &str, env_ssl_mode: bool) -> bool {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    env_ssl_mode || query.split('&').any(|pair| pair.split('=').next() == Some("sslmode"))
}

/// Whether the server is reached over loopback: a Unix socket, `localhost` or a loopback
/// address.
fn is_loopback(options: &PgConnectOptions) -> bool {
    if options.get_socket().is_some() {
        return true;
    }
    let host = options.get_host().trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.starts_with('/')
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Applies pending migrations (at start and by `grus-api migrate`). Safe to run from several
/// replicas at once: sqlx serializes them with an advisory lock.
pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    MIGRATOR.run(pool).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(url: &str) -> PgConnectOptions {
        url.parse().unwrap()
    }

    #[test]
    fn loopback_servers_are_recognized() {
        for url in [
            "postgres://postgres@127.0.0.1:5432/db",
            "postgres://postgres@127.8.0.1/db",
            "postgres://postgres@localhost/db",
            "postgres://postgres@[::1]:5432/db",
            "postgres://postgres@%2Fvar%2Frun%2Fpostgresql/db",
        ] {
            assert!(is_loopback(&options(url)), "{url}");
        }
        for url in [
            "postgres://postgres@10.0.0.7/db",
            "postgres://postgres@db.example.com/db",
            "postgres://u@[2001:db8::1]/db",
        ] {
            assert!(!is_loopback(&options(url)), "{url}");
        }
    }

    #[test]
    fn an_explicit_ssl_mode_is_seen() {
        assert!(!names_ssl_mode("postgres://u@127.0.0.1/db", false));
        assert!(!names_ssl_mode("postgres://u@127.0.0.1/db?application_name=sslmode", false));
        assert!(names_ssl_mode("postgres://u@127.0.0.1/db?sslmode=require", false));
        assert!(names_ssl_mode("postgres://u@127.0.0.1/db?connect_timeout=3&sslmode=prefer", false));
        assert!(names_ssl_mode("postgres://u@127.0.0.1/db", true));
    }
}
