//! What a snapshot must satisfy before a cycle runs over it.

use std::collections::BTreeSet;

use super::SchedulerInput;
use crate::cluster::NodeId;
use crate::job::JobId;

/// Why a snapshot cannot be scheduled.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum InputError {
    #[error("job {0:?} appears twice among the running and pending jobs")]
    DuplicateJob(JobId),
    #[error("job {job:?}: replica on node {node:?} names a node or GPU that does not exist")]
    UnknownPlace { job: JobId, node: NodeId },
    #[error("job {job:?}: replica of task #{task}, which the job does not have")]
    UnknownTask { job: JobId, task: usize },
    #[error("node {0:?}: the cluster's usage differs from the sum of the running replicas on it")]
    UsageMismatch(NodeId),
    #[error("capacity held for job {job:?} names node {node:?}, which does not exist")]
    UnknownHoldNode { job: JobId, node: NodeId },
}

impl SchedulerInput {
    /// Checks that every job appears once, that running replicas name existing nodes, devices
    /// and tasks, and that the cluster's usage is exactly that of the running replicas.
    pub fn validate(&self) -> Result<(), InputError> {
        let mut seen = BTreeSet::new();
        for id in self.running.iter().map(|r| r.job.id).chain(self.pending.iter().map(|j| j.id)) {
            if !seen.insert(id) {
                return Err(InputError::DuplicateJob(id));
            }
        }
        let nodes = self.cluster.nodes();
        for h in &self.holds {
            if let Some(&node) = h.nodes.iter().find(|n| n.index() >= nodes.len()) {
                return Err(InputError::UnknownHoldNode { job: h.job, node });
            }
        }
        // Per node: CPU, memory, pods, and milli per device.
        let mut sums: Vec<(u64, u64, u32, Vec<u64>)> = nodes.iter().map(|n| (0, 0, 0, vec![0; n.gpus.len()])).collect();
        for r in &self.running {
            for p in &r.replicas {
                let a = &p.allocation;
                if p.task >= r.job.tasks.len() {
                    return Err(InputError::UnknownTask { job: r.job.id, task: p.task });
                }
                let unknown = || InputError::UnknownPlace { job: r.job.id, node: a.node };
                let sum = sums.get_mut(a.node.index()).ok_or_else(unknown)?;
                sum.0 += a.cpu_milli;
                sum.1 += a.memory_mib;
                sum.2 += 1;
                for d in &a.devices {
                    *sum.3.get_mut(d.gpu as usize).ok_or_else(unknown)? += d.milli as u64;
                }
            }
        }
        for (node, (cpu, mem, pods, milli)) in nodes.iter().zip(sums) {
            let devices_agree = node.gpus.iter().zip(&milli).all(|(g, m)| g.used_milli as u64 == *m);
            if node.cpu_used != cpu || node.memory_used != mem || node.pods != pods || !devices_agree {
                return Err(InputError::UsageMismatch(node.id));
            }
        }
        Ok(())
    }
}
