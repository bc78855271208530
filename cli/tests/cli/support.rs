//! A real grus-api for the CLI's tests (`grus-testkit`: a fresh PostgreSQL database per test,
//! the api's own router in `--dev` auth mode or as given, on a loopback port), and the built
//! `grus` binary run as a process with a private config directory.
//!
//! Seeded world: tenant `acme` with projects `demo` and `other` (each with a `default` queue);
//! users `dev:admin` (platform admin), `dev:alice` (member of demo), `dev:vera` (viewer of
//! demo), `dev:bob` (member of other); cluster `c1` registered.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use grus_api::auth::AuthMode;
use grus_api::db;
use grus_api::domain::Role;
use grus_testkit::api::{Served, TestApi};
use grus_testkit::{seed, Gql, TestDb};
use serde_json::{json, Value};
use sqlx::PgPool;

/// The running api and what the tests need to drive it.
pub struct World {
    pub rt: tokio::runtime::Runtime,
    pub pool: PgPool,
    pub url: String,
    /// The server task; stops with the runtime.
    _served: Served,
    /// Dropped (with the database) after the runtime that served it.
    _db: TestDb,
    /// The `grus` processes' XDG_CONFIG_HOME (empty unless a test logs in).
    pub config_home: tempfile::TempDir,
}

impl World {
    pub fn start() -> World {
        World::start_with(AuthMode::Dev)
    }

    /// Like [`World::start`], with the api authenticating as `auth` says.
    pub fn start_with(auth: AuthMode) -> World {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        let (db, served) = rt.block_on(async {
            // The api's default pool size: a page of jobs loads its nested fields concurrently.
            let db = TestDb::with_connections(20).await;
            let pool = &db.pool;
            let acme = seed::tenant(pool, "acme", "Acme").await;
            let (demo, _) = seed::project(pool, acme, "demo", "Demo").await;
            let (other, _) = seed::project(pool, acme, "other", "Other").await;
            let admin = seed::named_dev_user(pool, "admin").await;
            db::set_platform_admin(pool, admin, true).await.unwrap();
            for (name, project, role) in
                [("alice", demo, Role::Member), ("vera", demo, Role::Viewer), ("bob", other, Role::Member)]
            {
                let id = seed::named_dev_user(pool, name).await;
                db::grant(pool, id, db::Scope::Project(project), role).await.unwrap();
            }
            seed::cluster_with_labels(pool, "c1", json!({ "region": "eu" }), 7).await;
            let served = TestApi::new(pool).auth(auth).serve().await;
            (db, served)
        });
        World {
            rt,
            pool: db.pool.clone(),
            url: served.base.clone(),
            _served: served,
            _db: db,
            config_home: tempfile::tempdir().expect("tempdir"),
        }
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
        self.rt.block_on(Gql::dev(&self.url, who).request(query, variables))
    }

    /// A GET as dev user `who`: the status and the body's bytes.
    pub fn get(&self, who: &str, path: &str) -> (u16, Vec<u8>) {
        self.rt.block_on(Gql::dev(&self.url, who).get_bytes(path))
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
