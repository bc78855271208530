//! Why a job was not placed: per filter stage, how many nodes each reason rejected; and for
//! preemption, why no plan was found. Structured so that the api can render it per cluster.

use std::collections::BTreeMap;
use std::fmt;

/// The first filter stage a node failed for a replica, in the order the filters run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FilterReason {
    /// The node is outside the pool being tried.
    OtherPool,
    NodeUnhealthy,
    NodeSelectorMismatch,
    UntoleratedTaint,
    PodSlots,
    NoGpus,
    GpuModel,
    NotEnoughWholeGpus,
    NoDeviceWithShare,
    /// No GPU in MIG mode of an allowed model has a free valid position for the profile.
    NoMigSlot,
    GpuMemory,
    /// Every device with room for the share already runs work measured so busy that the
    /// share's expected load would take it over the sharing limit (interference-aware sharing).
    Interference,
    Cpu,
    Memory,
    /// The node passed every filter but the gang's topology scope kept it out.
    Topology,
    /// The node is held for a waiting job (a preemptor, or a blocked gang this job would delay).
    Reserved,
}

impl FilterReason {
    pub fn describe(self) -> &'static str {
        match self {
            FilterReason::OtherPool => "are in another node pool",
            FilterReason::NodeUnhealthy => "unhealthy",
            FilterReason::NodeSelectorMismatch => "do not match the node selector",
            FilterReason::UntoleratedTaint => "have an untolerated taint",
            FilterReason::PodSlots => "have no pod slots left",
            FilterReason::NoGpus => "have no GPUs",
            FilterReason::GpuModel => "lack an allowed GPU model",
            FilterReason::NotEnoughWholeGpus => "have too few free whole GPUs",
            FilterReason::NoDeviceWithShare => "have no GPU with enough free share",
            FilterReason::NoMigSlot => "have no MIG-mode GPU with room for the profile",
            FilterReason::GpuMemory => "lack GPU memory",
            FilterReason::Interference => {
                "have room for the share only on GPUs whose measured load would then exceed the sharing limit"
            }
            FilterReason::Cpu => "lack CPU",
            FilterReason::Memory => "lack memory",
            FilterReason::Topology => "cannot hold the gang within its topology scope",
            FilterReason::Reserved => "are reserved for a waiting job",
        }
    }
}

/// Node counts per first failing filter, for one replica shape.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeRejections {
    pub counts: BTreeMap<FilterReason, u32>,
}

impl NodeRejections {
    pub fn add(&mut self, reason: FilterReason) {
        *self.counts.entry(reason).or_default() += 1;
    }

    pub fn total(&self) -> u32 {
        self.counts.values().sum()
    }
}

impl fmt::Display for NodeRejections {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (reason, n) in &self.counts {
            if !first {
                f.write_str("; ")?;
            }
            first = false;
            write!(f, "{n} node{} {}", if *n == 1 { "" } else { "s" }, reason.describe())?;
        }
        Ok(())
    }
}

/// Why one job is not placed in this cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unplaced {
    /// A replica of `task` fits on no node; `placed` gang members did fit before it.
    NoFit { task: String, placed: u32, needed: u32, nodes: NodeRejections },
    /// The job names GPU models this cluster does not have.
    UnknownGpuModel { task: String, models: Vec<String> },
    /// The job names node pools this cluster does not have.
    UnknownPool { pools: Vec<String> },
    /// The job names node pools and fits in none of them: why, per pool, in its order.
    InPools { pools: Vec<(String, Box<Unplaced>)> },
    /// The queue (or an ancestor) would exceed its limit.
    QueueLimit { queue: String, resource: String },
    /// Waiting behind a higher-ranked job that holds a reservation.
    Reserved { behind: u64 },
    /// A preemption is under way for this job; it waits for the victims' grace period.
    AwaitingEviction { victims: Vec<u64> },
    /// Free capacity is enough but scattered: these running jobs are being moved (they fit
    /// again at once elsewhere) to free the nodes the gang needs (consolidation).
    AwaitingMoves { moved: Vec<u64> },
    /// The job does not fit and no preemption plan exists.
    NoPreemptionPlan { fit: Box<Unplaced>, why: PreemptionFailure },
    /// The job is malformed (fails `Job::validate`); it will never be placed as it is.
    Invalid { reason: String },
}

impl Unplaced {
    /// Whether the job failed for room on nodes (in some pool): what preemption, consolidation
    /// and reservations may help with.
    pub fn is_no_fit(&self) -> bool {
        match self {
            Unplaced::NoFit { .. } => true,
            Unplaced::InPools { pools } => pools.iter().any(|(_, u)| u.is_no_fit()),
            _ => false,
        }
    }

    /// Some node has room for it by the books and is kept from it only by the sharing limit
    /// ([`FilterReason::Interference`]): it waits for that device's load to fall, and making
    /// room (preemption, moves) would not help it.
    pub fn waits_for_calm(&self) -> bool {
        match self {
            Unplaced::NoFit { nodes, .. } => nodes.counts.contains_key(&FilterReason::Interference),
            Unplaced::InPools { pools } => pools.iter().any(|(_, u)| u.waits_for_calm()),
            _ => false,
        }
    }
}

/// Why the preemption planner found no victims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreemptionFailure {
    /// The job is not entitled: over its queue's guarantee and no lower priority work exists.
    NotEntitled,
    /// The job may not preempt other work at all (its tenant's rights).
    NotAllowed,
    /// Every candidate victim is protected (priority, guarantee, min runtime or privileged).
    AllCandidatesProtected { by_priority: u32, by_guarantee: u32, by_min_runtime: u32, privileged: u32 },
    /// Even evicting every eligible victim would not free a fitting place.
    InsufficientEvenIfAllEvicted,
}

impl fmt::Display for Unplaced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unplaced::NoFit { task, placed, needed, nodes } => {
                write!(f, "task {task}: {placed} of {needed} gang members placed; {nodes}")
            }
            Unplaced::UnknownGpuModel { task, models } => {
                write!(f, "task {task}: no node has any of the GPU models {}", models.join(", "))
            }
            Unplaced::UnknownPool { pools } => {
                write!(f, "no node of this cluster is in the node pool(s) {}", pools.join(", "))
            }
            Unplaced::InPools { pools } => {
                for (i, (pool, why)) in pools.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" | ")?;
                    }
                    write!(f, "pool {pool}: {why}")?;
                }
                Ok(())
            }
            Unplaced::QueueLimit { queue, resource } => write!(f, "queue {queue} at limit for {resource}"),
            Unplaced::Reserved { behind } => write!(f, "capacity is reserved for job {behind}"),
            Unplaced::AwaitingEviction { victims } => {
                write!(f, "waiting for {} preempted job(s) to leave their grace period", victims.len())
            }
            Unplaced::AwaitingMoves { moved } => {
                let jobs: Vec<String> = moved.iter().map(|j| format!("job {j}")).collect();
                write!(
                    f,
                    "free capacity is scattered: waiting while {} move(s) to other nodes to make room (consolidation)",
                    jobs.join(", ")
                )
            }
            Unplaced::Invalid { reason } => write!(f, "invalid job: {reason}"),
            Unplaced::NoPreemptionPlan { fit, why } => {
                write!(f, "{fit}; no preemption: ")?;
                match why {
                    PreemptionFailure::NotEntitled => f.write_str("the job is not entitled to preempt"),
                    PreemptionFailure::NotAllowed => {
                        f.write_str("its tenant may not preempt other work, so it waits for free capacity")
                    }
                    PreemptionFailure::AllCandidatesProtected { by_priority, by_guarantee, by_min_runtime, privileged } => write!(
                        f,
                        "candidates protected ({by_priority} by priority, {by_guarantee} by guarantee, {by_min_runtime} by minimum runtime, {privileged} privileged)"
                    ),
                    PreemptionFailure::InsufficientEvenIfAllEvicted => {
                        f.write_str("evicting every eligible victim would still not make room")
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejections_read_like_a_sentence() {
        let mut r = NodeRejections::default();
        r.add(FilterReason::GpuModel);
        r.add(FilterReason::GpuModel);
        r.add(FilterReason::NotEnoughWholeGpus);
        assert_eq!(
            r.to_string(),
            "2 nodes lack an allowed GPU model; 1 node has too few free whole GPUs".replace("has", "have")
        );
    }
}
