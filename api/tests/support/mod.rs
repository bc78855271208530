//! Test harness: a fresh PostgreSQL database per test (STYLE habit 8).
//!
//! Each [`TestDb`] creates `grus_test_<unix seconds>_<random>`, applies the migrations and
//! drops the database when it goes out of scope, also when the test panics. Databases left
//! behind by killed runs are dropped by the next run once they are an hour old. The server is
//! `DATABASE_URL` (without a database name), default `postgres://postgres@127.0.0.1:5432`.
#![allow(dead_code)]

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;
use std::time::{SystemTime, UNIX_EPOCH};

use grus_api::db::{self, Cause, NewJob, NewTask};
use grus_protocol::wire::ResourcesSpec;
use sqlx::postgres::PgPoolOptions;
use sqlx::{Connection, PgConnection, PgPool};

const PREFIX: &str = "grus_test_";

fn server_url() -> String {
    let url = std::env::var("DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
    // Keep only the server part: the database name is ours to choose.
    match url.split_once("://").and_then(|(_, rest)| rest.find('/').map(|i| (url.len() - rest.len()) + i)) {
        Some(i) => url[..i].to_owned(),
        None => url,
    }
}

fn random_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

pub struct TestDb {
    pub pool: PgPool,
    pub name: String,
    pub url: String,
}

impl TestDb {
    pub async fn new() -> TestDb {
        TestDb::with_connections(5).await
    }

    pub async fn with_connections(max: u32) -> TestDb {
        let server = server_url();
        let mut admin = PgConnection::connect(&format!("{server}/postgres")).await.expect("connect to the test server");
        static SWEEP: Once = Once::new();
        let mut sweep = false;
        SWEEP.call_once(|| sweep = true);
        if sweep {
            drop_stale(&mut admin).await;
        }
        let name = format!("{PREFIX}{}_{}", now_secs(), random_suffix());
        sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.expect("create test database");
        let _ = admin.close().await;
        let url = format!("{server}/{name}");
        // From here on a panic still drops the database through `Drop`.
        let mut guard = Dropper(Some(name.clone()));
        let pool = PgPoolOptions::new().max_connections(max).connect(&url).await.expect("connect to test database");
        db::migrate(&pool).await.expect("migrations apply");
        guard.0 = None;
        TestDb { pool, name, url }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        drop_database(self.name.clone());
    }
}

struct Dropper(Option<String>);

impl Drop for Dropper {
    fn drop(&mut self) {
        if let Some(name) = self.0.take() {
            drop_database(name);
        }
    }
}

/// Drops on a thread of its own: `Drop` cannot await, and the test's runtime may be the
/// single-threaded one that is busy dropping us.
fn drop_database(name: String) {
    let server = server_url();
    let done = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async move {
            if let Ok(mut admin) = PgConnection::connect(&format!("{server}/postgres")).await {
                let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut admin).await;
                let _ = admin.close().await;
            }
        });
    });
    let _ = done.join();
}

async fn drop_stale(admin: &mut PgConnection) {
    let names: Vec<(String,)> = sqlx::query_as("SELECT datname FROM pg_database WHERE datname LIKE 'grus\\_test\\_%'")
        .fetch_all(&mut *admin)
        .await
        .unwrap_or_default();
    let cutoff = now_secs().saturating_sub(3600);
    for (name,) in names {
        let born = name.strip_prefix(PREFIX).and_then(|r| r.split('_').next()).and_then(|s| s.parse::<u64>().ok());
        if born.is_some_and(|t| t < cutoff) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut *admin).await;
        }
    }
}

/// A tenant, a project, a user and a queue: the minimum a job needs.
pub struct Fixture {
    pub tenant_id: i64,
    pub project_id: i64,
    pub user_id: i64,
    pub queue_id: i64,
}

pub async fn fixture(pool: &PgPool, slug: &str) -> Fixture {
    let tenant = db::create_tenant(pool, &format!("t-{slug}"), "Tenant").await.expect("tenant");
    let project = db::create_project(pool, tenant.id, slug, "Project").await.expect("project");
    let subject = format!("sub-{slug}");
    let user = db::upsert_user(pool, &db::UserProfile { subject: &subject, email: None, display_name: None })
        .await
        .expect("user");
    let queue =
        db::create_queue(pool, project.id, &db::QueueSettings { name: "default", weight: 1.0, can_borrow: true })
            .await
            .expect("queue");
    Fixture { tenant_id: tenant.id, project_id: project.id, user_id: user.id, queue_id: queue.id }
}

pub fn gpu_job(f: &Fixture, name: &str, replicas: u32, gpus: u32, models: &[&str]) -> NewJob {
    NewJob {
        project_id: f.project_id,
        queue_id: f.queue_id,
        name: name.into(),
        priority: 100,
        priority_class: "normal".into(),
        preemptible: false,
        spec: serde_json::json!({ "name": name }),
        tasks: vec![NewTask {
            name: "main".into(),
            replicas,
            resources: ResourcesSpec {
                gpus,
                gpu_models: models.iter().map(|m| m.to_string()).collect(),
                cpu_milli: 1000,
                memory_mib: 1024,
                ..Default::default()
            },
            spec: serde_json::json!({ "image": "busybox" }),
        }],
        submitted_by: f.user_id,
    }
}

pub fn by_user(actor: &str) -> Cause<'_> {
    Cause { cause: "submitted", actor }
}
