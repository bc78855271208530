//! Incremental capacity index: which nodes can take a request, without scanning every node.
//!
//! Per GPU model it keeps (free whole devices, node) and (free milli, node, device) for
//! partially used devices, both ordered so that the tightest fit comes first. Applying or
//! releasing an allocation touches only that node's entries: O(d log n) for d devices.
//! Unhealthy nodes and devices are absent.

use std::collections::BTreeSet;
use std::ops::Bound;

use super::node::{Node, NodeId, RackId};
use crate::resources::{Milli, ModelId, ModelSet, MILLI_PER_GPU};

/// One node's entries in the index: exactly what the ordered sets hold for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeEntries {
    /// Whole free devices per model (models with none are absent).
    pub whole: Vec<(ModelId, u16)>,
    /// Partially used devices: (model, free milli, device).
    pub partial: Vec<(ModelId, Milli, u8)>,
    /// Free CPU; `None` when the node is unhealthy (and then every list is empty).
    pub cpu_free: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CapacityIndex {
    /// Per model: nodes with at least one whole free device of that model.
    whole: Vec<BTreeSet<(u16, NodeId)>>,
    /// Per model: devices with 0 < free < 1000 milli.
    partial: Vec<BTreeSet<(Milli, NodeId, u8)>>,
    /// Healthy nodes by free CPU.
    cpu: BTreeSet<(u64, NodeId)>,
    entries: Vec<NodeEntries>,
    /// Nodes of each rack, in id order. Racks never change, so this is built once; it lets a
    /// gang held to one rack look at that rack's nodes instead of filtering the whole fleet.
    racks: Vec<Vec<NodeId>>,
}

impl CapacityIndex {
    /// The index of `nodes` built from scratch (what [`Cluster`](crate::cluster::Cluster)
    /// keeps up to date incrementally); `models` is the size of the cluster's model table.
    /// Tests compare the two.
    pub fn build(models: usize, nodes: &[Node]) -> CapacityIndex {
        let mut index = CapacityIndex {
            whole: vec![BTreeSet::new(); models],
            partial: vec![BTreeSet::new(); models],
            cpu: BTreeSet::new(),
            entries: vec![NodeEntries::default(); nodes.len()],
            racks: Vec::new(),
        };
        for node in nodes {
            if let Some(r) = node.rack {
                let r = r.0 as usize;
                if index.racks.len() <= r {
                    index.racks.resize(r + 1, Vec::new());
                }
                index.racks[r].push(node.id);
            }
        }
        for node in nodes {
            index.update_node(node);
        }
        index
    }

    /// Brings `node`'s entries up to date. Only entries that changed touch the ordered sets:
    /// an allocation usually changes one device and the CPU, so two or three set updates
    /// rather than removing and reinserting all of the node's entries.
    pub(crate) fn update_node(&mut self, node: &Node) {
        let id = node.id;
        let mut new = NodeEntries::default();
        if node.healthy {
            new.cpu_free = Some(node.cpu_free());
            for (i, gpu) in node.gpus.iter().enumerate() {
                let free = gpu.free_milli();
                if free == MILLI_PER_GPU {
                    match new.whole.iter_mut().find(|(m, _)| *m == gpu.model) {
                        Some((_, n)) => *n += 1,
                        None => new.whole.push((gpu.model, 1)),
                    }
                } else if free > 0 {
                    new.partial.push((gpu.model, free, i as u8));
                }
            }
        }
        let old = std::mem::replace(&mut self.entries[id.index()], new);
        let new = &self.entries[id.index()];
        for &(m, free) in old.whole.iter().filter(|e| !new.whole.contains(e)) {
            self.whole[m.0 as usize].remove(&(free, id));
        }
        for &(m, free) in new.whole.iter().filter(|e| !old.whole.contains(e)) {
            self.whole[m.0 as usize].insert((free, id));
        }
        for &(m, free, g) in old.partial.iter().filter(|e| !new.partial.contains(e)) {
            self.partial[m.0 as usize].remove(&(free, id, g));
        }
        for &(m, free, g) in new.partial.iter().filter(|e| !old.partial.contains(e)) {
            self.partial[m.0 as usize].insert((free, id, g));
        }
        if old.cpu_free != new.cpu_free {
            if let Some(cpu) = old.cpu_free {
                self.cpu.remove(&(cpu, id));
            }
            if let Some(cpu) = new.cpu_free {
                self.cpu.insert((cpu, id));
            }
        }
    }

    /// Nodes with at least `k` whole free devices of `model`, fewest free first.
    pub fn nodes_with_whole(&self, model: ModelId, k: u16) -> impl DoubleEndedIterator<Item = (u16, NodeId)> + '_ {
        self.whole[model.0 as usize].range((Bound::Included((k.max(1), NodeId(0))), Bound::Unbounded)).copied()
    }

    /// Partially used devices of `model` with at least `milli` free, least free first.
    pub fn partial_devices(
        &self,
        model: ModelId,
        milli: Milli,
    ) -> impl DoubleEndedIterator<Item = (Milli, NodeId, u8)> + '_ {
        self.partial[model.0 as usize].range((Bound::Included((milli, NodeId(0), 0)), Bound::Unbounded)).copied()
    }

    /// Healthy nodes with at least `cpu_milli` free CPU, least free first.
    pub fn nodes_with_cpu(&self, cpu_milli: u64) -> impl DoubleEndedIterator<Item = (u64, NodeId)> + '_ {
        self.cpu.range((Bound::Included((cpu_milli, NodeId(0))), Bound::Unbounded)).copied()
    }

    /// Whether the index lists `node` for a request of `gpus` devices of `milli` each (a share
    /// when `gpus` is 1 and `milli` < 1000) of the `models` allowed, or of `cpu_milli` CPU
    /// when `gpus` is 0: the same test the candidate streams apply, for one node, in time
    /// linear in the node's entries (not its devices).
    pub fn admits(&self, node: NodeId, models: ModelSet, gpus: u32, milli: Milli, cpu_milli: u64) -> bool {
        let Some(e) = self.entries.get(node.index()) else { return false };
        if gpus == 0 {
            return e.cpu_free.is_some_and(|c| c >= cpu_milli);
        }
        let share = gpus == 1 && milli < MILLI_PER_GPU;
        let need = if share { 1 } else { gpus };
        e.whole.iter().any(|&(m, n)| models.allows(m) && n as u32 >= need)
            || share && e.partial.iter().any(|&(m, free, _)| models.allows(m) && free >= milli)
    }

    /// `node`'s own entries (empty for a node the index does not know).
    pub fn node_entries(&self, node: NodeId) -> &NodeEntries {
        static EMPTY: NodeEntries = NodeEntries { whole: Vec::new(), partial: Vec::new(), cpu_free: None };
        self.entries.get(node.index()).unwrap_or(&EMPTY)
    }

    /// Nodes of `rack`, in id order (healthy or not).
    pub fn rack_nodes(&self, rack: RackId) -> &[NodeId] {
        self.racks.get(rack.0 as usize).map_or(&[], Vec::as_slice)
    }

    /// Number of racks (rack ids are `0..rack_count`).
    pub fn rack_count(&self) -> usize {
        self.racks.len()
    }

    /// Whole free devices of `model` over the cluster (healthy only).
    pub fn whole_free_total(&self, model: ModelId) -> u64 {
        self.whole[model.0 as usize].iter().map(|&(n, _)| n as u64).sum()
    }

    /// Largest number of whole free devices of `model` on one node.
    pub fn max_whole_on_one_node(&self, model: ModelId) -> u16 {
        self.whole[model.0 as usize].last().map_or(0, |&(n, _)| n)
    }

    /// Largest free share on one partially used device of `model`.
    pub fn max_partial_free(&self, model: ModelId) -> Milli {
        self.partial[model.0 as usize].last().map_or(0, |&(m, _, _)| m)
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::{Cluster, DeviceShare, NodeId, NodeSpec, ReplicaAllocation};

    #[test]
    fn index_follows_allocations() {
        let mut c = Cluster::new(vec![
            NodeSpec::new("a", 64000, 1 << 20, 8, "A100"),
            NodeSpec::new("b", 64000, 1 << 20, 4, "A100"),
        ])
        .unwrap();
        let a100 = c.models().get("A100").unwrap();
        let ix = |c: &Cluster, k| c.index().nodes_with_whole(a100, k).map(|(_, n)| n).collect::<Vec<_>>();
        assert_eq!(ix(&c, 5), vec![NodeId(0)]);
        assert_eq!(ix(&c, 1), vec![NodeId(1), NodeId(0)], "tightest fit first");
        let alloc = ReplicaAllocation {
            node: NodeId(0),
            cpu_milli: 0,
            memory_mib: 0,
            devices: vec![
                DeviceShare::plain(0, 1000, 0),
                DeviceShare::plain(1, 1000, 0),
                DeviceShare::plain(2, 1000, 0),
                DeviceShare::plain(3, 1000, 0),
                DeviceShare::plain(4, 300, 0),
            ],
        };
        c.allocate(&alloc).unwrap();
        assert_eq!(ix(&c, 4), vec![NodeId(1)]);
        assert_eq!(ix(&c, 3), vec![NodeId(0), NodeId(1)]);
        assert_eq!(c.index().partial_devices(a100, 700).collect::<Vec<_>>(), vec![(700, NodeId(0), 4)]);
        assert_eq!(c.index().partial_devices(a100, 701).count(), 0);
        assert_eq!(c.index().whole_free_total(a100), 7);
        c.release(&alloc).unwrap();
        assert_eq!(ix(&c, 5), vec![NodeId(0)]);
        assert_eq!(c.index().partial_devices(a100, 1).count(), 0);
        c.set_node_health(NodeId(0), false);
        assert_eq!(ix(&c, 1), vec![NodeId(1)]);
    }
}
