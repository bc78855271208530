//! grus-api's integration tests, one binary (one link of the api on 2 cores, not twenty):
//! a module per area, each over a fresh PostgreSQL database per test (`grus-testkit`).
//! `ingest_agent` runs the real agent binary and needs the `e2e` feature
//! (`cargo build -p grus-agent && cargo test -p grus-api --features e2e --test api`).

mod agent_access;
mod allocator;
mod allocator_loop;
mod api_tokens;
mod authz_matrix;
mod billing;
mod billing_api;
mod db_admission;
mod db_credentials;
mod db_jobs;
mod db_schema;
mod domain_drift;
mod fair_share;
mod graphql_api;
mod graphql_fuzz;
mod graphql_jobs;
mod graphql_limits;
mod graphql_schema;
mod ingest;
#[cfg(feature = "e2e")]
mod ingest_agent;
mod ingest_batch;
mod ingest_fuzz;
mod job_cache;
mod oidc_login;
mod operations;
mod subscriptions;
mod tenant_rights;
