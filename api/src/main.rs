//! `grus-api`: serve the control plane, apply migrations, or print the GraphQL schema.

use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;
use grus_api::commands::CommandPublisher;
use grus_api::config::{Cli, Command, ServeConfig};
use grus_api::dispatcher::Dispatcher;
use grus_api::graphql::auth::Authenticator;
use grus_api::http::{router, AppState, Metrics};
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
    if config.auth == grus_api::config::AuthMode::Dev {
        tracing::warn!("--dev: the X-Grus-Dev-User header is trusted without authentication");
    }
    let pool = db::connect(&config.database_url).await.context("connect to PostgreSQL")?;
    db::migrate(&pool).await.context("apply migrations")?;
    let redis = redis::Client::open(config.redis_url.as_str()).context("parse the Redis URL")?;
    let metrics = Arc::new(Metrics::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let allocator = match config.allocator {
        Some(cfg) => {
            let publisher = CommandPublisher::connect(&redis).await.context("connect to Redis for commands")?;
            let loop_ = Dispatcher::new(pool.clone(), publisher, cfg, metrics.clone());
            Some(tokio::spawn(loop_.run(stop_rx)))
        }
        None => None,
    };
    let state = AppState {
        schema: graphql::build_schema(Some(pool.clone()), config.graphql),
        pool,
        redis: Some(redis),
        auth: Authenticator::new(config.auth.clone()),
        metrics,
    };
    let listener =
        tokio::net::TcpListener::bind(config.listen).await.with_context(|| format!("listen on {}", config.listen))?;
    tracing::info!(listen = %config.listen, "grus-api serving");
    axum::serve(listener, router(state, config.max_body_bytes))
        .with_graceful_shutdown(async move {
            shutdown().await;
            let _ = stop_tx.send(true);
        })
        .await
        .context("serve")?;
    if let Some(task) = allocator {
        // The loop resigns its leadership before it returns, so another replica takes over.
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
