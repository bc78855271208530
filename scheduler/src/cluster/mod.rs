//! The cluster model: nodes ([`node`]) and the allocations on them, with the capacity index
//! ([`index`]) that placement reads.
//!
//! `Cluster` is the only owner of usage counters. Every change goes through
//! [`Cluster::allocate`] / [`Cluster::release`], which check invariant 4 (a device never holds
//! more than 1000 milli; a whole GPU is exclusive because it takes all 1000) and keep the
//! [`CapacityIndex`] in step, so placement never scans every node.

pub mod index;
mod node;

use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

pub use index::CapacityIndex;
pub use node::{
    Gpu, GpuSpec, LiveUtilization, MigGpu, Node, NodeId, NodeSpec, PoolId, RackId, Taint, TaintEffect, Toleration,
};

use crate::mig::MigSlot;
use crate::resources::{Milli, ModelId, ModelSet, ModelTable, TooManyModels, MILLI_PER_GPU};

/// One device's part of a replica's allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceShare {
    /// Index of the device on its node.
    pub gpu: u8,
    pub milli: Milli,
    pub memory_mib: u64,
    /// The MIG instance it holds, on a GPU in MIG mode (`milli` is then the instance's
    /// equivalent, [`crate::mig::milli_of`]).
    pub mig: Option<MigSlot>,
}

impl DeviceShare {
    /// A whole GPU or a share of one, outside MIG.
    pub fn plain(gpu: u8, milli: Milli, memory_mib: u64) -> DeviceShare {
        DeviceShare { gpu, milli, memory_mib, mig: None }
    }
}

/// Everything one replica holds on one node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ReplicaAllocation {
    pub node: NodeId,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub devices: Vec<DeviceShare>,
}

impl ReplicaAllocation {
    pub fn gpu_milli(&self) -> u64 {
        self.devices.iter().map(|d| d.milli as u64).sum()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AllocError {
    #[error("node {0:?} does not exist")]
    UnknownNode(NodeId),
    #[error("node {node:?} has no GPU {gpu}")]
    UnknownGpu { node: NodeId, gpu: u8 },
    #[error("node {0:?} is unhealthy")]
    UnhealthyNode(NodeId),
    #[error("GPU {gpu} on node {node:?} is unhealthy")]
    UnhealthyGpu { node: NodeId, gpu: u8 },
    #[error("node {node:?} lacks CPU or memory (or pod slots) for the replica")]
    HostOverflow { node: NodeId },
    #[error("GPU {gpu} on node {node:?} would hold {would_hold} milli (> 1000)")]
    GpuOverflow { node: NodeId, gpu: u8, would_hold: Milli },
    #[error("GPU {gpu} on node {node:?} lacks the requested GPU memory")]
    GpuMemoryOverflow { node: NodeId, gpu: u8 },
    #[error("a device share must be 1..=1000 milli and name each GPU once")]
    BadShare,
    #[error("GPU {gpu} on node {node:?} is in MIG mode and serves MIG instances only")]
    MigOnly { node: NodeId, gpu: u8 },
    #[error("GPU {gpu} on node {node:?} cannot hold this MIG instance (not in MIG mode, no such profile at that position, or its slices are taken)")]
    MigSlot { node: NodeId, gpu: u8 },
    #[error("release of more than is allocated on node {0:?}")]
    ReleaseUnderflow(NodeId),
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ClusterError {
    #[error(transparent)]
    TooManyModels(#[from] TooManyModels),
    #[error("node `{0}` has more than 255 GPUs")]
    TooManyGpus(String),
    #[error("node name `{0}` is used twice")]
    DuplicateNode(String),
    #[error("more than {} node pools", u16::MAX)]
    TooManyPools,
}

/// Source of node stamps: one counter for the process, so that a stamp is never reused.
static NEXT_STAMP: AtomicU64 = AtomicU64::new(1);

/// A block of `n` stamps never handed out before; returns the first.
fn fresh_stamps(n: usize) -> u64 {
    NEXT_STAMP.fetch_add(n as u64, AtomicOrdering::Relaxed)
}

/// Nodes, devices, their usage, and the capacity index over them.
#[derive(Clone, Debug)]
pub struct Cluster {
    models: ModelTable,
    racks: Vec<String>,
    /// Pool names by [`PoolId`], sorted.
    pools: Vec<String>,
    nodes: Vec<Node>,
    /// Per node, the stamp of its current state (see [`Cluster::node_stamp`]).
    stamps: Vec<u64>,
    index: CapacityIndex,
    /// Nodes with a GPU in MIG mode, in id order: where a MIG request's candidates come from
    /// (the index lists whole and milli capacity only).
    mig_nodes: Vec<NodeId>,
    gpu_capacity_milli: u64,
    gpu_used_milli: u64,
    /// GPUs per model ([`ModelId`] order), healthy or not: the fleet's fixed capacity by model.
    model_gpus: Vec<u32>,
}

impl Cluster {
    pub fn new(specs: Vec<NodeSpec>) -> Result<Cluster, ClusterError> {
        let mut models = ModelTable::default();
        let mut racks: Vec<String> = Vec::new();
        let pools: Vec<String> = specs
            .iter()
            .filter_map(|s| s.pool.clone())
            .collect::<std::collections::BTreeSet<String>>()
            .into_iter()
            .collect();
        if pools.len() > u16::MAX as usize {
            return Err(ClusterError::TooManyPools);
        }
        let mut nodes = Vec::with_capacity(specs.len());
        let mut names = std::collections::HashSet::new();
        for (i, spec) in specs.into_iter().enumerate() {
            if !names.insert(spec.name.clone()) {
                return Err(ClusterError::DuplicateNode(spec.name));
            }
            if spec.gpus.len() > u8::MAX as usize {
                return Err(ClusterError::TooManyGpus(spec.name));
            }
            let rack = spec.rack.map(|r| match racks.iter().position(|x| *x == r) {
                Some(p) => RackId(p as u32),
                None => {
                    racks.push(r);
                    RackId(racks.len() as u32 - 1)
                }
            });
            let mut gpus = Vec::with_capacity(spec.gpus.len());
            for g in spec.gpus {
                gpus.push(Gpu {
                    model: models.intern(&g.model)?,
                    memory_mib: g.memory_mib,
                    numa: g.numa,
                    nvlink_group: g.nvlink_group,
                    healthy: g.healthy,
                    used_milli: 0,
                    used_memory_mib: 0,
                    live: None,
                    mig: crate::mig::profiles_of(&g.model)
                        .filter(|_| g.mig)
                        .map(|profiles| MigGpu { profiles, layout: Default::default() }),
                });
            }
            nodes.push(Node {
                id: NodeId(i as u32),
                name: spec.name,
                labels: spec.labels,
                taints: spec.taints,
                rack,
                pool: spec.pool.map(|p| PoolId(pools.binary_search(&p).expect("collected above") as u16)),
                cpu_milli: spec.cpu_milli,
                memory_mib: spec.memory_mib,
                max_pods: spec.max_pods,
                healthy: spec.healthy,
                gpus,
                cpu_used: 0,
                memory_used: 0,
                pods: 0,
            });
        }
        let gpu_capacity_milli = nodes.iter().map(|n| n.gpus.len() as u64 * MILLI_PER_GPU as u64).sum();
        let index = CapacityIndex::build(models.len(), &nodes);
        let first = fresh_stamps(nodes.len());
        let stamps = (first..first + nodes.len() as u64).collect();
        let mig_nodes = nodes.iter().filter(|n| n.gpus.iter().any(|g| g.mig.is_some())).map(|n| n.id).collect();
        let mut model_gpus = vec![0u32; models.len()];
        for g in nodes.iter().flat_map(|n| &n.gpus) {
            model_gpus[g.model.0 as usize] += 1;
        }
        Ok(Cluster {
            models,
            racks,
            pools,
            nodes,
            stamps,
            index,
            mig_nodes,
            gpu_capacity_milli,
            gpu_used_milli: 0,
            model_gpus,
        })
    }

    pub fn models(&self) -> &ModelTable {
        &self.models
    }

    /// GPUs of `model` in the fleet, healthy or not.
    pub fn model_gpus(&self, model: ModelId) -> u32 {
        self.model_gpus.get(model.0 as usize).copied().unwrap_or(0)
    }

    /// GPUs in the fleet whose model `models` allows.
    pub fn gpus_allowed(&self, models: ModelSet) -> u64 {
        if models.is_any() {
            return self.gpu_capacity_milli / MILLI_PER_GPU as u64;
        }
        models.iter().map(|m| self.model_gpus(m) as u64).sum()
    }

    pub fn rack_name(&self, rack: RackId) -> &str {
        &self.racks[rack.0 as usize]
    }

    pub fn rack_count(&self) -> usize {
        self.racks.len()
    }

    /// The pool of this name, if any node belongs to it.
    pub fn pool_id(&self, name: &str) -> Option<PoolId> {
        self.pools.binary_search_by(|p| p.as_str().cmp(name)).ok().map(|i| PoolId(i as u16))
    }

    pub fn pool_name(&self, pool: PoolId) -> &str {
        &self.pools[pool.0 as usize]
    }

    /// Every pool some node belongs to, in name order.
    pub fn pool_ids(&self) -> impl Iterator<Item = PoolId> {
        (0..self.pools.len()).map(|i| PoolId(i as u16))
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    pub fn index(&self) -> &CapacityIndex {
        &self.index
    }

    /// Nodes with a GPU in MIG mode, in id order.
    pub fn mig_nodes(&self) -> &[NodeId] {
        &self.mig_nodes
    }

    /// A version of the node's state, unique in the process: every change to the node
    /// (allocate, release, health, live metrics) gives it a stamp never used before, by any
    /// cluster. Equal stamps mean equal node states, also across copies of a cluster, which
    /// is what lets scores be cached by stamp (see `score::ScoreMemo`). The stamps carry no
    /// meaning beyond identity: decisions never depend on their values.
    pub fn node_stamp(&self, id: NodeId) -> u64 {
        self.stamps[id.index()]
    }

    fn touch(&mut self, id: NodeId) {
        self.stamps[id.index()] = fresh_stamps(1);
    }

    /// Capacity of every device, healthy or not, in milli.
    pub fn gpu_capacity_milli(&self) -> u64 {
        self.gpu_capacity_milli
    }

    pub fn gpu_used_milli(&self) -> u64 {
        self.gpu_used_milli
    }

    /// Applies a replica's allocation, or changes nothing and says why it cannot.
    pub fn allocate(&mut self, a: &ReplicaAllocation) -> Result<(), AllocError> {
        let node = self.nodes.get(a.node.index()).ok_or(AllocError::UnknownNode(a.node))?;
        if !node.healthy {
            return Err(AllocError::UnhealthyNode(a.node));
        }
        if node.cpu_free() < a.cpu_milli || node.memory_free() < a.memory_mib || node.pods >= node.max_pods {
            return Err(AllocError::HostOverflow { node: a.node });
        }
        check_shares(a)?;
        for d in &a.devices {
            let gpu = node.gpus.get(d.gpu as usize).ok_or(AllocError::UnknownGpu { node: a.node, gpu: d.gpu })?;
            if !gpu.healthy {
                return Err(AllocError::UnhealthyGpu { node: a.node, gpu: d.gpu });
            }
            match (d.mig, &gpu.mig) {
                (None, Some(_)) => return Err(AllocError::MigOnly { node: a.node, gpu: d.gpu }),
                (Some(slot), mig) => {
                    if !mig.is_some_and(|m| slot.profile_in(m.profiles).is_some() && m.layout.can_take(slot)) {
                        return Err(AllocError::MigSlot { node: a.node, gpu: d.gpu });
                    }
                }
                (None, None) => {}
            }
            if gpu.used_milli + d.milli > MILLI_PER_GPU {
                return Err(AllocError::GpuOverflow { node: a.node, gpu: d.gpu, would_hold: gpu.used_milli + d.milli });
            }
            if gpu.free_memory_mib() < d.memory_mib {
                return Err(AllocError::GpuMemoryOverflow { node: a.node, gpu: d.gpu });
            }
        }
        let node = &mut self.nodes[a.node.index()];
        node.cpu_used += a.cpu_milli;
        node.memory_used += a.memory_mib;
        node.pods += 1;
        for d in &a.devices {
            let gpu = &mut node.gpus[d.gpu as usize];
            gpu.used_milli += d.milli;
            gpu.used_memory_mib += d.memory_mib;
            if let (Some(slot), Some(mig)) = (d.mig, gpu.mig.as_mut()) {
                mig.layout = mig.layout.take(slot);
            }
        }
        self.gpu_used_milli += a.gpu_milli();
        self.index.update_node(&self.nodes[a.node.index()]);
        self.touch(a.node);
        Ok(())
    }

    /// Returns a replica's allocation, or changes nothing if it was not (all) there.
    pub fn release(&mut self, a: &ReplicaAllocation) -> Result<(), AllocError> {
        let node = self.nodes.get(a.node.index()).ok_or(AllocError::UnknownNode(a.node))?;
        check_shares(a)?;
        if node.cpu_used < a.cpu_milli || node.memory_used < a.memory_mib || node.pods == 0 {
            return Err(AllocError::ReleaseUnderflow(a.node));
        }
        for d in &a.devices {
            let gpu = node.gpus.get(d.gpu as usize).ok_or(AllocError::UnknownGpu { node: a.node, gpu: d.gpu })?;
            if gpu.used_milli < d.milli || gpu.used_memory_mib < d.memory_mib {
                return Err(AllocError::ReleaseUnderflow(a.node));
            }
            if d.mig.is_some_and(|slot| !gpu.mig.is_some_and(|m| m.layout.holds(slot))) {
                return Err(AllocError::ReleaseUnderflow(a.node));
            }
        }
        let node = &mut self.nodes[a.node.index()];
        node.cpu_used -= a.cpu_milli;
        node.memory_used -= a.memory_mib;
        node.pods -= 1;
        for d in &a.devices {
            let gpu = &mut node.gpus[d.gpu as usize];
            gpu.used_milli -= d.milli;
            gpu.used_memory_mib -= d.memory_mib;
            if let (Some(slot), Some(mig)) = (d.mig, gpu.mig.as_mut()) {
                mig.layout = mig.layout.give_back(slot);
            }
        }
        self.gpu_used_milli -= a.gpu_milli();
        self.index.update_node(&self.nodes[a.node.index()]);
        self.touch(a.node);
        Ok(())
    }

    pub fn set_node_health(&mut self, node: NodeId, healthy: bool) {
        self.nodes[node.index()].healthy = healthy;
        self.index.update_node(&self.nodes[node.index()]);
        self.touch(node);
    }

    pub fn set_gpu_health(&mut self, node: NodeId, gpu: u8, healthy: bool) {
        self.nodes[node.index()].gpus[gpu as usize].healthy = healthy;
        self.index.update_node(&self.nodes[node.index()]);
        self.touch(node);
    }

    /// Records the profiler's latest reading for a device (`None`: no metrics).
    pub fn set_live_utilization(&mut self, node: NodeId, gpu: u8, live: Option<LiveUtilization>) {
        self.nodes[node.index()].gpus[gpu as usize].live = live;
        self.touch(node);
    }
}

fn check_shares(a: &ReplicaAllocation) -> Result<(), AllocError> {
    for (i, d) in a.devices.iter().enumerate() {
        if d.milli == 0 || d.milli > MILLI_PER_GPU || a.devices[..i].iter().any(|e| e.gpu == d.gpu) {
            return Err(AllocError::BadShare);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_nodes() -> Cluster {
        Cluster::new(vec![NodeSpec::new("a", 8000, 65536, 2, "T4"), NodeSpec::new("b", 8000, 65536, 4, "A100")])
            .unwrap()
    }

    fn share(node: u32, gpu: u8, milli: Milli) -> ReplicaAllocation {
        ReplicaAllocation {
            node: NodeId(node),
            cpu_milli: 1000,
            memory_mib: 1024,
            devices: vec![DeviceShare::plain(gpu, milli, 0)],
        }
    }

    #[test]
    fn shares_fill_a_device_to_exactly_1000_and_no_further() {
        let mut c = two_nodes();
        c.allocate(&share(0, 0, 600)).unwrap();
        c.allocate(&share(0, 0, 400)).unwrap();
        let before = c.node(NodeId(0)).clone();
        assert_eq!(
            c.allocate(&share(0, 0, 1)),
            Err(AllocError::GpuOverflow { node: NodeId(0), gpu: 0, would_hold: 1001 })
        );
        assert_eq!(*c.node(NodeId(0)), before, "a refused allocation changes nothing");
        assert_eq!(c.gpu_used_milli(), 1000);
    }

    #[test]
    fn release_restores_and_refuses_underflow() {
        let mut c = two_nodes();
        let a = share(1, 2, 1000);
        c.allocate(&a).unwrap();
        c.release(&a).unwrap();
        assert_eq!(c.release(&a), Err(AllocError::ReleaseUnderflow(NodeId(1))));
        assert_eq!(c.gpu_used_milli(), 0);
        assert_eq!(c.node(NodeId(1)).whole_free_gpus(), 4);
    }

    #[test]
    fn unhealthy_devices_take_nothing() {
        let mut c = two_nodes();
        c.set_gpu_health(NodeId(0), 1, false);
        assert_eq!(c.allocate(&share(0, 1, 100)), Err(AllocError::UnhealthyGpu { node: NodeId(0), gpu: 1 }));
        c.set_node_health(NodeId(1), false);
        assert_eq!(c.allocate(&share(1, 0, 100)), Err(AllocError::UnhealthyNode(NodeId(1))));
    }

    #[test]
    fn every_change_to_a_node_gives_it_a_new_stamp_and_copies_share_stamps() {
        let mut c = two_nodes();
        let (a, b) = (NodeId(0), NodeId(1));
        let mut seen = vec![c.node_stamp(a), c.node_stamp(b)];
        let changed = |c: &Cluster, seen: &mut Vec<u64>| {
            let s = c.node_stamp(a);
            assert!(!seen.contains(&s), "stamp {s} reused");
            seen.push(s);
        };
        let x = share(0, 0, 300);
        c.allocate(&x).unwrap();
        changed(&c, &mut seen);
        let copy = c.clone();
        assert_eq!(copy.node_stamp(a), c.node_stamp(a), "a copy is the same state");
        c.release(&x).unwrap();
        changed(&c, &mut seen);
        c.set_live_utilization(a, 0, Some(LiveUtilization { busy_pct: 50.0, memory_used_mib: 0 }));
        changed(&c, &mut seen);
        c.set_gpu_health(a, 1, false);
        changed(&c, &mut seen);
        c.set_node_health(a, false);
        changed(&c, &mut seen);
        let before = c.node_stamp(a);
        assert!(c.allocate(&x).is_err());
        assert_eq!(c.node_stamp(a), before, "a refused allocation changes nothing");
        assert_eq!(c.node_stamp(b), seen[1], "other nodes keep theirs");
        let other = two_nodes();
        assert_ne!(other.node_stamp(a), copy.node_stamp(a), "another cluster never shares a stamp");
    }

    #[test]
    fn a_device_named_twice_is_refused() {
        let mut c = two_nodes();
        let mut a = share(1, 0, 500);
        a.devices.push(DeviceShare::plain(0, 500, 0));
        assert_eq!(c.allocate(&a), Err(AllocError::BadShare));
    }
}
