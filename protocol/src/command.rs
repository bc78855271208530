//! Commands: api -> agent on `grus:{cluster}:cmd`.
//!
//! Every command that concerns a job carries the dispatch epoch (invariant 2): the agent
//! refuses a command whose epoch is older than the one it holds for that job.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::logs::LogQuery;
use crate::wire::{JobSpec, QueueQuota, ShareHierarchy};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "body")]
pub enum Command {
    /// Run this job here; `epoch` fences every earlier dispatch of it.
    Dispatch {
        job: Box<JobSpec>,
        epoch: u64,
        /// The answer deadline, ms since the Unix epoch: the control plane gives the dispatch
        /// up unless the agent's `Scheduled` report was appended to the event stream before it
        /// (the entry id's time, Redis's clock, decides for both sides). The agent launches
        /// nothing of the job until it knows its report made it (DESIGN.md invariant 2).
        /// Absent from older control planes: then no deadline binds the agent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer_by_ms: Option<i64>,
    },
    Cancel {
        job: u64,
        epoch: u64,
    },
    /// Preemption: stop the job after `grace_s` seconds; it is requeued by the api.
    Evict {
        job: u64,
        grace_s: u32,
        epoch: u64,
        /// The job the eviction makes room for: the agent keeps the freed nodes for it (older
        /// agents ignore the field, newer ones accept its absence).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hold: Option<EvictionHold>,
    },
    /// Queue weights and quotas the local scheduler should use, by queue name (by
    /// `<project>/<queue>` with a hierarchy). Each replaces the last one whole.
    SetQueues {
        weights: BTreeMap<String, f64>,
        quotas: BTreeMap<String, QueueQuota>,
        /// Per queue, its over-quota weight in node pools where it differs from `weights`.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        pool_weights: BTreeMap<String, BTreeMap<String, f64>>,
        /// Tenants and projects above the queues (then keyed `<project>/<queue>`); absent from
        /// older control planes: the queues are one flat level.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hierarchy: Option<ShareHierarchy>,
    },
    /// Send a Snapshot of every job (and the inventory): the control plane's view of this
    /// cluster went stale (it was silent past the loss timeout and its jobs are `unknown`).
    Resync {
        reason: String,
    },
    /// The nodes an operator cordoned on this cluster: the local scheduler places nothing new
    /// on them (what runs there stays). Replaces the last set whole; absent, none.
    CordonNodes {
        nodes: Vec<String>,
    },
    /// Read a replica's output and answer with a `logs::LogReply` on `keys::log_reply(cluster,
    /// request)`. Changes nothing, so it is not fenced by an epoch.
    ReadLogs {
        /// The caller's unique id for this request (the reply's key).
        request: String,
        job: u64,
        query: LogQuery,
    },
}

/// Capacity an eviction frees, kept for the job it was made for until that job starts here or
/// `ttl_s` passes (it may go elsewhere, or never come).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvictionHold {
    pub job: u64,
    pub ttl_s: u32,
}

impl Command {
    pub const KINDS: &'static [&'static str] =
        &["Dispatch", "Cancel", "Evict", "SetQueues", "Resync", "ReadLogs", "CordonNodes"];

    pub fn kind(&self) -> &'static str {
        match self {
            Command::Dispatch { .. } => "Dispatch",
            Command::Cancel { .. } => "Cancel",
            Command::Evict { .. } => "Evict",
            Command::SetQueues { .. } => "SetQueues",
            Command::Resync { .. } => "Resync",
            Command::ReadLogs { .. } => "ReadLogs",
            Command::CordonNodes { .. } => "CordonNodes",
        }
    }

    /// The job and epoch a command fences on, if it concerns one job.
    pub fn job_epoch(&self) -> Option<(u64, u64)> {
        match self {
            Command::Dispatch { job, epoch, .. } => Some((job.id, *epoch)),
            Command::Cancel { job, epoch } | Command::Evict { job, epoch, .. } => Some((*job, *epoch)),
            Command::SetQueues { .. }
            | Command::Resync { .. }
            | Command::ReadLogs { .. }
            | Command::CordonNodes { .. } => None,
        }
    }
}
