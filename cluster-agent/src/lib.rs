//! grus-agent: the per-cluster agent.
//!
//! Consumes commands from `grus:{cluster}:cmd` (consumer group `agent`), keeps the book of
//! jobs dispatched to this cluster, runs grus-scheduler's cycle over them, drives a backend
//! (`sim` or `kube`) to run the placed replicas, and streams every transition, the capacity
//! summary and GPU metrics back on `grus:{cluster}:evt`.

pub mod agent;
pub mod backend;
pub mod book;
pub mod clock;
pub mod convert;
pub mod credentials;
pub mod device_plugin;
pub mod heartbeat;
pub mod http;
pub mod kept_logs;
pub mod profiler;
pub mod run;
pub mod transport;
