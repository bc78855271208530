//! Topology: keep a gang's members close to each other, and a multi-GPU replica's devices
//! close to each other.
//!
//! Collective operations run at the speed of the slowest link: NVLink inside an island, PCIe
//! or the host bridge across NUMA nodes, the top-of-rack switch between nodes of one rack,
//! the spine beyond. Two terms, each in 0..=1:
//! - affinity (when gang members are already placed, `ScoreContext::gang`): per placed member,
//!   1 on the same node sharing an NVLink group, 0.8 on the same node, 0.5 in the same rack,
//!   0 elsewhere; averaged over the members.
//! - compactness (when the replica takes two or more devices): the share of its devices in its
//!   largest NVLink group (weight 0.7) and in its largest NUMA node (weight 0.3).
//!
//! An option with neither term (a lone single-device replica) scores the neutral 50: topology
//! has no opinion, and the other plugins decide.

use crate::cluster::{DeviceShare, Node, ReplicaAllocation};
use crate::demand::Demand;
use crate::score::{ScoreContext, ScorePlugin};

const NEUTRAL: f64 = 50.0;
const SAME_NODE_SAME_NVLINK: f64 = 1.0;
const SAME_NODE: f64 = 0.8;
const SAME_RACK: f64 = 0.5;
const NVLINK_WEIGHT: f64 = 0.7;
/// Weight of affinity against compactness when both apply: the gang's collectives cross
/// member boundaries on every step, so where the members sit matters most.
const AFFINITY_WEIGHT: f64 = 0.6;

/// Largest count of one key among `keys`, by a linear count: device lists are short.
fn largest_group(keys: impl Iterator<Item = u8> + Clone) -> usize {
    keys.clone().map(|k| keys.clone().filter(|&x| x == k).count()).max().unwrap_or(0)
}

/// Prefers placing gang members together and a replica's devices inside one NVLink island.
pub struct Topology;

impl Topology {
    fn closeness(ctx: &ScoreContext<'_>, node: &Node, devices: &[DeviceShare], member: &ReplicaAllocation) -> f64 {
        if member.node == node.id {
            let other = ctx.cluster.node(member.node);
            let mine = || devices.iter().filter_map(|d| node.gpus.get(d.gpu as usize)).map(|g| g.nvlink_group);
            let theirs =
                || member.devices.iter().filter_map(|d| other.gpus.get(d.gpu as usize)).map(|g| g.nvlink_group);
            // A GPU-less member or replica has no link to share: the node is as close as it gets.
            if mine().next().is_none() || theirs().next().is_none() || mine().any(|g| theirs().any(|h| h == g)) {
                SAME_NODE_SAME_NVLINK
            } else {
                SAME_NODE
            }
        } else {
            match (node.rack, ctx.cluster.node(member.node).rack) {
                (Some(a), Some(b)) if a == b => SAME_RACK,
                _ => 0.0,
            }
        }
    }

    fn compactness(node: &Node, devices: &[DeviceShare]) -> Option<f64> {
        if devices.len() < 2 {
            return None;
        }
        let gpus = || devices.iter().filter_map(|d| node.gpus.get(d.gpu as usize));
        let n = devices.len() as f64;
        let nvlink = largest_group(gpus().map(|g| g.nvlink_group)) as f64 / n;
        let numa = largest_group(gpus().map(|g| g.numa)) as f64 / n;
        Some(NVLINK_WEIGHT * nvlink + (1.0 - NVLINK_WEIGHT) * numa)
    }
}

impl ScorePlugin for Topology {
    fn name(&self) -> &'static str {
        "topology"
    }

    fn node_local(&self) -> bool {
        true
    }

    fn score(&self, ctx: &ScoreContext<'_>, node: &Node, _: &Demand, devices: &[DeviceShare]) -> f64 {
        let affinity = (!ctx.gang.is_empty()).then(|| {
            ctx.gang.iter().map(|m| Topology::closeness(ctx, node, devices, m)).sum::<f64>() / ctx.gang.len() as f64
        });
        let compact = Topology::compactness(node, devices);
        let v = match (affinity, compact) {
            (Some(a), Some(c)) => AFFINITY_WEIGHT * a + (1.0 - AFFINITY_WEIGHT) * c,
            (Some(a), None) => a,
            (None, Some(c)) => c,
            (None, None) => return NEUTRAL,
        };
        100.0 * v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Cluster, NodeId, NodeSpec};
    use crate::resources::ModelSet;

    /// Nodes of 8 GPUs: NVLink groups of 4, NUMA halves crossing the groups (0,1,4,5 | 2,3,6,7)
    /// so that the two terms can be told apart; racks as given.
    fn cluster(racks: &[&str]) -> Cluster {
        let specs = racks
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut s = NodeSpec::new(&format!("n{i}"), 64000, 1 << 20, 8, "H100");
                s.rack = Some(r.to_string());
                for (j, g) in s.gpus.iter_mut().enumerate() {
                    g.nvlink_group = (j / 4) as u8;
                    g.numa = ((j / 2) % 2) as u8;
                }
                s
            })
            .collect();
        Cluster::new(specs).unwrap()
    }

    fn devs(gpus: &[u8]) -> Vec<DeviceShare> {
        gpus.iter().map(|&gpu| DeviceShare::plain(gpu, 1000, 0)).collect()
    }

    fn member(node: u32, gpus: &[u8]) -> ReplicaAllocation {
        ReplicaAllocation { node: NodeId(node), cpu_milli: 0, memory_mib: 0, devices: devs(gpus) }
    }

    fn whole(gpus: u32) -> Demand {
        Demand {
            gpus,
            milli: 1000,
            gpu_memory_mib: 0,
            models: ModelSet::ANY,
            cpu_milli: 0,
            memory_mib: 0,
            mig: None,
            sharing_busy_limit_pct: None,
        }
    }

    fn score(c: &Cluster, gang: &[ReplicaAllocation], node: u32, gpus: &[u8]) -> f64 {
        let ctx = ScoreContext { cluster: c, gang, workload: &[] };
        Topology.score(&ctx, c.node(NodeId(node)), &whole(gpus.len() as u32), &devs(gpus))
    }

    #[test]
    fn a_lone_single_device_replica_is_neutral() {
        let c = cluster(&["r0"]);
        assert_eq!(score(&c, &[], 0, &[3]), NEUTRAL);
    }

    #[test]
    fn gang_members_prefer_same_nvlink_then_node_then_rack() {
        let c = cluster(&["r0", "r0", "r1"]);
        let gang = [member(0, &[0])];
        let nvlink = score(&c, &gang, 0, &[1]);
        let node = score(&c, &gang, 0, &[4]);
        let rack = score(&c, &gang, 1, &[0]);
        let far = score(&c, &gang, 2, &[0]);
        assert_eq!((nvlink, node, rack, far), (100.0, 80.0, 50.0, 0.0));
    }

    #[test]
    fn affinity_averages_over_placed_members() {
        let c = cluster(&["r0", "r0", "r1"]);
        let gang = [member(0, &[0]), member(2, &[0])];
        assert_eq!(score(&c, &gang, 1, &[0]), 25.0);
    }

    #[test]
    fn a_multi_gpu_replica_prefers_one_nvlink_group_and_numa_node() {
        let c = cluster(&["r0"]);
        let island = score(&c, &[], 0, &[0, 1]);
        let across_numa = score(&c, &[], 0, &[0, 2]);
        let across_nvlink = score(&c, &[], 0, &[0, 4]);
        let across_both = score(&c, &[], 0, &[0, 6]);
        assert_eq!(island, 100.0);
        assert!(island > across_numa && across_numa > across_nvlink && across_nvlink > across_both);
    }

    #[test]
    fn gpu_less_members_on_the_same_node_count_as_closest() {
        let c = cluster(&["r0"]);
        let gang = [member(0, &[])];
        let ctx = ScoreContext { cluster: &c, gang: &gang, workload: &[] };
        assert_eq!(Topology.score(&ctx, c.node(NodeId(0)), &Demand::cpu_only(1, 1), &[]), 100.0);
    }
}
