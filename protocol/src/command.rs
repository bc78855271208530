//! Commands: api -> agent on `grus:{cluster}:cmd`.
//!
//! Every command that concerns a job carries the dispatch epoch (invariant 2): the agent
//! refuses a command whose epoch is older than the one it holds for that job.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::wire::{JobSpec, QueueQuota};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "body")]
pub enum Command {
    /// Run this job here; `epoch` fences every earlier dispatch of it.
    Dispatch {
        job: Box<JobSpec>,
        epoch: u64,
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
    },
    /// Queue weights and quotas the local scheduler should use, by queue name.
    SetQueues {
        weights: BTreeMap<String, f64>,
        quotas: BTreeMap<String, QueueQuota>,
    },
    /// Send a Snapshot of every job (and the inventory): the control plane's view of this
    /// cluster went stale (it was silent past the loss timeout and its jobs are `unknown`).
    Resync {
        reason: String,
    },
}

impl Command {
    pub const KINDS: &'static [&'static str] = &["Dispatch", "Cancel", "Evict", "SetQueues", "Resync"];

    pub fn kind(&self) -> &'static str {
        match self {
            Command::Dispatch { .. } => "Dispatch",
            Command::Cancel { .. } => "Cancel",
            Command::Evict { .. } => "Evict",
            Command::SetQueues { .. } => "SetQueues",
            Command::Resync { .. } => "Resync",
        }
    }

    /// The job and epoch a command fences on, if it concerns one job.
    pub fn job_epoch(&self) -> Option<(u64, u64)> {
        match self {
            Command::Dispatch { job, epoch } => Some((job.id, *epoch)),
            Command::Cancel { job, epoch } | Command::Evict { job, epoch, .. } => Some((*job, *epoch)),
            Command::SetQueues { .. } | Command::Resync { .. } => None,
        }
    }
}
