//! grus-api: the control plane.
//!
//! Owns the GraphQL API (async-graphql on axum), OIDC login and API tokens, admission against
//! quotas in PostgreSQL, the cross-cluster allocator (built on grus-scheduler's pure code),
//! event ingestion from the agents' Redis streams, and billing exports (FOCUS).
//!
//! Pure modules (no I/O) hold the decisions; `db` and the servers are thin shells around them.

pub mod admission;
pub mod agent_access;
pub mod allocator;
pub mod auth;
pub mod billing;
pub mod commands;
pub mod config;
pub mod db;
pub mod dispatcher;
#[macro_use]
pub mod domain;
pub mod error;
pub mod event_streams;
pub mod fleet_shapes;
pub mod graphql;
pub mod http;
pub mod ingest;
pub mod job_cache;
pub mod logs;
pub mod metrics;
pub mod notify;
pub mod portal;
pub mod runtime;
pub mod server;
