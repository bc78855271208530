//! Test-only crate: `tests/charts.rs` renders `helm/grus-control-plane` and `helm/grus-agent`
//! with the Helm CLI and checks every manifest against the Kubernetes API types
//! (k8s-openapi), the agent's RBAC, and every flag and environment variable against the
//! `--help` of the real `grus-api` and `grus-agent` binaries. It has no library code.
