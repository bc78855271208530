//! The job model of DESIGN.md as the scheduler sees it: tasks with replicas and resources,
//! gang and elastic bounds, priority, preemptibility and placement constraints.
//!
//! Wire and database forms convert into these types at the boundary; this module has no serde.

use std::collections::BTreeMap;

use crate::cluster::Toleration;
use crate::resources::{Milli, MILLI_PER_GPU};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub u64);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QueueId(pub u32);

/// How closely the members of a gang must sit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TopologyScope {
    #[default]
    Any,
    /// Every member on one node.
    Node,
    /// Every member on one node, and all their GPUs inside one NVLink group.
    NvLink,
    /// Every member on nodes of one rack.
    Rack,
}

/// What one replica of a task needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    /// Whole GPUs, or 1 with `gpu_milli < 1000` for a fraction of one GPU.
    pub gpus: u32,
    /// Milli per GPU: 1000 for whole GPUs.
    pub gpu_milli: Milli,
    /// GPU memory per device; for a share, reserved on the device.
    pub gpu_memory_mib: Option<u64>,
    /// Allowed GPU models (any of); empty means any model.
    pub gpu_models: Vec<String>,
    /// A MIG instance of this profile (`1g.10gb`...) instead of whole GPUs or a share: then
    /// `gpus` is 1 and `gpu_milli` the profile's equivalent ([`crate::mig::milli_of`]), which
    /// is what quotas and fair share count.
    pub mig_profile: Option<String>,
    pub cpu_milli: u64,
    pub memory_mib: u64,
}

impl Resources {
    pub fn whole_gpus(gpus: u32, cpu_milli: u64, memory_mib: u64) -> Resources {
        Resources {
            gpus,
            gpu_milli: if gpus > 0 { MILLI_PER_GPU } else { 0 },
            cpu_milli,
            memory_mib,
            ..Resources::default()
        }
    }

    pub fn gpu_share(milli: Milli, cpu_milli: u64, memory_mib: u64) -> Resources {
        Resources { gpus: 1, gpu_milli: milli, cpu_milli, memory_mib, ..Resources::default() }
    }

    /// GPU milli one replica holds in total.
    pub fn total_gpu_milli(&self) -> u64 {
        self.gpus as u64 * self.gpu_milli as u64
    }

    pub fn is_fractional(&self) -> bool {
        self.gpus == 1 && self.gpu_milli < MILLI_PER_GPU && self.mig_profile.is_none()
    }

    /// One MIG instance of `profile` (a name [`crate::mig::known_profile`] knows).
    pub fn mig(profile: &str, cpu_milli: u64, memory_mib: u64) -> Resources {
        let milli = crate::mig::known_profile(profile).map_or(MILLI_PER_GPU, crate::mig::milli_of);
        Resources {
            gpus: 1,
            gpu_milli: milli,
            mig_profile: Some(profile.to_string()),
            cpu_milli,
            memory_mib,
            ..Resources::default()
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    pub name: String,
    pub replicas: u32,
    pub resources: Resources,
    pub topology: TopologyScope,
}

/// Replica-count bounds of an elastic job (a job with exactly one task).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elastic {
    pub min: u32,
    pub max: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub id: JobId,
    pub queue: QueueId,
    pub name: String,
    pub priority: i32,
    pub preemptible: bool,
    /// May have other work evicted to make room for it (its tenant's right); when not, it
    /// waits for free capacity.
    pub may_preempt: bool,
    /// Writes a checkpoint when asked before it is stopped, and resumes from it: consolidation
    /// may move it even when it is not preemptible (it loses no work).
    pub checkpoints: bool,
    pub tasks: Vec<Task>,
    /// Replicas that must be placed together before any starts; 0 means all of them.
    pub min_members: u32,
    pub elastic: Option<Elastic>,
    /// Submission time in seconds; older jobs go first among equals.
    pub submitted_at: u64,
    /// A running job is not evicted before it has run this long.
    pub min_runtime_s: u64,
    /// Upper bound on the run time, if known (max_runtime); backfill relies on it.
    pub max_runtime_s: Option<u64>,
    /// The run time its history predicts (p90), if any; backfill trusts it when there is no
    /// `max_runtime_s` ([`Job::expected_runtime_s`]).
    pub predicted_runtime_s: Option<u64>,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
    /// The node pools the job may use, in order of preference: its gang goes whole into the
    /// first that can take it (and admit it under the pool's quota). Empty: any node.
    pub pools: Vec<String>,
    /// Spread from its siblings (the other replicas of its inference service): it goes to a
    /// node none of them holds when it can, else wherever it fits. `None`: no spread.
    pub spread: Option<Spread>,
    /// An interactive workspace: served before batch work of its queue at the same priority,
    /// so a person's session does not wait behind the queue's backlog.
    pub interactive: bool,
}

/// A soft spread across nodes: the group's members avoid each other's nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spread {
    /// Names the group (members started in the same cycle avoid each other too).
    pub group: String,
    /// Nodes the group's members already hold.
    pub from: Vec<String>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JobError {
    #[error("a job needs at least one task")]
    NoTasks,
    #[error("task `{0}` needs at least one replica")]
    NoReplicas(String),
    #[error("task `{task}`: gpu_milli must be 1..=1000, got {milli}")]
    GpuMilliOutOfRange { task: String, milli: Milli },
    #[error("task `{0}`: a fraction of a GPU (gpu_milli < 1000) needs gpus = 1")]
    FractionOfSeveralGpus(String),
    #[error("task `{0}`: two tasks share this name")]
    DuplicateTask(String),
    #[error("min_members {min} exceeds the job's {replicas} replicas")]
    GangLargerThanJob { min: u32, replicas: u32 },
    #[error("task `{task}`: no supported GPU model has the MIG profile `{profile}`")]
    UnknownMigProfile { task: String, profile: String },
    #[error("task `{0}`: a MIG instance is one device (gpus = 1, gpu_milli its profile's equivalent)")]
    MigNotOneDevice(String),
    #[error("elastic bounds need 1 <= min <= max and exactly one task")]
    BadElastic,
}

impl Job {
    /// How long it may run, as backfill and reservations count it: a user-given maximum wins,
    /// else the run time its history predicts (p90); `None`: unknown (it never backfills).
    pub fn expected_runtime_s(&self) -> Option<u64> {
        self.max_runtime_s.or(self.predicted_runtime_s)
    }

    /// Its place among its queue's waiting jobs: higher priority first, then interactive
    /// work, then the older, then the lower id (a total order).
    pub fn queue_order(&self) -> (std::cmp::Reverse<i32>, bool, u64, JobId) {
        (std::cmp::Reverse(self.priority), !self.interactive, self.submitted_at, self.id)
    }

    /// A job of one task with default settings, for tests and benches.
    pub fn single(id: u64, queue: u32, replicas: u32, resources: Resources) -> Job {
        Job {
            id: JobId(id),
            queue: QueueId(queue),
            name: format!("job-{id}"),
            priority: 0,
            preemptible: true,
            may_preempt: true,
            checkpoints: false,
            tasks: vec![Task { name: "main".into(), replicas, resources, topology: TopologyScope::Any }],
            min_members: 0,
            elastic: None,
            submitted_at: id,
            min_runtime_s: 0,
            predicted_runtime_s: None,
            max_runtime_s: None,
            node_selector: BTreeMap::new(),
            tolerations: Vec::new(),
            pools: Vec::new(),
            spread: None,
            interactive: false,
        }
    }

    pub fn total_replicas(&self) -> u32 {
        self.tasks.iter().map(|t| t.replicas).sum()
    }

    /// Replicas that must be placed together: `min_members`, the elastic minimum, or all.
    pub fn gang_size(&self) -> u32 {
        match (self.elastic, self.min_members) {
            (Some(e), _) => e.min,
            (None, 0) => self.total_replicas(),
            (None, m) => m,
        }
    }

    pub fn validate(&self) -> Result<(), JobError> {
        if self.tasks.is_empty() {
            return Err(JobError::NoTasks);
        }
        for (i, t) in self.tasks.iter().enumerate() {
            if self.tasks[..i].iter().any(|u| u.name == t.name) {
                return Err(JobError::DuplicateTask(t.name.clone()));
            }
            if t.replicas == 0 {
                return Err(JobError::NoReplicas(t.name.clone()));
            }
            let r = &t.resources;
            if r.gpus > 0 && (r.gpu_milli == 0 || r.gpu_milli > MILLI_PER_GPU) {
                return Err(JobError::GpuMilliOutOfRange { task: t.name.clone(), milli: r.gpu_milli });
            }
            if r.gpus > 1 && r.gpu_milli < MILLI_PER_GPU {
                return Err(JobError::FractionOfSeveralGpus(t.name.clone()));
            }
            if let Some(name) = &r.mig_profile {
                let Some(profile) = crate::mig::known_profile(name) else {
                    return Err(JobError::UnknownMigProfile { task: t.name.clone(), profile: name.clone() });
                };
                if r.gpus != 1 || r.gpu_milli != crate::mig::milli_of(profile) {
                    return Err(JobError::MigNotOneDevice(t.name.clone()));
                }
            }
        }
        if let Some(e) = self.elastic {
            if e.min == 0 || e.min > e.max || self.tasks.len() != 1 {
                return Err(JobError::BadElastic);
            }
        } else if self.min_members > self.total_replicas() {
            return Err(JobError::GangLargerThanJob { min: self.min_members, replicas: self.total_replicas() });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_catches_each_malformed_shape() {
        let ok = Job::single(1, 0, 2, Resources::whole_gpus(8, 1000, 1024));
        assert_eq!(ok.validate(), Ok(()));
        let mut j = ok.clone();
        j.tasks[0].resources = Resources { gpus: 2, gpu_milli: 500, ..Resources::default() };
        assert_eq!(j.validate(), Err(JobError::FractionOfSeveralGpus("main".into())));
        let mut j = ok.clone();
        j.tasks[0].resources.gpu_milli = 1001;
        assert!(matches!(j.validate(), Err(JobError::GpuMilliOutOfRange { .. })));
        let mut j = ok.clone();
        j.min_members = 3;
        assert_eq!(j.validate(), Err(JobError::GangLargerThanJob { min: 3, replicas: 2 }));
        let mut j = ok.clone();
        j.elastic = Some(Elastic { min: 3, max: 2 });
        assert_eq!(j.validate(), Err(JobError::BadElastic));
        let mut j = ok;
        j.tasks.push(j.tasks[0].clone());
        assert_eq!(j.validate(), Err(JobError::DuplicateTask("main".into())));
    }
}
