//! The `grus` binary: parse the command line, run the command, exit with the documented code.

use std::process::ExitCode;

use clap::Parser;
use grus::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `grus dev` runs servers whose progress is worth seeing; client commands stay quiet.
    let default_filter = if matches!(cli.command, Command::Dev(_)) { "info" } else { "warn" };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("GRUS_LOG").unwrap_or_else(|_| default_filter.into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(grus::exit::Exit::Generic.code());
        }
    };
    match runtime.block_on(grus::commands::run(cli)) {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit.code())
        }
    }
}
