//! A fresh PostgreSQL database per test (STYLE habit 8).
//!
//! Each [`TestDb`] creates `grus_test_<unix seconds>_<random>`, applies the migrations and
//! drops the database when it goes out of scope, also when the test panics. Databases left
//! behind by killed runs are dropped by the next run once they are an hour old. The server is
//! [`crate::env::database_server`]. A test whose program creates the database itself
//! (`grus dev`) takes a [`DbName`]: the same naming and dropping, no creation.

use std::sync::Once;

use grus_api::db;
use sqlx::postgres::PgPoolOptions;
use sqlx::{Connection, PgConnection, PgPool};

use crate::env::{database_server as server_url, now_secs, random_hex as random_suffix};

const PREFIX: &str = "grus_test_";

pub struct TestDb {
    pub pool: PgPool,
    pub name: String,
    pub url: String,
    /// The server without a database name (the machine's, or a test's private one).
    server: String,
}

impl TestDb {
    pub async fn new() -> TestDb {
        TestDb::with_connections(5).await
    }

    pub async fn with_connections(max: u32) -> TestDb {
        TestDb::on_server(&server_url(), max).await
    }

    /// A database on `server` (`postgres://user@host:port`, e.g. a
    /// [`crate::postgres_server::PostgresServer`]'s).
    pub async fn on_server(server: &str, max: u32) -> TestDb {
        let server = server.to_owned();
        let mut admin = PgConnection::connect(&format!("{server}/postgres")).await.expect("connect to the test server");
        // Databases left behind are swept on the machine's shared server (a private one goes
        // away with its test).
        static SWEEP: Once = Once::new();
        let mut sweep = false;
        if server == server_url() {
            SWEEP.call_once(|| sweep = true);
        }
        if sweep {
            drop_stale(&mut admin).await;
        }
        let name = format!("{PREFIX}{}_{}", now_secs(), random_suffix());
        sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.expect("create test database");
        let _ = admin.close().await;
        let url = format!("{server}/{name}");
        // From here on a panic still drops the database through `Drop`.
        let mut guard = Dropper(Some((server.clone(), name.clone())));
        let pool = PgPoolOptions::new().max_connections(max).connect(&url).await.expect("connect to test database");
        db::migrate(&pool).await.expect("migrations apply");
        guard.0 = None;
        TestDb { pool, name, url, server }
    }
}

impl TestDb {
    /// Drops the database and creates it again under the same name, empty and migrated: a
    /// control plane reinstalled over a new database (a new incarnation).
    pub async fn replace(&mut self) {
        self.pool.close().await;
        let mut admin =
            PgConnection::connect(&format!("{}/postgres", self.server)).await.expect("connect to the test server");
        for sql in
            [format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name), format!("CREATE DATABASE {}", self.name)]
        {
            sqlx::query(&sql).execute(&mut admin).await.expect("replace the test database");
        }
        let _ = admin.close().await;
        self.pool = PgPoolOptions::new().max_connections(5).connect(&self.url).await.expect("connect to test database");
        db::migrate(&self.pool).await.expect("migrations apply");
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        drop_database(self.server.clone(), self.name.clone());
    }
}

/// (server, database) to drop if the test fails before its [`TestDb`] exists.
struct Dropper(Option<(String, String)>);

impl Drop for Dropper {
    fn drop(&mut self) {
        if let Some((server, name)) = self.0.take() {
            drop_database(server, name);
        }
    }
}

/// Drops on a thread of its own: `Drop` cannot await, and the test's runtime may be the
/// single-threaded one that is busy dropping us.
fn drop_database(server: String, name: String) {
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

/// A database name of the test's own (swept like [`TestDb`]'s), for a program that creates
/// the database itself; dropped when this goes out of scope.
pub struct DbName {
    pub name: String,
}

impl DbName {
    pub fn reserve() -> DbName {
        DbName { name: format!("{PREFIX}{}_{}", now_secs(), random_suffix()) }
    }

    pub fn url(&self) -> String {
        format!("{}/{}", server_url(), self.name)
    }
}

impl Drop for DbName {
    fn drop(&mut self) {
        drop_database(server_url(), self.name.clone());
    }
}
