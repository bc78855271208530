//! grus-testkit: what the tests of Grus' crates share, and the workspace's structural checks.
//!
//! Test only (a dev-dependency): nothing here ships in a binary. Used by the integration tests
//! of grus-api, the CLI, the agent and the end-to-end suite (one test binary per crate); never
//! by a crate's unit tests, whose `cfg(test)` build of the crate is not the one linked here.
//! What needs grus-api (a database, the api in-process, seeds, the process stack) is behind the
//! default feature `api`; the agent's tests take the rest without it.
//!
//! - Services: [`env`] (the machine's PostgreSQL and Redis, unique names, free ports, the
//!   workspace's binaries), [`db`] (a fresh migrated database per test), [`postgres_server`] (a private
//!   PostgreSQL server to crash and restart), [`redis_server`] (a
//!   private `redis-server` to kill and restart), [`oidc`] (a real OIDC provider and a
//!   browser).
//! - Data: [`seed`] (tenants, projects, users with roles, clusters, jobs; [`seed::TwoTenants`]),
//!   [`streams`] (a cluster's Redis keys, deleted at the end; the commands sent to it).
//! - The api in the test's process: [`api`] ([`api::TestApi`]: the router with chosen auth,
//!   limits and schema parts, in-process or on a loopback port) and [`client`] (GraphQL
//!   requests through the router as a dev user or with any headers).
//! - Processes: [`process`] (children killed with `kill -9` and restarted), [`agent`] (a started
//!   sim agent), [`spec`] (wire job specs to dispatch), [`stack`] (database, Redis, the api and agents as real processes), [`gql`] (a
//!   GraphQL client per caller over HTTP), [`wait`] (bounded polls).
//! - [`module_graph`]: the module graph of a crate's sources; its test fails when any crate of
//!   the workspace has a module cycle.
//! - [`env_names`]: the binaries' environment variables, read from their clap attributes; its
//!   test fails when one is named another way (`GRUS_*`, or `DATABASE_URL`, `REDIS_URL`,
//!   `NODE_NAME`) or one setting has two names.

pub mod agent;
#[cfg(feature = "api")]
pub mod api;
#[cfg(feature = "api")]
pub mod client;
#[cfg(feature = "api")]
pub mod db;
pub mod env;
pub mod env_names;
pub mod gql;
pub mod module_graph;
pub mod oidc;
pub mod postgres_server;
pub mod process;
pub mod redis_server;
#[cfg(feature = "api")]
pub mod seed;
pub mod spec;
#[cfg(feature = "api")]
pub mod stack;
pub mod streams;
pub mod wait;

#[cfg(feature = "api")]
pub use db::TestDb;
pub use gql::Gql;
#[cfg(feature = "api")]
pub use stack::{Stack, StackConfig};
pub use wait::Deadline;
