//! The harness of Grus' end-to-end suite (the scenarios are `tests/e2e/`).
//!
//! Everything is real: the `grus-api` and `grus-agent` binaries run as child processes, over a
//! fresh PostgreSQL database and a private `redis-server` per test, and one scenario signs in
//! through a real OIDC provider. The harness owns starting, killing (`kill -9`) and restarting
//! those processes, the GraphQL client, and the polling helpers with generous deadlines.
//!
//! The database and the OIDC provider helpers are the api's own test support, shared (not
//! copied) through `#[path]`.

#[path = "../../api/tests/support/mod.rs"]
pub mod db;
#[path = "../../api/tests/support/oidc.rs"]
pub mod oidc;

pub mod gql;
pub mod process;
pub mod redis_server;
pub mod stack;
pub mod wait;

pub use gql::Gql;
pub use stack::{Agent, ApiServer, Stack, StackConfig};
pub use wait::Deadline;
