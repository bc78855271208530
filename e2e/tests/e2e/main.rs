//! Grus end to end: the real `grus-api` and `grus-agent` binaries as processes, a fresh
//! PostgreSQL database and a private Redis per test, and a real OIDC provider for billing.
//! Each scenario asserts on the GraphQL API and on the database (job states, dispatches with
//! their epochs, the event trail, the usage ledger) and, where it matters, on the agent's
//! book and the simulator's journal.
//!
//! Build the binaries first (cargo holds the target directory's lock while tests run):
//! `cargo build -p grus-api -p grus-agent && cargo test -p grus-e2e --features e2e`.

mod billing;
mod chaos;
mod elastic;
mod estimates;
mod fair_share;
mod faults;
mod metrics;
mod placement;
mod policy;
mod preemption;
mod recovery;
mod services;
mod throughput;
mod trail;
mod workspaces;
