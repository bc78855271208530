//! One module per subcommand; [`run`] dispatches and builds what they share (the config and
//! the client).

mod budget;
mod cluster;
mod jobs;
mod login;
mod logs;
mod queues;
mod services;
mod submit;
mod tenants;
mod usage;
pub mod wait;

use std::path::PathBuf;

use clap::CommandFactory;

use crate::cli::{Cli, Command};
use crate::client::Client;
use crate::config::{self, ConfigFile, Overrides};
use crate::exit::{CliError, CliResult, Exit};

/// What every command may need: the config file and the connection overrides.
pub struct Context {
    pub config_path: PathBuf,
    pub file: ConfigFile,
    pub overrides: Overrides,
}

impl Context {
    fn load(cli: &Cli) -> CliResult<Context> {
        let config_path = match &cli.global.config {
            Some(p) => p.clone(),
            None => config::default_path()?,
        };
        let file = config::load(&config_path)?;
        let overrides = Overrides {
            server: cli.global.server.clone(),
            token: cli.global.token.clone(),
            dev_user: cli.global.dev_user.clone(),
        };
        Ok(Context { config_path, file, overrides })
    }

    /// The client for the resolved server and credentials; an expired OIDC token from the
    /// config file is refreshed first (and saved) when a refresh token is stored.
    pub async fn client(&mut self) -> CliResult<Client> {
        let mut settings = config::resolve(&self.overrides, &self.file)?;
        if settings.token_from_file && crate::oidc::refresh_if_expired(&mut self.file).await? {
            config::save(&self.config_path, &self.file)?;
            settings = config::resolve(&self.overrides, &self.file)?;
        }
        Client::new(settings)
    }
}

pub async fn run(cli: Cli) -> CliResult<Exit> {
    if let Command::Completions(args) = &cli.command {
        let mut cmd = Cli::command();
        let mut out = Vec::new();
        clap_complete::generate(args.shell, &mut cmd, "grus", &mut out);
        crate::output::write_stdout(&out)?;
        return Ok(Exit::Ok);
    }
    if let Command::Dev(args) = cli.command {
        // `grus dev` is the server side: no server address or credentials to resolve.
        return crate::dev::run(args).await.map(|()| Exit::Ok).map_err(|e| CliError::generic(format!("{e:#}")));
    }
    let mut ctx = Context::load(&cli)?;
    match cli.command {
        Command::Login(args) => login::login(&mut ctx, args).await,
        Command::Logout => login::logout(&mut ctx),
        Command::Submit(args) => submit::submit(&mut ctx, args).await,
        Command::Jobs(args) => jobs::list(&mut ctx, args).await,
        Command::Job(args) => jobs::show(&mut ctx, args).await,
        Command::Logs(args) => logs::logs(&mut ctx, args).await,
        Command::Cancel(args) => jobs::cancel(&mut ctx, args).await,
        Command::Suspend(args) => jobs::suspend(&mut ctx, args).await,
        Command::Resume(args) => jobs::resume(&mut ctx, args).await,
        Command::Services(args) => services::list(&mut ctx, args).await,
        Command::Service(args) => services::run(&mut ctx, args).await,
        Command::Workspaces(args) => services::workspaces(&mut ctx, args).await,
        Command::Queues(args) => queues::list(&mut ctx, args).await,
        Command::Clusters(args) => cluster::list(&mut ctx, args).await,
        Command::Cluster(args) => cluster::operate(&mut ctx, args).await,
        Command::Budget(args) => budget::run(&mut ctx, args).await,
        Command::Tenants(args) => tenants::run(&mut ctx, args).await,
        Command::Usage(args) => usage::export(&mut ctx, args).await,
        Command::Completions(_) | Command::Dev(_) => unreachable!("handled above"),
    }
}
