//! `grus dev`: a working Grus on one machine, in one process — grus-api (dev login, the portal
//! when built) and N simulated cluster agents with different GPU models, over the local
//! PostgreSQL and Redis, seeded with a demo tenant.
//!
//! Order: check the listen address, PostgreSQL (creating the database) and Redis, so that a
//! missing server is reported before anything starts; start the api; register the clusters;
//! start their agents; seed; wait for the clusters' first heartbeats; print where everything
//! is. Ctrl-C (or SIGTERM) stops the api and the agents and waits for them.

pub mod fleet;
pub mod preflight;
pub mod seed;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context as _};
use clap::Parser as _;
use grus_agent::run::{run_agent, AgentConfig};
use grus_agent::transport::RedisSettings;
use grus_scheduler::pool::{NodePools, PoolDef};
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinSet;

use fleet::SimCluster;
use seed::{Gql, Seeded};

/// Flags of `grus dev` (each with an environment variable).
#[derive(Clone, Debug, clap::Args)]
pub struct DevArgs {
    /// Address of the api and the portal. Loopback only: the dev login trusts a header.
    #[arg(long, env = "GRUS_DEV_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Number of simulated clusters (east: 4 x 8 A100-80GB, west: 4 x 4 T4, then other models).
    #[arg(long, env = "GRUS_DEV_CLUSTERS", default_value_t = 2)]
    pub clusters: usize,
    /// PostgreSQL database, created if missing.
    #[arg(long, env = "DATABASE_URL", default_value = "postgres://postgres@127.0.0.1/grus_dev")]
    pub database_url: String,
    /// Redis server.
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    pub redis_url: String,
    /// Where the simulated agents keep their books and journals (one directory per database).
    /// Default: $XDG_STATE_HOME/grus/dev, or ~/.local/state/grus/dev.
    #[arg(long, env = "GRUS_DEV_STATE_DIR")]
    pub state_dir: Option<PathBuf>,
    /// The portal's built files. Default: portal/dist when it holds an index.html.
    #[arg(long, env = "GRUS_PORTAL_DIR")]
    pub portal_dir: Option<PathBuf>,
    /// Prefix of the cluster ids (`<prefix>east`): keeps several dev setups (or tests) on one
    /// Redis apart.
    #[arg(long, env = "GRUS_DEV_CLUSTER_PREFIX", default_value = "")]
    pub cluster_prefix: String,
}

/// How long the clusters' first heartbeats may take before the banner is printed anyway.
const HEALTHY_WAIT: Duration = Duration::from_secs(60);
/// How long the servers get to stop after Ctrl-C.
const STOP_WAIT: Duration = Duration::from_secs(15);

/// Runs `grus dev` until Ctrl-C or SIGTERM.
pub async fn run(args: DevArgs) -> anyhow::Result<()> {
    // The binary may have set up logging already; then its settings stay.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn,grus=info".into()),
        )
        .with_writer(std::io::stderr)
        .try_init();

    preflight::check_loopback(args.listen)?;
    let clusters = fleet::fleet(args.clusters, &args.cluster_prefix)?;
    let portal_dir = portal_dir(args.portal_dir.as_deref())?;
    let database = preflight::ensure_database(&args.database_url).await?;
    preflight::check_redis(&args.redis_url).await?;
    let state_dir = match &args.state_dir {
        Some(dir) => dir.clone(),
        None => default_state_root().context("no state directory: set --state-dir")?,
    }
    .join(&database.name);
    std::fs::create_dir_all(&state_dir).with_context(|| format!("create {}", state_dir.display()))?;

    let server =
        grus_api::server::Server::start(api_config(&args, portal_dir.as_deref())?).await.context("start grus-api")?;
    let addr = server.local_addr()?;
    let base = format!("http://{addr}");
    // The agents serve this database's control plane: a database dropped and created again is
    // a new one, and they follow it by themselves (the dev mode's reset).
    let incarnation = server.incarnation().to_owned();
    let (stop, stopped) = watch::channel(false);
    let mut tasks: JoinSet<(String, anyhow::Result<()>)> = JoinSet::new();
    let api_stop = until(stopped.clone());
    tasks.spawn(async move { ("grus-api".to_owned(), server.run(api_stop).await) });

    let started = start(&args, &base, &incarnation, &clusters, &state_dir, &stopped, &mut tasks).await;
    let seeded = match started {
        Ok(seeded) => seeded,
        Err(e) => {
            stop_all(&stop, &mut tasks).await;
            return Err(e);
        }
    };
    for item in &seeded.created {
        tracing::info!("seeded {item}");
    }
    let health = wait_healthy(&Gql::new(&base)?, &clusters).await;
    print_banner(&base, &args, &database, &clusters, &health, portal_dir.as_deref(), &state_dir);

    let ended = tokio::select! {
        _ = grus_api::server::shutdown_signal() => None,
        ended = tasks.join_next() => ended,
    };
    let failure = match ended {
        None => None,
        Some(Ok((name, Ok(())))) => Some(anyhow::anyhow!("{name} stopped unexpectedly")),
        Some(Ok((name, Err(e)))) => Some(e.context(format!("{name} failed"))),
        Some(Err(e)) => Some(anyhow::anyhow!("a server task panicked: {e}")),
    };
    stop_all(&stop, &mut tasks).await;
    match failure {
        Some(e) => Err(e),
        None => {
            println!("Grus stopped.");
            Ok(())
        }
    }
}

/// Registers the clusters, starts their agents, seeds the demo data.
async fn start(
    args: &DevArgs,
    base: &str,
    incarnation: &str,
    clusters: &[SimCluster],
    state_dir: &Path,
    stopped: &watch::Receiver<bool>,
    tasks: &mut JoinSet<(String, anyhow::Result<()>)>,
) -> anyhow::Result<Seeded> {
    wait_serving(base).await?;
    let gql = Gql::new(base)?;
    let mut seeded = Seeded::default();
    seed::register_clusters(&gql, clusters, &mut seeded).await.context("register the simulated clusters")?;
    for c in clusters {
        let nodes = grus_agent::backend::sim::spec::parse_compact(c.nodes).context("the built-in node spec")?;
        let redis = RedisSettings { url: args.redis_url.clone(), username: None, password: None };
        let defs = c.node_pools.iter().map(|p| PoolDef::parse(p)).collect::<Result<Vec<_>, _>>()?;
        let config = AgentConfig {
            control_plane: Some(incarnation.to_owned()),
            node_pools: NodePools::new(defs)?,
            ..AgentConfig::sim(&c.id, redis, nodes, state_dir.join(&c.id))?
        };
        let name = format!("agent {}", c.id);
        let agent_stop = until(stopped.clone());
        tasks.spawn(async move { (name, run_agent(config, agent_stop).await) });
    }
    seed::seed_tenancy(&gql, &fleet::prices(clusters), &mut seeded).await.context("seed the demo tenant")?;
    seed::seed_jobs(&gql, clusters, &mut seeded).await.context("seed the demo jobs")?;
    Ok(seeded)
}

/// grus-api's own flag parser and validation, so `grus dev` runs exactly `grus-api serve --dev`
/// with these settings (other `GRUS_*` tuning variables apply as they would there).
fn api_config(args: &DevArgs, portal_dir: Option<&Path>) -> anyhow::Result<grus_api::config::ServeConfig> {
    let listen = args.listen.to_string();
    let mut argv = vec![
        "grus-api",
        "serve",
        "--dev",
        "--listen",
        &listen,
        "--database-url",
        &args.database_url,
        "--redis-url",
        &args.redis_url,
        "--platform-admin-subject",
        "dev:admin",
        // Clusters turn healthy within a couple of seconds of their first heartbeat.
        "--health-interval",
        "2s",
    ];
    let portal = portal_dir.map(|p| p.to_string_lossy().into_owned());
    if let Some(dir) = &portal {
        argv.extend(["--portal-dir", dir.as_str()]);
    }
    let cli = grus_api::config::Cli::try_parse_from(argv).context("grus-api settings")?;
    let grus_api::config::Command::Serve(serve) = cli.command else { bail!("grus-api settings: not `serve`") };
    Ok(serve.validate()?)
}

/// The portal directory: the named one (it must hold index.html), else `portal/dist` when built.
fn portal_dir(named: Option<&Path>) -> anyhow::Result<Option<PathBuf>> {
    match named {
        Some(dir) if dir.join("index.html").is_file() => Ok(Some(dir.to_owned())),
        Some(dir) => bail!(
            "--portal-dir {}: no index.html there (build the portal: npm --prefix portal install && npm --prefix \
             portal run build)",
            dir.display()
        ),
        None => {
            let dist = PathBuf::from("portal/dist");
            Ok(dist.join("index.html").is_file().then_some(dist))
        }
    }
}

fn default_state_root() -> Option<PathBuf> {
    let state_home = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| {
        std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".local/state"))
    })?;
    Some(state_home.join("grus").join("dev"))
}

/// Waits until the api answers /healthz (it is bound already; this waits for its task to run).
async fn wait_serving(base: &str) -> anyhow::Result<()> {
    let http = reqwest::Client::new();
    let mut last = None;
    for _ in 0..100 {
        match http.get(format!("{base}/healthz")).send().await {
            Ok(r) if r.status().is_success() => return Ok(()),
            Ok(r) => last = Some(format!("HTTP {}", r.status())),
            Err(e) => last = Some(e.to_string()),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("grus-api does not answer at {base}/healthz: {}", last.unwrap_or_default())
}

/// Each cluster's health once all are healthy and have reported their capacity (what the
/// allocator needs), or as it is after [`HEALTHY_WAIT`].
async fn wait_healthy(gql: &Gql, clusters: &[SimCluster]) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + HEALTHY_WAIT;
    loop {
        let health: Vec<String> = match gql.run(seed::ADMIN, "{ clusters { id health capacityAt } }", json!({})).await {
            Ok(data) => clusters
                .iter()
                .map(|c| {
                    let row = data["clusters"].as_array().and_then(|all| all.iter().find(|x| x["id"] == c.id.as_str()));
                    match row {
                        Some(r) if r["health"] == "healthy" && r["capacityAt"].is_null() => {
                            "healthy, no capacity reported yet".to_owned()
                        }
                        Some(r) => r["health"].as_str().unwrap_or("unknown").to_owned(),
                        None => "not registered".to_owned(),
                    }
                })
                .collect(),
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), "reading cluster health");
                vec!["unknown".to_owned(); clusters.len()]
            }
        };
        if health.iter().all(|h| h == "healthy") || tokio::time::Instant::now() >= deadline {
            return health;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn print_banner(
    base: &str,
    args: &DevArgs,
    database: &preflight::DevDatabase,
    clusters: &[SimCluster],
    health: &[String],
    portal_dir: Option<&Path>,
    state_dir: &Path,
) {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(String::new());
    line(format!("Grus is running: grus-api and {} simulated clusters in this process.", clusters.len()));
    match portal_dir {
        Some(_) => line(format!("  Portal     {base}/   (DEV LOGIN: pick a dev user; no password, loopback only)")),
        None => line(
            "  Portal     not built: npm --prefix portal install && npm --prefix portal run build, then \
             --portal-dir portal/dist"
                .to_owned(),
        ),
    }
    line(format!("  GraphQL    {base}/graphql   (dev login: header `x-grus-dev-user: alice`)"));
    let state = if database.created { "created now" } else { "existing" };
    line(format!("  Database   {} ({state})", preflight::redact(&args.database_url)));
    line(format!("  Agents     state in {}", state_dir.display()));
    for (i, (c, h)) in clusters.iter().zip(health).enumerate() {
        let label = if i == 0 { "Clusters" } else { "" };
        line(format!("  {label:<10} {:<12} {:<24} {h}", c.id, c.description));
    }
    line(format!("  Dev users  {:<6} platform admin", seed::ADMIN));
    line(format!("             {:<6} member of project `{}` (tenant {})", seed::ALICE, seed::PROJECT, seed::TENANT));
    line(format!("             {:<6} member of project `{}`", seed::BOB, seed::SECOND_PROJECT));
    line(String::new());
    line("Submit a job as alice:".to_owned());
    line(format!(
        "  curl -s {base}/graphql -H 'content-type: application/json' -H 'x-grus-dev-user: alice' -d '{{\"query\":\n    \
         \"mutation {{ submitJob(input: {{name: \\\"train\\\", project: \\\"demo\\\", labels: [{{key: \
         \\\"grus.io/sim-duration-s\\\", value: \\\"30\\\"}}], tasks: [{{name: \\\"worker\\\", replicas: 1, image: \
         \\\"train:1\\\", resources: {{gpus: 4, gpuModels: [\\\"{}\\\"]}}}}]}}) {{ job {{ id state }} }} }}\"}}'",
        clusters[0].gpu_model
    ));
    line("Ctrl-C stops everything.".to_owned());
    print!("{out}");
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
}

/// Resolves when `stopped` turns true (or its sender is gone).
async fn until(mut stopped: watch::Receiver<bool>) {
    let _ = stopped.wait_for(|s| *s).await;
}

/// Signals every task to stop and waits (at most [`STOP_WAIT`]) for them.
async fn stop_all(stop: &watch::Sender<bool>, tasks: &mut JoinSet<(String, anyhow::Result<()>)>) {
    let _ = stop.send(true);
    let drained = tokio::time::timeout(STOP_WAIT, async {
        while let Some(ended) = tasks.join_next().await {
            match ended {
                Ok((name, Err(e))) => tracing::warn!(error = %format!("{e:#}"), "{name} stopped with an error"),
                Ok((_, Ok(()))) => {}
                Err(e) => tracing::warn!(error = %e, "a server task panicked"),
            }
        }
    })
    .await;
    if drained.is_err() {
        // Open websocket subscriptions keep the HTTP drain waiting; the process ends anyway.
        tracing::warn!("servers still draining after {}s; stopping", STOP_WAIT.as_secs());
        tasks.abort_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        dev: DevArgs,
    }

    fn args(extra: &[&str]) -> DevArgs {
        Cli::try_parse_from([&["grus-dev"], extra].concat()).expect("flags parse").dev
    }

    #[test]
    fn api_settings_are_dev_mode_with_the_admin_subject() {
        let a = args(&[
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            "postgres://p@127.0.0.1/x",
            "--redis-url",
            "redis://r",
        ]);
        let c = api_config(&a, None).unwrap();
        assert_eq!(c.auth, grus_api::auth::AuthMode::Dev);
        assert_eq!(c.dev_platform_admin.as_deref(), Some("dev:admin"));
        assert_eq!(c.database_url, "postgres://p@127.0.0.1/x");
        assert!(c.portal_dir.is_none());
        assert!(c.allocator.is_some());
    }

    #[test]
    fn a_named_portal_dir_must_be_built() {
        let dir = tempfile::tempdir().unwrap();
        assert!(portal_dir(Some(dir.path())).is_err());
        std::fs::write(dir.path().join("index.html"), "<html></html>").unwrap();
        assert_eq!(portal_dir(Some(dir.path())).unwrap().as_deref(), Some(dir.path()));
    }
}
