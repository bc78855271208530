//! `grus-api`: serve the control plane, apply migrations, or print the GraphQL schema.

use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;
use grus_api::commands::CommandPublisher;
use grus_api::config::{Cli, Command, ServeConfig};
use grus_api::dispatcher::Dispatcher;
use grus_api::graphql::auth::Authenticator;
use grus_api::http::{router, AppState, Metrics};
use grus_api::ingest::health::HealthMonitor;
use grus_api::ingest::Ingester;
use grus_api::notify::Notifier;
use grus_api::{db, graphql};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    match Cli::parse().command {
        Command::Schema => {
            print!("{}", graphql::sdl());
            Ok(())
        }
        Command::Migrate(args) => {
            let pool = db::connect(&args.database_url).await.context("connect to PostgreSQL")?;
            db::migrate(&pool).await.context("apply migrations")?;
            tracing::info!("migrations applied");
            Ok(())
        }
        Command::Serve(args) => serve(args.validate()?).await,
    }
}

async fn serve(config: ServeConfig) -> anyhow::Result<()> {
    match &config.auth {
        grus_api::config::AuthMode::Dev => {
            tracing::warn!("--dev: the X-Grus-Dev-User header is trusted without authentication")
        }
        grus_api::config::AuthMode::Oidc(oidc) => {
            tracing::info!(issuer = %oidc.issuer, portal_login = oidc.login.is_some(), "OIDC authentication")
        }
    }
    let pool = db::connect(&config.database_url).await.context("connect to PostgreSQL")?;
    db::migrate(&pool).await.context("apply migrations")?;
    // One LISTEN per process for subscriptions, started now so the first subscriber does not
    // wait for it.
    let notifier = Notifier::new(pool.clone());
    notifier.start();
    let redis = redis::Client::open(config.redis_url.as_str()).context("parse the Redis URL")?;
    let metrics = Arc::new(Metrics::default());
    // Background loops stop when this turns true: as soon as shutdown starts, so that the
    // allocator resigns its leadership while the HTTP server drains.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let ingester = Ingester::connect(pool.clone(), &redis, metrics.ingest.clone(), config.ingest.clone())
        .await
        .context("connect the event ingestion to Redis")?;
    let monitor = HealthMonitor::connect(pool.clone(), &redis, metrics.ingest.clone(), config.health)
        .await
        .context("connect the cluster health monitor to Redis")?;
    let mut loops = vec![tokio::spawn(ingester.run(stopped.clone())), tokio::spawn(monitor.run(stopped.clone()))];
    if let Some(cfg) = config.allocator {
        let publisher = CommandPublisher::connect(&redis).await.context("connect to Redis for commands")?;
        loops.push(tokio::spawn(Dispatcher::new(pool.clone(), publisher, cfg, metrics.clone()).run(stopped)));
    }
    let state = AppState {
        schema: graphql::build_schema_with(Some(pool.clone()), config.graphql, Some(notifier)),
        pool,
        redis: Some(redis),
        auth: Authenticator::new(config.auth.clone()),
        metrics,
    };
    let listener =
        tokio::net::TcpListener::bind(config.listen).await.with_context(|| format!("listen on {}", config.listen))?;
    tracing::info!(listen = %config.listen, "grus-api serving");
    let mut app = router(state, config.max_body_bytes);
    if let Some(dir) = &config.portal_dir {
        tracing::info!(dir = %dir.display(), "serving the portal");
        app = grus_api::portal::with_portal(app, dir);
    }
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown().await;
            let _ = stop.send(true);
        })
        .await
        .context("serve")?;
    // The allocator resigns its leadership before it returns, so another replica takes over.
    for task in loops {
        let _ = task.await;
    }
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on SIGTERM (how Kubernetes stops a pod) or ctrl-c.
async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}
