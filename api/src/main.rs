//! `grus-api`: serve the control plane, apply migrations, or print the GraphQL schema.

use anyhow::Context as _;
use clap::Parser;
use grus_api::config::{Cli, Command};
use grus_api::{db, graphql};

// Request handling allocates many small short-lived objects (GraphQL values, rows); glibc's
// allocator spent a sixth of the server's CPU on them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    // Before the runtime's threads exist: it may set environment variables.
    grus_api::config::adopt_renamed_env(grus_api::config::RENAMED_ENV);
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("start the Tokio runtime")?.block_on(run())
}

async fn run() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    match Cli::parse().command {
        Command::Schema => {
            print!("{}", graphql::sdl());
            Ok(())
        }
        Command::Migrate(args) => {
            let pool = db::connect(&args.db.database_url).await.context("connect to PostgreSQL")?;
            db::migrate(&pool).await.context("apply migrations")?;
            tracing::info!("migrations applied");
            if args.new_incarnation {
                let id = db::control_plane::new_incarnation(&pool).await.context("replace the incarnation")?;
                tracing::warn!(incarnation = id, "new control-plane incarnation: re-pin every agent to it");
                println!("{id}");
            } else {
                let id = db::control_plane::incarnation(&pool).await.context("read the incarnation")?;
                tracing::info!(incarnation = id, "control-plane incarnation");
            }
            Ok(())
        }
        Command::Serve(args) => grus_api::server::run(args.validate()?, grus_api::server::shutdown_signal()).await,
    }
}
