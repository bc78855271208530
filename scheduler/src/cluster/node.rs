//! A node of the cluster model: CPU, memory, labels, taints, a rack and a pool, holding GPU devices
//! with a model, memory, NUMA node, NVLink group, health and MIG mode.

use std::collections::BTreeMap;

use crate::mig::{MigLayout, MigProfile};
use crate::resources::{Milli, ModelId, MILLI_PER_GPU};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RackId(pub u32);

/// A node pool of the cluster, interned: see [`crate::pool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PoolId(pub u16);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    pub value: String,
    pub effect: TaintEffect,
}

/// A Kubernetes-style toleration: `value: None` is the `Exists` operator; `effect: None`
/// tolerates every effect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toleration {
    pub key: String,
    pub value: Option<String>,
    pub effect: Option<TaintEffect>,
}

impl Toleration {
    pub fn tolerates(&self, taint: &Taint) -> bool {
        self.key == taint.key
            && self.value.as_ref().is_none_or(|v| *v == taint.value)
            && self.effect.is_none_or(|e| e == taint.effect)
    }
}

/// What the caller (the agent's profiler) last measured on a device.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LiveUtilization {
    /// Share of time a kernel was running, 0..=100.
    pub busy_pct: f32,
    pub memory_used_mib: u64,
}

/// Static description of a GPU, as a backend reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuSpec {
    pub model: String,
    pub memory_mib: u64,
    pub numa: u8,
    pub nvlink_group: u8,
    pub healthy: bool,
    /// In MIG mode: it serves MIG instances only (of its model's profiles), never whole or
    /// milli shares. Ignored for a model without MIG.
    pub mig: bool,
}

impl GpuSpec {
    pub fn new(model: &str, memory_mib: u64) -> GpuSpec {
        GpuSpec { model: model.to_string(), memory_mib, numa: 0, nvlink_group: 0, healthy: true, mig: false }
    }
}

/// A GPU in MIG mode: its model's profiles and the instances replicas hold on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MigGpu {
    pub profiles: &'static [MigProfile],
    pub layout: MigLayout,
}

/// Static description of a node, as a backend reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub rack: Option<String>,
    /// The node pool it belongs to (the agent assigns it from the pools' label selectors);
    /// `None` when the cluster has no pools.
    pub pool: Option<String>,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub max_pods: u32,
    pub healthy: bool,
    pub gpus: Vec<GpuSpec>,
}

impl NodeSpec {
    /// A healthy node with `gpus` identical devices in one NVLink group.
    pub fn new(name: &str, cpu_milli: u64, memory_mib: u64, gpus: usize, model: &str) -> NodeSpec {
        NodeSpec {
            name: name.to_string(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            rack: None,
            pool: None,
            cpu_milli,
            memory_mib,
            max_pods: 1001,
            healthy: true,
            gpus: (0..gpus).map(|_| GpuSpec::new(model, 80 * 1024)).collect(),
        }
    }
}

/// One GPU device and what is allocated on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Gpu {
    pub model: ModelId,
    pub memory_mib: u64,
    pub numa: u8,
    pub nvlink_group: u8,
    pub healthy: bool,
    pub used_milli: Milli,
    pub used_memory_mib: u64,
    pub live: Option<LiveUtilization>,
    /// `Some` in MIG mode.
    pub mig: Option<MigGpu>,
}

impl Gpu {
    /// Milli still allocatable as whole GPUs or shares; an unhealthy device, or one in MIG
    /// mode (it serves MIG instances only), offers none.
    pub fn free_milli(&self) -> Milli {
        if self.healthy && self.mig.is_none() {
            MILLI_PER_GPU - self.used_milli
        } else {
            0
        }
    }

    pub fn is_whole_free(&self) -> bool {
        self.healthy && self.used_milli == 0 && self.mig.is_none()
    }

    /// Whether an instance of `profile` fits on this GPU now (in MIG mode, healthy, a model
    /// with that profile, a free valid position): [`Gpu::mig_start`] without choosing where.
    pub fn mig_fits(&self, profile: &str) -> bool {
        self.mig.as_ref().filter(|_| self.healthy).is_some_and(|mig| {
            crate::mig::profile(mig.profiles, profile).is_some_and(|p| mig.layout.first_free(p).is_some())
        })
    }

    /// Where an instance of `profile` would go on this GPU now: the position that keeps the
    /// most room for large profiles; `None` when it is not in MIG mode, unhealthy, of a model
    /// without that profile, or has no valid free position.
    pub fn mig_start(&self, profile: &str) -> Option<(&'static MigProfile, u8)> {
        let mig = self.mig.as_ref().filter(|_| self.healthy)?;
        let p = crate::mig::profile(mig.profiles, profile)?;
        mig.layout.best_start(mig.profiles, p).map(|s| (p, s))
    }

    pub fn free_memory_mib(&self) -> u64 {
        self.memory_mib.saturating_sub(self.used_memory_mib)
    }
}

/// A node and its usage.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub id: NodeId,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub rack: Option<RackId>,
    pub pool: Option<PoolId>,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub max_pods: u32,
    pub healthy: bool,
    pub gpus: Vec<Gpu>,
    pub cpu_used: u64,
    pub memory_used: u64,
    pub pods: u32,
}

impl Node {
    pub fn cpu_free(&self) -> u64 {
        self.cpu_milli - self.cpu_used
    }

    pub fn memory_free(&self) -> u64 {
        self.memory_mib - self.memory_used
    }

    /// Sum of free milli over healthy devices.
    pub fn gpu_free_milli(&self) -> u64 {
        self.gpus.iter().map(|g| g.free_milli() as u64).sum()
    }

    pub fn whole_free_gpus(&self) -> usize {
        self.gpus.iter().filter(|g| g.is_whole_free()).count()
    }

    pub fn gpu_count(&self) -> usize {
        self.gpus.len()
    }
}
