//! The placement engine: filter -> score -> assign, for one replica and for a whole gang.
//!
//! Candidates come from the [`CapacityIndex`](crate::index::CapacityIndex), tightest fit
//! first, so a placement looks at the nodes that can take the request rather than at every
//! node. A policy may stop after `max_feasible_nodes` feasible nodes. Gangs are placed
//! all-or-nothing: members are allocated tentatively and rolled back if one does not fit
//! (invariant 3). The full per-node scan runs only to explain a failure.

use std::collections::BTreeMap;

use crate::cluster::{Cluster, DeviceShare, Node, NodeId, RackId, ReplicaAllocation, TaintEffect, Toleration};
use crate::explain::{FilterReason, NodeRejections};
use crate::job::{Resources, TopologyScope};
use crate::resources::{Milli, ModelSet, ModelTable, MILLI_PER_GPU};
use crate::score::{Policy, ScoreContext, TypicalDemand};

/// One replica's request, resolved against a cluster's model table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Demand {
    pub gpus: u32,
    /// Milli per GPU (1000 for whole GPUs; 0 when `gpus` is 0).
    pub milli: Milli,
    pub gpu_memory_mib: u64,
    pub models: ModelSet,
    pub cpu_milli: u64,
    pub memory_mib: u64,
}

impl Demand {
    /// `None` when the resources name GPU models that this cluster does not have at all.
    pub fn resolve(r: &Resources, models: &ModelTable) -> Option<Demand> {
        let set = if r.gpus > 0 { models.resolve(&r.gpu_models)? } else { ModelSet::ANY };
        Some(Demand {
            gpus: r.gpus,
            milli: if r.gpus > 0 { r.gpu_milli } else { 0 },
            gpu_memory_mib: if r.gpus > 0 { r.gpu_memory_mib.unwrap_or(0) } else { 0 },
            models: set,
            cpu_milli: r.cpu_milli,
            memory_mib: r.memory_mib,
        })
    }

    pub fn cpu_only(cpu_milli: u64, memory_mib: u64) -> Demand {
        Demand { gpus: 0, milli: 0, gpu_memory_mib: 0, models: ModelSet::ANY, cpu_milli, memory_mib }
    }

    pub fn is_fractional(&self) -> bool {
        self.gpus == 1 && self.milli < MILLI_PER_GPU
    }

    pub fn total_milli(&self) -> u64 {
        self.gpus as u64 * self.milli as u64
    }
}

/// Node-level constraints that come from the job rather than the replica.
#[derive(Clone, Copy, Debug)]
pub struct Constraints<'a> {
    pub node_selector: &'a BTreeMap<String, String>,
    pub tolerations: &'a [Toleration],
}

static NO_SELECTOR: BTreeMap<String, String> = BTreeMap::new();

impl Constraints<'static> {
    pub fn none() -> Constraints<'static> {
        Constraints { node_selector: &NO_SELECTOR, tolerations: &[] }
    }
}

/// Where a replica may go: used to hold a gang inside its topology scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    Anywhere,
    Node(NodeId),
    NvLink(NodeId, u8),
    Rack(RackId),
}

impl Domain {
    fn admits(self, node: &Node) -> bool {
        match self {
            Domain::Anywhere => true,
            Domain::Node(n) | Domain::NvLink(n, _) => node.id == n,
            Domain::Rack(r) => node.rack == Some(r),
        }
    }

    fn nvlink_group(self) -> Option<u8> {
        match self {
            Domain::NvLink(_, g) => Some(g),
            _ => None,
        }
    }
}

/// The first filter the node fails for `demand`, or `Ok` if it can take it.
pub fn filter_node(node: &Node, demand: &Demand, cons: &Constraints<'_>, domain: Domain) -> Result<(), FilterReason> {
    if !node.healthy {
        return Err(FilterReason::NodeUnhealthy);
    }
    if cons.node_selector.iter().any(|(k, v)| node.labels.get(k) != Some(v)) {
        return Err(FilterReason::NodeSelectorMismatch);
    }
    if node
        .taints
        .iter()
        .filter(|t| t.effect != TaintEffect::PreferNoSchedule)
        .any(|t| !cons.tolerations.iter().any(|tol| tol.tolerates(t)))
    {
        return Err(FilterReason::UntoleratedTaint);
    }
    if node.pods >= node.max_pods {
        return Err(FilterReason::PodSlots);
    }
    if demand.gpus > 0 {
        if node.gpus.is_empty() {
            return Err(FilterReason::NoGpus);
        }
        let group = domain.nvlink_group();
        let usable =
            |g: &crate::cluster::Gpu| demand.models.allows(g.model) && group.is_none_or(|x| g.nvlink_group == x);
        if !node.gpus.iter().any(usable) {
            return Err(FilterReason::GpuModel);
        }
        if demand.is_fractional() {
            if !node.gpus.iter().any(|g| usable(g) && g.free_milli() >= demand.milli) {
                return Err(FilterReason::NoDeviceWithShare);
            }
            if !node
                .gpus
                .iter()
                .any(|g| usable(g) && g.free_milli() >= demand.milli && g.free_memory_mib() >= demand.gpu_memory_mib)
            {
                return Err(FilterReason::GpuMemory);
            }
        } else {
            if node.gpus.iter().filter(|g| usable(g) && g.is_whole_free()).count() < demand.gpus as usize {
                return Err(FilterReason::NotEnoughWholeGpus);
            }
            if node
                .gpus
                .iter()
                .filter(|g| usable(g) && g.is_whole_free() && g.memory_mib >= demand.gpu_memory_mib)
                .count()
                < demand.gpus as usize
            {
                return Err(FilterReason::GpuMemory);
            }
        }
    }
    if node.cpu_free() < demand.cpu_milli {
        return Err(FilterReason::Cpu);
    }
    if node.memory_free() < demand.memory_mib {
        return Err(FilterReason::Memory);
    }
    Ok(())
}

/// The device sets worth scoring on a node that passed [`filter_node`]: for a share, each
/// device that can hold it (identical devices once); for whole GPUs, one set chosen for
/// topology (inside one NVLink group if possible, the tightest such group).
pub fn device_options(node: &Node, demand: &Demand, domain: Domain) -> Vec<Vec<DeviceShare>> {
    if demand.gpus == 0 {
        return vec![Vec::new()];
    }
    let group = domain.nvlink_group();
    let usable = |g: &crate::cluster::Gpu| demand.models.allows(g.model) && group.is_none_or(|x| g.nvlink_group == x);
    if demand.is_fractional() {
        let mut seen: Vec<(Milli, u64, u16)> = Vec::new();
        let mut options = Vec::new();
        for (i, g) in node.gpus.iter().enumerate() {
            if !usable(g) || g.free_milli() < demand.milli || g.free_memory_mib() < demand.gpu_memory_mib {
                continue;
            }
            if g.live.is_none() {
                let key = (g.free_milli(), g.free_memory_mib(), g.model.0);
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
            }
            options.push(vec![DeviceShare { gpu: i as u8, milli: demand.milli, memory_mib: demand.gpu_memory_mib }]);
        }
        return options;
    }
    let k = demand.gpus as usize;
    let free: Vec<usize> = (0..node.gpus.len())
        .filter(|&i| {
            let g = &node.gpus[i];
            usable(g) && g.is_whole_free() && g.memory_mib >= demand.gpu_memory_mib
        })
        .collect();
    if free.len() < k {
        return Vec::new();
    }
    // Count free devices per NVLink group; use the tightest group that holds all k.
    let mut groups: Vec<(u8, usize)> = Vec::new();
    for &i in &free {
        let g = node.gpus[i].nvlink_group;
        match groups.iter_mut().find(|(x, _)| *x == g) {
            Some((_, n)) => *n += 1,
            None => groups.push((g, 1)),
        }
    }
    let chosen: Vec<usize> = match groups.iter().filter(|(_, n)| *n >= k).min_by_key(|(g, n)| (*n, *g)) {
        Some(&(g, _)) => free.iter().copied().filter(|&i| node.gpus[i].nvlink_group == g).take(k).collect(),
        None => {
            // Span as few groups as possible: largest groups first.
            groups.sort_by_key(|&(g, n)| (std::cmp::Reverse(n), g));
            let mut picked = Vec::with_capacity(k);
            for (g, _) in groups {
                picked.extend(free.iter().copied().filter(|&i| node.gpus[i].nvlink_group == g).take(k - picked.len()));
                if picked.len() == k {
                    break;
                }
            }
            picked.sort_unstable();
            picked
        }
    };
    vec![chosen
        .into_iter()
        .map(|i| DeviceShare { gpu: i as u8, milli: MILLI_PER_GPU, memory_mib: demand.gpu_memory_mib })
        .collect()]
}

/// Nodes that may take `demand`, tightest fit first, each once. Nodes the index rules out
/// (no device of an allowed model with enough free capacity) never appear.
pub fn candidate_nodes<'c>(
    cluster: &'c Cluster,
    demand: &Demand,
    domain: Domain,
) -> Box<dyn Iterator<Item = NodeId> + 'c> {
    match domain {
        Domain::Node(n) | Domain::NvLink(n, _) => return Box::new(std::iter::once(n)),
        Domain::Anywhere | Domain::Rack(_) => {}
    }
    let index = cluster.index();
    let models: Vec<_> =
        if demand.models.is_any() { cluster.models().ids().collect() } else { demand.models.iter().collect() };
    let mut seen = vec![false; cluster.nodes().len()];
    let iter: Box<dyn Iterator<Item = NodeId> + 'c> = if demand.gpus == 0 {
        Box::new(index.nodes_with_cpu(demand.cpu_milli).map(|(_, n)| n))
    } else if demand.is_fractional() {
        let milli = demand.milli;
        Box::new(models.into_iter().flat_map(move |m| {
            index.partial_devices(m, milli).map(|(_, n, _)| n).chain(index.nodes_with_whole(m, 1).map(|(_, n)| n))
        }))
    } else {
        let k = demand.gpus.min(u16::MAX as u32) as u16;
        Box::new(models.into_iter().flat_map(move |m| index.nodes_with_whole(m, k).map(|(_, n)| n)))
    };
    Box::new(iter.filter(move |n| !std::mem::replace(&mut seen[n.index()], true)).filter(move |n| match domain {
        Domain::Rack(r) => cluster.node(*n).rack == Some(r),
        _ => true,
    }))
}

/// Everything the engine needs to choose among options.
pub struct Placer<'a> {
    pub policy: &'a Policy,
    pub workload: &'a [TypicalDemand],
}

impl Placer<'_> {
    /// The best allocation for one replica inside `domain`, given the gang members already
    /// placed; `None` if no node can take it.
    pub fn best_allocation(
        &self,
        cluster: &Cluster,
        demand: &Demand,
        cons: &Constraints<'_>,
        domain: Domain,
        gang: &[ReplicaAllocation],
    ) -> Option<(ReplicaAllocation, f64)> {
        let ctx = ScoreContext { cluster, gang, workload: self.workload };
        let mut best: Option<(ReplicaAllocation, f64)> = None;
        let mut feasible = 0usize;
        for id in candidate_nodes(cluster, demand, domain) {
            let node = cluster.node(id);
            if !domain.admits(node) || filter_node(node, demand, cons, domain).is_err() {
                continue;
            }
            for devices in device_options(node, demand, domain) {
                let score = self.policy.score(&ctx, node, demand, &devices);
                if best.as_ref().is_none_or(|(_, s)| score > *s) {
                    best = Some((
                        ReplicaAllocation {
                            node: id,
                            cpu_milli: demand.cpu_milli,
                            memory_mib: demand.memory_mib,
                            devices,
                        },
                        score,
                    ));
                }
            }
            feasible += 1;
            if feasible >= self.policy.max_feasible_nodes {
                break;
            }
        }
        best
    }

    /// Places every member or none (invariant 3). On success the allocations are applied to
    /// `cluster`, in member order; on failure `cluster` is unchanged.
    pub fn place_gang(
        &self,
        cluster: &mut Cluster,
        members: &[Demand],
        scope: TopologyScope,
        cons: &Constraints<'_>,
    ) -> Result<Vec<ReplicaAllocation>, GangFailure> {
        if members.is_empty() {
            return Ok(Vec::new());
        }
        if scope == TopologyScope::Any || members.len() == 1 && scope != TopologyScope::NvLink {
            return self.place_in(cluster, members, cons, Domain::Anywhere, &[]);
        }
        // Try each domain that can hold the first member; keep the best-scoring full fit.
        let domains = self.domains_for(cluster, &members[0], scope, cons);
        let mut best: Option<(Vec<ReplicaAllocation>, f64)> = None;
        let mut tried = 0;
        for domain in domains {
            if let Ok(allocs) = self.place_in(cluster, members, cons, domain, &[]) {
                let ctx = ScoreContext { cluster, gang: &allocs, workload: self.workload };
                let score: f64 = allocs
                    .iter()
                    .zip(members)
                    .map(|(a, d)| self.policy.score(&ctx, cluster.node(a.node), d, &a.devices))
                    .sum();
                rollback(cluster, &allocs);
                if best.as_ref().is_none_or(|(_, s)| score > *s) {
                    best = Some((allocs, score));
                }
                tried += 1;
                if tried >= self.policy.max_feasible_nodes {
                    break;
                }
            }
        }
        match best {
            Some((allocs, _)) => {
                for a in &allocs {
                    cluster.allocate(a).expect("re-applying an allocation that fit a moment ago");
                }
                Ok(allocs)
            }
            None => {
                let mut rejections = explain(cluster, &members[0], cons);
                let passing = cluster.nodes().len() as u32 - rejections.total();
                for _ in 0..passing {
                    rejections.add(FilterReason::Topology);
                }
                Err(GangFailure { member: 0, placed: 0, rejections })
            }
        }
    }

    fn place_in(
        &self,
        cluster: &mut Cluster,
        members: &[Demand],
        cons: &Constraints<'_>,
        domain: Domain,
        _: &[ReplicaAllocation],
    ) -> Result<Vec<ReplicaAllocation>, GangFailure> {
        let mut placed: Vec<ReplicaAllocation> = Vec::with_capacity(members.len());
        for (i, demand) in members.iter().enumerate() {
            match self.best_allocation(cluster, demand, cons, domain, &placed) {
                Some((a, _)) => {
                    cluster.allocate(&a).expect("the filter admitted this allocation");
                    placed.push(a);
                }
                None => {
                    let rejections = if domain == Domain::Anywhere {
                        explain(cluster, demand, cons)
                    } else {
                        NodeRejections::default()
                    };
                    rollback(cluster, &placed);
                    return Err(GangFailure { member: i, placed: i, rejections });
                }
            }
        }
        Ok(placed)
    }

    fn domains_for(
        &self,
        cluster: &Cluster,
        first: &Demand,
        scope: TopologyScope,
        cons: &Constraints<'_>,
    ) -> Vec<Domain> {
        let feasible = candidate_nodes(cluster, first, Domain::Anywhere)
            .filter(|&n| filter_node(cluster.node(n), first, cons, Domain::Anywhere).is_ok());
        match scope {
            TopologyScope::Any => vec![Domain::Anywhere],
            TopologyScope::Node => feasible.map(Domain::Node).collect(),
            TopologyScope::NvLink => feasible
                .flat_map(|n| {
                    let mut groups: Vec<u8> = cluster.node(n).gpus.iter().map(|g| g.nvlink_group).collect();
                    groups.sort_unstable();
                    groups.dedup();
                    groups.into_iter().map(move |g| Domain::NvLink(n, g))
                })
                .collect(),
            TopologyScope::Rack => {
                let mut racks: Vec<RackId> = feasible.filter_map(|n| cluster.node(n).rack).collect();
                racks.sort_unstable();
                racks.dedup();
                racks.into_iter().map(Domain::Rack).collect()
            }
        }
    }
}

/// Why a gang did not fit: the member that failed and the node rejections for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GangFailure {
    pub member: usize,
    pub placed: usize,
    pub rejections: NodeRejections,
}

fn rollback(cluster: &mut Cluster, allocs: &[ReplicaAllocation]) {
    for a in allocs.iter().rev() {
        cluster.release(a).expect("releasing an allocation made in this attempt");
    }
}

/// Scans every node and counts the first filter each fails for `demand`. Only for failures:
/// this is the one O(nodes) path.
pub fn explain(cluster: &Cluster, demand: &Demand, cons: &Constraints<'_>) -> NodeRejections {
    let mut r = NodeRejections::default();
    for node in cluster.nodes() {
        if let Err(reason) = filter_node(node, demand, cons, Domain::Anywhere) {
            r.add(reason);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::NodeSpec;

    fn whole(gpus: u32) -> Demand {
        Demand { gpus, milli: 1000, gpu_memory_mib: 0, models: ModelSet::ANY, cpu_milli: 1000, memory_mib: 1024 }
    }

    #[test]
    fn binpack_fills_the_fullest_node_first() {
        let mut c = Cluster::new(vec![
            NodeSpec::new("a", 64000, 1 << 20, 8, "A100"),
            NodeSpec::new("b", 64000, 1 << 20, 8, "A100"),
        ])
        .unwrap();
        let policy = Policy::binpack();
        let placer = Placer { policy: &policy, workload: &[] };
        let first = placer.place_gang(&mut c, &[whole(2)], TopologyScope::Any, &Constraints::none()).unwrap();
        let second = placer.place_gang(&mut c, &[whole(2)], TopologyScope::Any, &Constraints::none()).unwrap();
        assert_eq!(first[0].node, second[0].node);
    }

    #[test]
    fn a_gang_that_does_not_fit_leaves_nothing_behind() {
        let mut c = Cluster::new(vec![
            NodeSpec::new("a", 64000, 1 << 20, 8, "A100"),
            NodeSpec::new("b", 64000, 1 << 20, 4, "A100"),
        ])
        .unwrap();
        let policy = Policy::binpack();
        let placer = Placer { policy: &policy, workload: &[] };
        let err = placer
            .place_gang(&mut c, &[whole(8), whole(4), whole(1)], TopologyScope::Any, &Constraints::none())
            .unwrap_err();
        assert_eq!(err.member, 2);
        assert_eq!(c.gpu_used_milli(), 0);
        assert_eq!(err.rejections.counts.get(&FilterReason::NotEnoughWholeGpus), Some(&2));
    }

    #[test]
    fn node_scope_keeps_members_together() {
        let mut c = Cluster::new(vec![
            NodeSpec::new("a", 64000, 1 << 20, 4, "A100"),
            NodeSpec::new("b", 64000, 1 << 20, 8, "A100"),
        ])
        .unwrap();
        let policy = Policy::binpack();
        let placer = Placer { policy: &policy, workload: &[] };
        let allocs =
            placer.place_gang(&mut c, &[whole(3), whole(3)], TopologyScope::Node, &Constraints::none()).unwrap();
        assert!(allocs.iter().all(|a| a.node == NodeId(1)));
        let err =
            placer.place_gang(&mut c, &[whole(2), whole(3)], TopologyScope::Node, &Constraints::none()).unwrap_err();
        assert!(err.rejections.counts.contains_key(&FilterReason::Topology));
    }

    #[test]
    fn whole_gpus_stay_inside_one_nvlink_group_when_possible() {
        let mut spec = NodeSpec::new("a", 64000, 1 << 20, 8, "H100");
        for (i, g) in spec.gpus.iter_mut().enumerate() {
            g.nvlink_group = (i / 4) as u8;
        }
        let mut c = Cluster::new(vec![spec]).unwrap();
        let taken = ReplicaAllocation {
            node: NodeId(0),
            cpu_milli: 0,
            memory_mib: 0,
            devices: vec![DeviceShare { gpu: 0, milli: 1000, memory_mib: 0 }],
        };
        c.allocate(&taken).unwrap();
        let opts = device_options(c.node(NodeId(0)), &whole(3), Domain::Anywhere);
        assert_eq!(opts[0].iter().map(|d| d.gpu).collect::<Vec<_>>(), vec![1, 2, 3], "the tightest group that holds 3");
        let opts = device_options(c.node(NodeId(0)), &whole(4), Domain::Anywhere);
        assert_eq!(opts[0].iter().map(|d| d.gpu).collect::<Vec<_>>(), vec![4, 5, 6, 7]);
    }

    #[test]
    fn fractional_options_skip_identical_devices() {
        let c = Cluster::new(vec![NodeSpec::new("a", 64000, 1 << 20, 4, "T4")]).unwrap();
        let d = Demand { gpus: 1, milli: 300, ..whole(1) };
        assert_eq!(device_options(c.node(NodeId(0)), &d, Domain::Anywhere).len(), 1);
    }
}
