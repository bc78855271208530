//! grus-api: the control plane.
//!
//! Will own the GraphQL API (async-graphql on axum), OIDC login and API tokens, admission
//! against quotas in PostgreSQL, the cross-cluster allocator (built on grus-scheduler's pure
//! code), event ingestion from the agents' Redis streams, and billing exports (FOCUS).
//! Not built yet: see the control-plane issue.
