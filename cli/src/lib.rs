//! grus: the user CLI (`grus submit`, `grus jobs`, `grus usage`, ...) and `grus dev`, which
//! runs the api and simulated agents in one process for a first try.
//!
//! The CLI talks only to grus-api's GraphQL API (`/graphql`) and its export downloads; it
//! never touches PostgreSQL or Redis. `config` resolves the server and credentials, `client`
//! sends requests and maps API errors to the exit codes of `exit`, `jobspec` reads job YAML
//! exactly like the portal, `output` prints tables, JSON and YAML, `oidc` signs in, and
//! `commands` holds one module per subcommand.

pub mod cli;
pub mod client;
pub mod commands;
pub mod config;
pub mod dev;
pub mod exit;
pub mod jobspec;
pub mod oidc;
pub mod output;
pub mod servicespec;
