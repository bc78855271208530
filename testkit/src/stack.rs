//! One test's whole Grus: a fresh PostgreSQL database, a private Redis, the `grus-api` binary
//! and `grus-agent` binaries (sim backend, [`Agent`]), one per cluster, each killable and
//! restartable.
//!
//! Short intervals come from flags ([`StackConfig`]); every wait is a poll with a deadline.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::agent::Agent;
use crate::db::TestDb;
use crate::env::{free_port, workspace_binary};
use crate::gql::Gql;
use crate::postgres_server::PostgresServer;
use crate::process::Process;
use crate::redis_server::RedisServer;
use crate::wait::{Deadline, PATIENCE};

/// How the api authenticates callers.
#[derive(Clone, Debug)]
pub enum Auth {
    /// `--dev`: the `x-grus-dev-user` header; `admin` is made platform admin.
    Dev,
    /// A real OIDC provider: portal login (code + PKCE) and bearer JWTs.
    Oidc { issuer: String, audience: String, client_id: String, client_secret: String, platform_admin: String },
}

#[derive(Clone, Debug)]
pub struct StackConfig {
    pub auth: Auth,
    /// `grus-api serve` flags (flag -> value); the defaults keep every loop fast.
    pub api_flags: BTreeMap<String, String>,
    /// `grus-agent` flags given to every agent.
    pub agent_flags: BTreeMap<String, String>,
    /// Fixed api port (the OIDC provider must know the callback URL before the api starts).
    pub api_port: Option<u16>,
    /// The database on a private PostgreSQL server ([`Stack::postgres`]) that the test may
    /// crash and restart, instead of the machine's shared one.
    pub private_postgres: bool,
    /// Api replicas beyond the first ([`Stack::replicas`]): same database and Redis, each with
    /// its own ingest consumer; one leads the allocator.
    pub extra_api_replicas: usize,
}

impl Default for StackConfig {
    fn default() -> Self {
        let api_flags = [
            ("--allocator-interval", "200ms"),
            ("--health-interval", "500ms"),
            ("--cluster-loss-timeout", "60s"),
            ("--dispatch-timeout", "60s"),
            ("--reservation-ttl", "30s"),
            ("--ingest-claim-idle", "5s"),
            ("--ingest-consumer", "e2e-api"),
        ];
        let agent_flags = [("--place-deadline", "60s"), ("--eviction-grace", "2s")];
        let own = |kv: &[(&str, &str)]| kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        StackConfig {
            auth: Auth::Dev,
            api_flags: own(&api_flags),
            agent_flags: own(&agent_flags),
            api_port: None,
            private_postgres: false,
            extra_api_replicas: 0,
        }
    }
}

impl StackConfig {
    pub fn api_flag(mut self, flag: &str, value: &str) -> Self {
        self.api_flags.insert(flag.into(), value.into());
        self
    }

    pub fn agent_flag(mut self, flag: &str, value: &str) -> Self {
        self.agent_flags.insert(flag.into(), value.into());
        self
    }

    /// See [`StackConfig::private_postgres`].
    pub fn private_postgres(mut self) -> Self {
        self.private_postgres = true;
        self
    }

    /// `n` api processes in all (see [`StackConfig::extra_api_replicas`]).
    pub fn api_replicas(mut self, n: usize) -> Self {
        self.extra_api_replicas = n.saturating_sub(1);
        self
    }
}

/// The `grus-api` process.
pub struct ApiServer {
    process: Process,
    pub base: String,
}

impl ApiServer {
    /// Starts `grus-api serve` on `port` (flags from `config`, `consumer` as its ingest
    /// consumer name) and waits until it serves.
    async fn start(
        config: &StackConfig,
        db_url: &str,
        redis_url: &str,
        port: u16,
        consumer: &str,
        log: PathBuf,
    ) -> Self {
        let mut args: Vec<String> = vec![
            "serve".into(),
            "--listen".into(),
            format!("127.0.0.1:{port}"),
            "--database-url".into(),
            db_url.into(),
            "--redis-url".into(),
            redis_url.into(),
        ];
        match &config.auth {
            Auth::Dev => args.push("--dev".into()),
            Auth::Oidc { issuer, audience, client_id, client_secret, platform_admin } => {
                let base = format!("http://127.0.0.1:{port}");
                for (flag, value) in [
                    ("--oidc-issuer", issuer.as_str()),
                    ("--oidc-audience", audience),
                    ("--oidc-client-id", client_id),
                    ("--oidc-client-secret", client_secret),
                    ("--public-url", &base),
                    ("--platform-admin-subject", platform_admin),
                ] {
                    args.push(flag.into());
                    args.push(value.into());
                }
            }
        }
        let mut flags = config.api_flags.clone();
        flags.insert("--ingest-consumer".into(), consumer.into());
        for (k, v) in flags {
            args.push(k);
            args.push(v);
        }
        let process = Process::start(
            "grus-api",
            workspace_binary("grus-api"),
            args.into_iter().map(OsString::from).collect(),
            log,
        );
        let mut api = ApiServer { process, base: format!("http://127.0.0.1:{port}") };
        api.wait_healthy().await;
        api
    }

    /// Whether this replica leads the allocator now (its `grus_allocator_leader` gauge); false
    /// when it does not answer.
    pub async fn is_leader(&self) -> bool {
        let Ok(r) = reqwest::get(format!("{}/metrics", self.base)).await else { return false };
        r.text().await.is_ok_and(|text| text.lines().any(|l| l.trim() == "grus_allocator_leader 1"))
    }

    /// Whether the process runs (not killed).
    pub fn is_up(&self) -> bool {
        self.process.is_started()
    }

    /// `kill -9` mid-run and start again with the same flags (same database, same consumer).
    pub async fn restart(&mut self) {
        self.process.restart();
        self.wait_healthy().await;
    }

    /// `kill -9`: no api until [`ApiServer::start_again`].
    pub fn kill9(&mut self) {
        self.process.kill9();
    }

    /// Starts it again with the same flags and waits until it serves.
    pub async fn start_again(&mut self) {
        self.restart().await;
    }

    async fn wait_healthy(&mut self) {
        let http = reqwest::Client::new();
        let deadline = Deadline::new("grus-api to serve /healthz", PATIENCE);
        loop {
            if let Ok(r) = http.get(format!("{}/healthz", self.base)).send().await {
                if r.status().is_success() {
                    return;
                }
            }
            if let Some(status) = self.process.exited() {
                panic!("grus-api exited ({status}):\n{}", self.process.tail(60));
            }
            deadline.tick(|| self.process.tail(60)).await;
        }
    }
}

pub struct Stack {
    // Dropped in this order: processes first, the database last.
    pub agents: BTreeMap<String, Agent>,
    pub api: ApiServer,
    /// Api replicas beyond [`Stack::api`] ([`StackConfig::api_replicas`]).
    pub replicas: Vec<ApiServer>,
    pub redis: RedisServer,
    pub db: TestDb,
    /// The private PostgreSQL server ([`StackConfig::private_postgres`]); dropped after the
    /// database.
    pub postgres: Option<PostgresServer>,
    pub config: StackConfig,
    dir: tempfile::TempDir,
}

impl Stack {
    /// Database, Redis and the api; no agents yet (see [`Stack::start_agent`]).
    pub async fn start(config: StackConfig) -> Stack {
        let postgres = config.private_postgres.then(|| {
            PostgresServer::start().unwrap_or_else(|e| panic!("a private PostgreSQL server for this test: {e}"))
        });
        let db = match &postgres {
            Some(server) => TestDb::on_server(&server.url(), 5).await,
            None => TestDb::new().await,
        };
        let dir = tempfile::Builder::new().prefix("grus-e2e-").tempdir().expect("temp dir");
        let redis = RedisServer::start(dir.path());
        let port = config.api_port.unwrap_or_else(free_port);
        let consumer = config.api_flags.get("--ingest-consumer").cloned().unwrap_or_else(|| "e2e-api".into());
        let api = ApiServer::start(&config, &db.url, &redis.url(), port, &consumer, dir.path().join("api.log")).await;
        let mut replicas = Vec::new();
        for i in 1..=config.extra_api_replicas {
            let log = dir.path().join(format!("api-{i}.log"));
            let (redis_url, consumer) = (redis.url(), format!("{consumer}-{i}"));
            replicas.push(ApiServer::start(&config, &db.url, &redis_url, free_port(), &consumer, log).await);
        }
        Stack { agents: BTreeMap::new(), api, replicas, redis, db, postgres, config, dir }
    }

    /// Api process `i`: 0 is [`Stack::api`], then [`Stack::replicas`].
    pub fn api_at(&mut self, i: usize) -> &mut ApiServer {
        if i == 0 {
            &mut self.api
        } else {
            &mut self.replicas[i - 1]
        }
    }

    /// How many api processes the stack has.
    pub fn api_count(&self) -> usize {
        1 + self.replicas.len()
    }

    /// The index ([`Stack::api_at`]) of the replica that leads the allocator, once one does.
    pub async fn leader(&self) -> usize {
        let deadline = Deadline::new("an api replica to lead the allocator", PATIENCE);
        loop {
            for (i, api) in std::iter::once(&self.api).chain(&self.replicas).enumerate() {
                if api.is_up() && api.is_leader().await {
                    return i;
                }
            }
            deadline.tick(|| self.logs()).await;
        }
    }

    /// A dev-mode caller (`--dev` only).
    pub fn dev(&self, user: &str) -> Gql {
        Gql::dev(&self.api.base, user)
    }

    /// Registers `cluster` with the control plane as `admin` (platform admin) and starts its
    /// agent over `nodes` (`2x4xA100-80GB,...`).
    pub async fn add_cluster(&mut self, admin: &Gql, cluster: &str, nodes: &str) {
        self.add_cluster_with(admin, cluster, nodes, false).await;
    }

    /// [`Stack::add_cluster`]; with `own_credentials` the agent exchanges the registration
    /// token at the api for its own Redis user (`--agent-token`, `--api-url`). Returns the token.
    pub async fn add_cluster_with(&mut self, admin: &Gql, cluster: &str, nodes: &str, own_credentials: bool) -> String {
        let r = admin
            .data("mutation($id: String!) { registerCluster(id: $id) { agentToken } }", json!({ "id": cluster }))
            .await;
        let token = r["registerCluster"]["agentToken"].as_str().unwrap_or_default().to_owned();
        assert!(token.len() >= 32, "{r}");
        let state_dir = self.agent_state_dir(cluster);
        let log = self.dir.path().join(format!("agent-{cluster}.log"));
        let mut flags = self.config.agent_flags.clone();
        if own_credentials {
            flags.insert("--agent-token".into(), token.clone());
            flags.insert("--api-url".into(), self.api.base.clone());
        }
        let agent = Agent::start(cluster, nodes, state_dir, &self.redis.url(), flags, log);
        self.agents.insert(cluster.to_owned(), agent);
        token
    }

    /// Where `cluster`'s agent keeps its book (and its credentials).
    pub fn agent_state_dir(&self, cluster: &str) -> std::path::PathBuf {
        self.dir.path().join(format!("agent-{cluster}"))
    }

    pub fn agent(&mut self, cluster: &str) -> &mut Agent {
        self.agents.get_mut(cluster).unwrap_or_else(|| panic!("no agent {cluster}"))
    }

    /// Waits until every agent's cluster is healthy and has reported `gpus` GPUs in total.
    pub async fn wait_clusters_ready(&self, who: &Gql) {
        let deadline = Deadline::new("every cluster healthy with its capacity", PATIENCE);
        loop {
            let r = who.data("{ clusters { id health capacity { model totalGpus } } }", json!({})).await;
            let ready = r["clusters"].as_array().is_some_and(|cs| {
                cs.len() == self.agents.len()
                    && cs
                        .iter()
                        .all(|c| c["health"] == "healthy" && c["capacity"].as_array().is_some_and(|m| !m.is_empty()))
            });
            if ready {
                return;
            }
            deadline.tick(|| format!("clusters: {r}\n{}", self.logs())).await;
        }
    }

    /// The tail of every process' log (printed when a wait or an assertion fails).
    pub fn logs(&self) -> String {
        let mut out = vec![self.api.process.tail(150)];
        out.extend(self.replicas.iter().map(|r| r.process.tail(80)));
        out.extend(self.agents.values().map(|a| a.tail(80)));
        out.push(self.redis.tail(20));
        out.extend(self.postgres.iter().map(|p| p.tail(20)));
        out.join("\n")
    }

    /// Polls `job(id)` with `selection` until `done(job)`; fails on a deadline with the logs.
    pub async fn wait_job(
        &self,
        who: &Gql,
        id: &Value,
        selection: &str,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let query = format!("query($id: ID!) {{ job(id: $id) {{ state {selection} }} }}");
        let deadline = Deadline::new(format!("job {id}: {what}"), PATIENCE);
        loop {
            let job = who.data(&query, json!({ "id": id })).await["job"].clone();
            if done(&job) {
                return job;
            }
            deadline.tick(|| format!("job: {job}\n{}", self.logs())).await;
        }
    }

    /// Waits until job `id` is in `state` (SUCCEEDED, RUNNING, ...).
    pub async fn wait_state(&self, who: &Gql, id: &Value, state: &str) -> Value {
        self.wait_job(who, id, "dispatches { epoch clusterId outcome reason }", &format!("state {state}"), |j| {
            j["state"] == state
        })
        .await
    }
}

/// Signs `subject` in through the portal login (authorization code + PKCE at the real OIDC
/// provider) and returns a client with the session cookie and its CSRF token.
pub async fn portal_login(base: &str, subject: &str) -> Gql {
    let mut browser = crate::oidc::Browser::default();
    let start = browser.get(&format!("{base}/auth/login")).await;
    assert_eq!(start.status, 303, "{start:?}");
    let to_provider = start.location.expect("redirect to the provider");
    let callback = browser.follow_until(&to_provider, subject, &format!("{base}/auth/callback")).await;
    let done = browser.get(&callback).await;
    assert_eq!(done.status, 303, "{done:?}");
    let cookie = browser.jar.get("grus_session").cloned().expect("a session cookie");
    let session = browser.get(&format!("{base}/auth/session")).await;
    assert_eq!(session.status, 200, "{session:?}");
    let v: Value = serde_json::from_str(&session.body).expect("session JSON");
    Gql::session(base, &cookie, v["csrfToken"].as_str().expect("csrfToken"))
}

/// The platform admin, tenant `acme`, project `vision` with alice as a member. Returns the
/// project id and its default queue's id.
pub async fn seed_dev(stack: &Stack) -> Tenancy {
    let admin = stack.dev("admin");
    let me = admin.data("{ me { id } }", json!({})).await;
    let admin_id: i64 = me["me"]["id"].as_str().expect("id").parse().expect("numeric id");
    grus_api::db::set_platform_admin(&stack.db.pool, admin_id, true).await.expect("make admin platform admin");
    stack.dev("alice").data("{ me { id } }", json!({})).await;
    seed_tenancy(&admin, "dev:alice").await
}

/// Tenant `acme` and project `vision` (created by the platform admin `admin`), `member` added.
pub async fn seed_tenancy(admin: &Gql, member: &str) -> Tenancy {
    let tenant = admin.data(r#"mutation { createTenant(slug: "acme", name: "Acme") { id } }"#, json!({})).await;
    let project = admin
        .data(
            r#"mutation($t: ID!) { createProject(tenantId: $t, slug: "vision", name: "Vision") { id queues { id name } } }"#,
            json!({ "t": tenant["createTenant"]["id"] }),
        )
        .await;
    let project_id = project["createProject"]["id"].clone();
    admin
        .data(
            "mutation($p: ID!, $s: String!) { addMember(projectId: $p, subject: $s, role: MEMBER) }",
            json!({ "p": project_id, "s": member }),
        )
        .await;
    Tenancy {
        tenant_id: tenant["createTenant"]["id"].clone(),
        project_id,
        default_queue: project["createProject"]["queues"][0]["id"].clone(),
    }
}

pub struct Tenancy {
    pub tenant_id: Value,
    pub project_id: Value,
    pub default_queue: Value,
}

/// Sets queue `queue`'s GPU quota (in milli GPUs: 8000 = 8 GPUs).
pub async fn set_gpu_quota(admin: &Gql, queue: &Value, guaranteed: i64, limit: i64) {
    admin
        .data(
            r#"mutation($q: ID!, $g: Int!, $l: Int) { updateQuota(queueId: $q, resource: "gpu", guaranteed: $g, limit: $l) { id } }"#,
            json!({ "q": queue, "g": guaranteed, "l": limit }),
        )
        .await;
}

/// A job input: one task per `(name, replicas, gpus, models)`, sim duration `secs`.
pub fn job_input(name: &str, tasks: &[(&str, u32, u32, &[&str])], secs: f64) -> Value {
    json!({
        "name": name,
        "project": "vision",
        "labels": [{ "key": "grus.io/sim-duration-s", "value": secs.to_string() }],
        "tasks": tasks.iter().map(|(t, replicas, gpus, models)| json!({
            "name": t,
            "replicas": replicas,
            "image": "busybox",
            "resources": { "gpus": gpus, "gpuModels": models, "cpuMilli": 1000, "memoryMib": 1024 }
        })).collect::<Vec<_>>()
    })
}

/// `submitJob(input)`; returns the job id.
pub async fn submit(who: &Gql, input: Value) -> Value {
    let r = who
        .data(
            "mutation($input: JobInput!) { submitJob(input: $input) { borrowed job { id state } } }",
            json!({ "input": input }),
        )
        .await;
    r["submitJob"]["job"]["id"].clone()
}

/// Parses a GraphQL ID.
pub fn id_of(v: &Value) -> i64 {
    v.as_str().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("not an ID: {v}"))
}
