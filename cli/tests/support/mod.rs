//! A real grus-api for the CLI's tests: a fresh PostgreSQL database per test (api/tests/support,
//! included: created, migrated, dropped when the test ends, stale ones swept after an hour),
//! the api's own router in `--dev` auth mode on a random loopback port, and the built
//! `grus` binary run as a process with a private config directory.
//!
//! Seeded world: tenant `acme` with projects `demo` and `other` (each with a `default` queue);
//! users `dev:admin` (platform admin), `dev:alice` (member of demo), `dev:vera` (viewer of
//! demo), `dev:bob` (member of other); cluster `c1` registered.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use grus_api::auth::AuthMode;
use grus_api::db::{self, Scope, UserProfile};
use grus_api::domain::Role;
use grus_api::graphql::auth::Authenticator;
use grus_api::graphql::build_schema;
use grus_api::graphql::GraphqlLimits;
use grus_api::http::{router, AppState};
use serde_json::{json, Value};
use sqlx::PgPool;

// The api's own test harness (a fresh database per test, dropped at the end), shared rather
// than copied, as e2e/ does.
#[path = "../../../api/tests/support/mod.rs"]
mod db_support;

/// The running api and what the tests need to drive it.
pub struct World {
    pub rt: tokio::runtime::Runtime,
    pub pool: PgPool,
    pub url: String,
    pub http: reqwest::Client,
    /// Dropped (with the database) after the runtime that served it.
    db: db_support::TestDb,
    /// The `grus` processes' XDG_CONFIG_HOME (empty unless a test logs in).
    pub config_home: tempfile::TempDir,
}

async fn user(pool: &PgPool, name: &str) -> i64 {
    let subject = format!("dev:{name}");
    db::upsert_user(pool, &UserProfile { subject: &subject, email: None, display_name: Some(name) }).await.unwrap().id
}

impl World {
    pub fn start() -> World {
        World::start_with(AuthMode::Dev)
    }

    /// Like [`World::start`], with the api authenticating as `auth` says.
    pub fn start_with(auth: AuthMode) -> World {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        let (db, pool, url) = rt.block_on(async {
            // The api's default pool size: a page of jobs loads its nested fields concurrently.
            let db = db_support::TestDb::with_connections(20).await;
            let pool = db.pool.clone();
            let acme = db::create_tenant(&pool, "acme", "Acme").await.unwrap();
            let demo = db::create_project(&pool, acme.id, "demo", "Demo").await.unwrap();
            let other = db::create_project(&pool, acme.id, "other", "Other").await.unwrap();
            for p in [demo.id, other.id] {
                let settings = db::QueueSettings { name: "default", weight: 1.0, can_borrow: true };
                db::create_queue(&pool, p, &settings).await.unwrap();
            }
            let admin = user(&pool, "admin").await;
            db::set_platform_admin(&pool, admin, true).await.unwrap();
            let alice = user(&pool, "alice").await;
            db::grant(&pool, alice, Scope::Project(demo.id), Role::Member).await.unwrap();
            let vera = user(&pool, "vera").await;
            db::grant(&pool, vera, Scope::Project(demo.id), Role::Viewer).await.unwrap();
            let bob = user(&pool, "bob").await;
            db::grant(&pool, bob, Scope::Project(other.id), Role::Member).await.unwrap();
            db::register_cluster(&pool, "c1", &json!({ "region": "eu" }), &[7u8; 32]).await.unwrap();
            let state = AppState::new(
                build_schema(Some(pool.clone()), GraphqlLimits::production()),
                pool.clone(),
                Authenticator::new(auth),
            );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("addr");
            tokio::spawn(async move {
                let _ = axum::serve(listener, router(state, 1 << 20)).await;
            });
            (db, pool, format!("http://{addr}"))
        });
        World { rt, pool, url, http: reqwest::Client::new(), db, config_home: tempfile::tempdir().expect("tempdir") }
    }

    /// A `grus` command against this server as dev user `who` (`None`: no identity flag, so
    /// the CLI's own rules apply), with a private config directory and no GRUS_* from outside.
    pub fn grus(&self, who: Option<&str>, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_grus"));
        for (k, _) in std::env::vars() {
            if k.starts_with("GRUS_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("XDG_CONFIG_HOME", self.config_home.path()).env("HOME", self.config_home.path());
        cmd.env("GRUS_SERVER", &self.url);
        if let Some(who) = who {
            cmd.env("GRUS_DEV_USER", who);
        }
        cmd.args(args).stdin(Stdio::null());
        cmd
    }

    /// Runs `grus` to completion.
    pub fn run(&self, who: Option<&str>, args: &[&str]) -> Run {
        let out = self.grus(who, args).output().expect("run grus");
        Run::from(out)
    }

    /// A GraphQL request as dev user `who`, straight to the api (to set up and to compare).
    pub fn gql(&self, who: &str, query: &str, variables: Value) -> Value {
        self.rt.block_on(async {
            let resp = self
                .http
                .post(format!("{}/graphql", self.url))
                .header("x-grus-dev-user", who)
                .json(&json!({ "query": query, "variables": variables }))
                .send()
                .await
                .expect("POST /graphql");
            resp.json::<Value>().await.expect("JSON answer")
        })
    }

    /// A GET as dev user `who`: the status and the body's bytes.
    pub fn get(&self, who: &str, path: &str) -> (u16, Vec<u8>) {
        self.rt.block_on(async {
            let resp =
                self.http.get(format!("{}{path}", self.url)).header("x-grus-dev-user", who).send().await.expect("GET");
            (resp.status().as_u16(), resp.bytes().await.expect("body").to_vec())
        })
    }

    /// The config file the CLI reads and writes.
    pub fn config_file(&self) -> std::path::PathBuf {
        self.config_home.path().join("grus").join("config.toml")
    }

    pub fn example(name: &str) -> String {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/jobs").join(name).display().to_string()
    }
}

/// A finished `grus` process.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub bytes: Vec<u8>,
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            bytes: out.stdout,
        }
    }
}

impl Run {
    /// Asserts the exit code, showing the output when it differs.
    #[track_caller]
    pub fn expect(self, code: i32) -> Run {
        assert_eq!(self.code, code, "exit code\n--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr);
        self
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }
}
