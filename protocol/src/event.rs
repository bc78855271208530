//! Events: agent -> api on `grus:{cluster}:evt`.
//!
//! `JobState` reports one transition of a job, a task or a replica (task and replica absent
//! for the job itself) with the epoch it happened under; the api ignores stale epochs.

use serde::{Deserialize, Serialize};

use crate::wire::{CapacitySummary, DeviceRef, GpuMetrics, JobSnapshot, NodeInfo, ReplicaExit, ReplicaUsage, State};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "body")]
pub enum Event {
    /// First message after the agent starts.
    Hello {
        version: String,
        capabilities: Vec<String>,
    },
    Inventory {
        nodes: Vec<NodeInfo>,
    },
    Capacity {
        summary: CapacitySummary,
    },
    JobState {
        job: u64,
        #[serde(default)]
        task: Option<String>,
        #[serde(default)]
        replica: Option<u32>,
        state: State,
        #[serde(default)]
        node: Option<String>,
        #[serde(default)]
        devices: Vec<DeviceRef>,
        /// When the transition happened, milliseconds since the Unix epoch.
        at: i64,
        epoch: u64,
        /// Why (a rejection's reason, a failure's exit status, the policy that fired).
        #[serde(default)]
        reason: Option<String>,
        /// A checkpoint the job acknowledged before being stopped: its reference (a job-level
        /// report, in the state the job is in). An older api ignores it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checkpoint: Option<String>,
        /// Where the job serves (a workspace's or a service replica's port), reported with its
        /// job-level `running`: an in-cluster URL (Kubernetes: its Service's DNS name; sim: a
        /// made-up one). An older api ignores it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        endpoint: Option<String>,
        /// How a replica ended (its exit code and termination reason), reported with its
        /// terminal state. An older api ignores it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit: Option<ReplicaExit>,
    },
    Metrics {
        gpus: Vec<GpuMetrics>,
        /// Each running replica's CPU, memory, disk and network use. An older api ignores it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        replicas: Vec<ReplicaUsage>,
    },
    /// Everything the agent knows, sent on start and when the api asks for it.
    Snapshot {
        jobs: Vec<JobSnapshot>,
        inventory: Vec<NodeInfo>,
    },
}

impl Event {
    pub const KINDS: &'static [&'static str] = &["Hello", "Inventory", "Capacity", "JobState", "Metrics", "Snapshot"];

    pub fn kind(&self) -> &'static str {
        match self {
            Event::Hello { .. } => "Hello",
            Event::Inventory { .. } => "Inventory",
            Event::Capacity { .. } => "Capacity",
            Event::JobState { .. } => "JobState",
            Event::Metrics { .. } => "Metrics",
            Event::Snapshot { .. } => "Snapshot",
        }
    }

    pub fn epoch(&self) -> Option<u64> {
        match self {
            Event::JobState { epoch, .. } => Some(*epoch),
            _ => None,
        }
    }
}
