//! The placement engine: filter -> score -> assign, for one replica and for a whole gang.
//!
//! Candidates come from the [`CapacityIndex`], tightest fit
//! first, so a placement looks at the nodes that can take the request rather than at every
//! node. A policy may stop after `max_feasible_nodes` feasible nodes, and a gang held to a
//! topology scope after `max_gang_domains` domains that fit; with both unbounded every
//! feasible option is scored. Gangs are placed all-or-nothing: members are allocated
//! tentatively and rolled back if one does not fit (invariant 3). The full per-node scan runs
//! only to explain a failure ([`Placer::try_place_gang`] skips it).
//!
//! The hot path allocates nothing per candidate node: candidates are deduplicated by
//! recomputing where a node first appears in the index streams (`first_key`) instead of a
//! per-call table over all nodes, and device options are written into one reused buffer.
//!
//! Scoring is memoised: for a policy of node-local plugins (the default `grus` is one) and a
//! replica with no gang members placed yet, a node's best option for a demand is kept in the
//! policy's memo under the node's [stamp](Cluster::node_stamp) and reused until the node
//! changes. Fragmentation-aware scoring costs (typical shapes × devices) per option, and a
//! pass over a backlog sees the same tightest candidates again and again with only the node
//! that took the last pod changed, so the memo is what keeps `grus` as cheap as binpack
//! (BENCHMARKS.md, Throughput). It never changes a decision (a test checks a whole pass).

use std::collections::BTreeMap;

use crate::cluster::{
    CapacityIndex, Cluster, DeviceShare, Node, NodeId, PoolId, RackId, ReplicaAllocation, TaintEffect, Toleration,
};
use crate::demand::Demand;
use crate::explain::{FilterReason, NodeRejections};
use crate::job::TopologyScope;
use crate::mig::MigSlot;
use crate::resources::{ModelId, MILLI_PER_GPU};
use crate::score::{MemoEntry, Policy, ScoreContext, TypicalDemand};

/// Node-level constraints that come from the job rather than the replica.
#[derive(Clone, Copy, Debug)]
pub struct Constraints<'a> {
    pub node_selector: &'a BTreeMap<String, String>,
    pub tolerations: &'a [Toleration],
    /// Only nodes of this pool; `None`: any node.
    pub pool: Option<PoolId>,
}

static NO_SELECTOR: BTreeMap<String, String> = BTreeMap::new();

impl Constraints<'static> {
    pub fn none() -> Constraints<'static> {
        Constraints { node_selector: &NO_SELECTOR, tolerations: &[], pool: None }
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
    if cons.pool.is_some_and(|p| node.pool != Some(p)) {
        return Err(FilterReason::OtherPool);
    }
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
    if let Some(profile) = demand.mig {
        if node.gpus.is_empty() {
            return Err(FilterReason::NoGpus);
        }
        let mut usable = node.gpus.iter().filter(|g| g.mig.is_some() && demand.models.allows(g.model)).peekable();
        if usable.peek().is_none() {
            return Err(FilterReason::GpuModel);
        }
        if !usable.any(|g| g.mig_fits(profile)) {
            return Err(FilterReason::NoMigSlot);
        }
    } else if demand.gpus > 0 {
        if node.gpus.is_empty() {
            return Err(FilterReason::NoGpus);
        }
        let group = domain.nvlink_group();
        // One pass over the devices gathers what every GPU filter needs; the filters then
        // report the first failing stage in the same order as they are documented.
        let (mut usable, mut share, mut share_mem, mut share_calm, mut whole, mut whole_mem) =
            (false, false, false, false, 0u32, 0u32);
        for g in node.gpus.iter().filter(|g| demand.models.allows(g.model) && group.is_none_or(|x| g.nvlink_group == x))
        {
            usable = true;
            if g.free_milli() >= demand.milli {
                share = true;
                let mem = g.free_memory_mib() >= demand.gpu_memory_mib;
                share_mem |= mem;
                share_calm |= mem && !demand.would_crowd(g);
            }
            if g.is_whole_free() {
                whole += 1;
                whole_mem += u32::from(g.memory_mib >= demand.gpu_memory_mib);
            }
        }
        if !usable {
            return Err(FilterReason::GpuModel);
        }
        if demand.is_fractional() {
            if !share {
                return Err(FilterReason::NoDeviceWithShare);
            }
            if !share_mem {
                return Err(FilterReason::GpuMemory);
            }
            if !share_calm {
                return Err(FilterReason::Interference);
            }
        } else {
            if whole < demand.gpus {
                return Err(FilterReason::NotEnoughWholeGpus);
            }
            if whole_mem < demand.gpus {
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
    let mut options = Vec::new();
    for_each_device_option(node, demand, domain, &mut Vec::new(), |devices| options.push(devices.to_vec()));
    options
}

/// [`device_options`] without allocating per option: each option is written into `buf` and
/// handed to `f`. The placement loop calls this for every candidate node, so it must not
/// allocate (the buffer is reused across nodes).
fn for_each_device_option(
    node: &Node,
    demand: &Demand,
    domain: Domain,
    buf: &mut Vec<DeviceShare>,
    mut f: impl FnMut(&[DeviceShare]),
) {
    buf.clear();
    if demand.gpus == 0 {
        f(buf);
        return;
    }
    if let Some(profile) = demand.mig {
        // One option per GPU that can take it, at that GPU's best position.
        for (i, g) in node.gpus.iter().enumerate().filter(|(_, g)| demand.models.allows(g.model)) {
            if let Some((p, start)) = g.mig_start(profile) {
                buf.clear();
                buf.push(DeviceShare {
                    gpu: i as u8,
                    milli: crate::mig::milli_of(p),
                    memory_mib: 0,
                    mig: Some(MigSlot::of(p, start)),
                });
                f(buf);
            }
        }
        return;
    }
    let group = domain.nvlink_group();
    let usable = |g: &crate::cluster::Gpu| demand.models.allows(g.model) && group.is_none_or(|x| g.nvlink_group == x);
    if demand.is_fractional() {
        let fits = |g: &crate::cluster::Gpu| {
            usable(g)
                && g.free_milli() >= demand.milli
                && g.free_memory_mib() >= demand.gpu_memory_mib
                && !demand.would_crowd(g)
        };
        // Devices without live metrics that look the same to every plugin are one option;
        // a device with metrics may differ in its measured load, so it is always its own.
        let key = |g: &crate::cluster::Gpu| (g.free_milli(), g.free_memory_mib(), g.model.0);
        for (i, g) in node.gpus.iter().enumerate() {
            if !fits(g) {
                continue;
            }
            if g.live.is_none() && node.gpus[..i].iter().any(|e| e.live.is_none() && fits(e) && key(e) == key(g)) {
                continue;
            }
            buf.clear();
            buf.push(DeviceShare::plain(i as u8, demand.milli, demand.gpu_memory_mib));
            f(buf);
        }
        return;
    }
    let k = demand.gpus as usize;
    let free = |g: &crate::cluster::Gpu| usable(g) && g.is_whole_free() && g.memory_mib >= demand.gpu_memory_mib;
    // Free devices per NVLink group, in a table indexed by group id (one pass); only the
    // groups of the node's devices are ever read back, never all 256 entries.
    let mut per_group = [0u16; 256];
    let mut total = 0;
    for g in node.gpus.iter().filter(|g| free(g)) {
        per_group[g.nvlink_group as usize] += 1;
        total += 1;
    }
    if total < k {
        return;
    }
    let in_group = |grp: u8| per_group[grp as usize] as usize;
    let share = |i: usize| DeviceShare::plain(i as u8, MILLI_PER_GPU, demand.gpu_memory_mib);
    // The tightest group that holds all k keeps roomier groups whole for bigger requests.
    let tightest = node
        .gpus
        .iter()
        .filter(|g| free(g))
        .map(|g| (in_group(g.nvlink_group), g.nvlink_group))
        .filter(|&(n, _)| n >= k)
        .min();
    match tightest {
        Some((_, group)) => buf.extend(
            node.gpus
                .iter()
                .enumerate()
                .filter(|(_, g)| free(g) && g.nvlink_group == group)
                .take(k)
                .map(|(i, _)| share(i)),
        ),
        None => {
            // Span as few groups as possible: largest groups first. Rare, so it may allocate.
            let mut groups: Vec<(u8, usize)> =
                node.gpus.iter().filter(|g| free(g)).map(|g| (g.nvlink_group, in_group(g.nvlink_group))).collect();
            groups.sort_by_key(|&(g, n)| (std::cmp::Reverse(n), g));
            groups.dedup();
            for (grp, _) in groups {
                let need = k - buf.len();
                buf.extend(
                    node.gpus
                        .iter()
                        .enumerate()
                        .filter(|(_, g)| free(g) && g.nvlink_group == grp)
                        .take(need)
                        .map(|(i, _)| share(i)),
                );
                if buf.len() == k {
                    break;
                }
            }
            buf.sort_unstable_by_key(|d| d.gpu);
        }
    }
    f(buf);
}

/// A candidate's place in the index streams: (position of the model in the demand's model
/// list, class: 0 for a partially used device or whole GPUs, 1 for a whole device offered to
/// a share, free milli or whole free devices or free CPU, node, device).
type CandidateKey = (u16, u8, u64, NodeId, u8);

/// Where `node` first appears in the candidate order for `demand`, or `None` if the index
/// rules it out. The order is model by model (in `models` order), and within a model, for a
/// share, partially used devices (least free first) before nodes with a whole free device
/// (fewest first); for whole GPUs, nodes with at least k whole free devices, fewest first.
///
/// Computed from the node's own index entries, so it agrees with the streams by construction;
/// it both deduplicates the index streams without a per-call `seen` table over all nodes and
/// orders a rack's nodes.
fn first_key(index: &CapacityIndex, node: NodeId, demand: &Demand, models: &[ModelId]) -> Option<CandidateKey> {
    let e = index.node_entries(node);
    let (whole, partial) = (&e.whole, &e.partial);
    if demand.gpus == 0 {
        return e.cpu_free.filter(|&c| c >= demand.cpu_milli).map(|c| (0, 0, c, node, 0));
    }
    let pos = |m: ModelId| models.iter().position(|&x| x == m).map(|p| p as u16);
    let mut best: Option<CandidateKey> = None;
    let mut offer = |key: CandidateKey| best = Some(best.map_or(key, |b| b.min(key)));
    if demand.is_fractional() {
        for &(m, free, g) in partial.iter().filter(|&&(_, free, _)| free >= demand.milli) {
            if let Some(p) = pos(m) {
                offer((p, 0, free as u64, node, g));
            }
        }
        for &(m, n) in whole {
            if let Some(p) = pos(m) {
                offer((p, 1, n as u64, node, 0));
            }
        }
    } else {
        let k = demand.gpus.clamp(1, u16::MAX as u32) as u16;
        for &(m, n) in whole.iter().filter(|&&(_, n)| n >= k) {
            if let Some(p) = pos(m) {
                offer((p, 0, n as u64, node, 0));
            }
        }
    }
    best
}

/// The models a demand may use, in the order candidates are drawn from them.
pub(crate) fn demand_models(cluster: &Cluster, demand: &Demand) -> Vec<ModelId> {
    if demand.models.is_any() {
        cluster.models().ids().collect()
    } else {
        demand.models.iter().collect()
    }
}

/// Nodes that may take `demand`, tightest fit first, each once. Nodes the index rules out
/// (no device of an allowed model with enough free capacity) never appear.
pub fn candidate_nodes<'c>(
    cluster: &'c Cluster,
    demand: &Demand,
    domain: Domain,
) -> Box<dyn Iterator<Item = NodeId> + 'c> {
    Box::new(candidates(cluster, demand, domain))
}

/// The iterator behind [`candidate_nodes`], unboxed for the placement loop.
fn candidates<'c>(cluster: &'c Cluster, demand: &Demand, domain: Domain) -> impl Iterator<Item = NodeId> + 'c {
    let index = cluster.index();
    let models = demand_models(cluster, demand);
    let demand = demand.clone();
    // Entries of every stream as (position of the model, class, amount, node, device): the
    // same shape as `first_key`, so a node is yielded exactly at its first appearance.
    let streams: Box<dyn Iterator<Item = CandidateKey> + 'c> = match domain {
        Domain::Node(n) | Domain::NvLink(n, _) => return Candidates::One(Some(n)),
        // MIG capacity is not in the index: the (few) nodes with MIG-mode GPUs, each once.
        _ if demand.mig.is_some() => {
            return Candidates::Streams(Box::new(
                cluster.mig_nodes().iter().copied().filter(move |&n| domain.admits(cluster.node(n))),
            ))
        }
        Domain::Rack(r) => {
            let mut nodes: Vec<_> =
                index.rack_nodes(r).iter().filter_map(|&n| first_key(index, n, &demand, &models)).collect();
            nodes.sort_unstable();
            return Candidates::Rack(nodes.into_iter());
        }
        Domain::Anywhere if demand.gpus == 0 => {
            return Candidates::Cpu(index.nodes_with_cpu(demand.cpu_milli));
        }
        Domain::Anywhere if demand.is_fractional() => {
            let milli = demand.milli;
            Box::new(models.clone().into_iter().enumerate().flat_map(move |(pos, m)| {
                let pos = pos as u16;
                index
                    .partial_devices(m, milli)
                    .map(move |(free, n, g)| (pos, 0, free as u64, n, g))
                    .chain(index.nodes_with_whole(m, 1).map(move |(c, n)| (pos, 1, c as u64, n, 0)))
            }))
        }
        Domain::Anywhere => {
            let k = demand.gpus.min(u16::MAX as u32) as u16;
            Box::new(models.clone().into_iter().enumerate().flat_map(move |(pos, m)| {
                index.nodes_with_whole(m, k).map(move |(c, n)| (pos as u16, 0, c as u64, n, 0))
            }))
        }
    };
    // A single whole-GPU stream lists each node once; otherwise keep a node's first entry only.
    let unique = !demand.is_fractional() && models.len() == 1;
    Candidates::Streams(Box::new(
        streams
            .filter_map(move |key| (unique || first_key(index, key.3, &demand, &models) == Some(key)).then_some(key.3)),
    ))
}

/// The candidate sources, one variant each so that the common ones are not boxed twice.
enum Candidates<'c, C: Iterator<Item = (u64, NodeId)>> {
    One(Option<NodeId>),
    Rack(std::vec::IntoIter<CandidateKey>),
    Cpu(C),
    Streams(Box<dyn Iterator<Item = NodeId> + 'c>),
}

impl<C: Iterator<Item = (u64, NodeId)>> Iterator for Candidates<'_, C> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        match self {
            Candidates::One(n) => n.take(),
            Candidates::Rack(it) => it.next().map(|k| k.3),
            Candidates::Cpu(it) => it.next().map(|(_, n)| n),
            Candidates::Streams(it) => it.next(),
        }
    }
}

/// Everything the engine needs to choose among options.
pub struct Placer<'a> {
    pub policy: &'a Policy,
    pub workload: &'a [TypicalDemand],
}

impl Placer<'_> {
    /// An option's score: the policy's, or for a MIG instance the MIG packing score (the
    /// policy's plugins weigh milli on devices, which a MIG-mode GPU does not offer).
    fn option_score(&self, ctx: &ScoreContext<'_>, node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64 {
        if demand.mig.is_some() {
            mig_pack_score(node, devices)
        } else {
            self.policy.score(ctx, node, demand, devices)
        }
    }

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
        // With no gang members placed, a node's best option depends on its state alone
        // (for a policy of node-local plugins): look it up by the node's stamp.
        let mut memo = if gang.is_empty() { self.policy.memo(self.workload) } else { None };
        let demand_id = memo.as_mut().map_or(0, |m| m.intern(demand, domain.nvlink_group()));
        // The best option so far as (node, score, index among the node's options); only the
        // winner's devices are written out, so scoring a node allocates nothing.
        let mut best: Option<(NodeId, f64, u16)> = None;
        let mut buf: Vec<DeviceShare> = Vec::new();
        let mut feasible = 0usize;
        for id in candidates(cluster, demand, domain) {
            let node = cluster.node(id);
            if !domain.admits(node) || filter_node(node, demand, cons, domain).is_err() {
                continue;
            }
            let stamp = cluster.node_stamp(id);
            let entry = match memo.as_ref().and_then(|m| m.get(id, stamp, demand_id)) {
                Some(e) => e,
                None => {
                    let mut e = MemoEntry { score: f64::NEG_INFINITY, option: None };
                    let mut i = 0u16;
                    for_each_device_option(node, demand, domain, &mut buf, |devices| {
                        let score = self.option_score(&ctx, node, demand, devices);
                        if e.option.is_none() || score > e.score {
                            e = MemoEntry { score, option: Some(i) };
                        }
                        i = i.saturating_add(1);
                    });
                    if let Some(m) = memo.as_mut() {
                        m.insert(id, stamp, demand_id, e);
                    }
                    e
                }
            };
            if let Some(option) = entry.option {
                if best.is_none_or(|(_, s, _)| entry.score > s) {
                    best = Some((id, entry.score, option));
                }
            }
            feasible += 1;
            if feasible >= self.policy.max_feasible_nodes {
                break;
            }
        }
        drop(memo);
        let (node, score, option) = best?;
        let mut devices = Vec::new();
        let mut i = 0u16;
        for_each_device_option(cluster.node(node), demand, domain, &mut buf, |d| {
            if i == option {
                devices = d.to_vec();
            }
            i = i.saturating_add(1);
        });
        let a = ReplicaAllocation { node, cpu_milli: demand.cpu_milli, memory_mib: demand.memory_mib, devices };
        Some((a, score))
    }

    /// Places every member or none (invariant 3). On success the allocations are applied to
    /// `cluster`, in member order; on failure `cluster` is unchanged and the failure says, per
    /// filter, why the nodes refused the member that did not fit.
    pub fn place_gang(
        &self,
        cluster: &mut Cluster,
        members: &[Demand],
        scope: TopologyScope,
        cons: &Constraints<'_>,
    ) -> Result<Vec<ReplicaAllocation>, GangFailure> {
        match self.place_gang_inner(cluster, members, scope, cons, true) {
            Ok(allocs) => Ok(allocs),
            Err(Miss::Member(i, rejections)) => Err(GangFailure { member: i, placed: i, rejections }),
            Err(Miss::Topology) => {
                let mut rejections = explain(cluster, &members[0], cons);
                let passing = cluster.nodes().len() as u32 - rejections.total();
                for _ in 0..passing {
                    rejections.add(FilterReason::Topology);
                }
                Err(GangFailure { member: 0, placed: 0, rejections })
            }
        }
    }

    /// [`Placer::place_gang`] without the explanation: `None` when the gang does not fit, and
    /// `cluster` is then unchanged. Explaining scans every node, which would dominate a cycle
    /// over a backlog larger than the cluster; a cycle that needs the reasons calls
    /// [`explain`] for the jobs it reports on (once per demand shape is enough while a pass
    /// only adds allocations, since a fuller cluster refuses what an emptier one did).
    pub fn try_place_gang(
        &self,
        cluster: &mut Cluster,
        members: &[Demand],
        scope: TopologyScope,
        cons: &Constraints<'_>,
    ) -> Option<Vec<ReplicaAllocation>> {
        self.place_gang_inner(cluster, members, scope, cons, false).ok()
    }

    fn place_gang_inner(
        &self,
        cluster: &mut Cluster,
        members: &[Demand],
        scope: TopologyScope,
        cons: &Constraints<'_>,
        explained: bool,
    ) -> Result<Vec<ReplicaAllocation>, Miss> {
        if members.is_empty() {
            return Ok(Vec::new());
        }
        if scope == TopologyScope::Any || members.len() == 1 && scope != TopologyScope::NvLink {
            return self.place_in(cluster, members, cons, Domain::Anywhere, explained);
        }
        // Try each domain that can hold the first member; keep the best-scoring full fit.
        let mut best: Option<(Vec<ReplicaAllocation>, f64)> = None;
        let mut tried = 0;
        let mut attempt = |cluster: &mut Cluster, domain: Domain| -> bool {
            if let Ok(allocs) = self.place_in(cluster, members, cons, domain, false) {
                let ctx = ScoreContext { cluster, gang: &allocs, workload: self.workload };
                let score: f64 = allocs
                    .iter()
                    .zip(members)
                    .map(|(a, d)| self.option_score(&ctx, cluster.node(a.node), d, &a.devices))
                    .sum();
                rollback(cluster, &allocs);
                if best.as_ref().is_none_or(|(_, s)| score > *s) {
                    best = Some((allocs, score));
                }
                tried += 1;
            }
            tried < self.policy.max_gang_domains.min(self.policy.max_feasible_nodes)
        };
        if scope == TopologyScope::Rack {
            // Racks in id order, each tried if one of its nodes can hold the first member. Drawn
            // one at a time, so a bounded policy stops without listing every feasible node.
            // When every member asks the same, a rack whose nodes cannot hold that many copies
            // even ignoring CPU and memory is skipped: trying it would place and roll back
            // members for nothing, which in a nearly full cluster is most racks.
            let same = members.iter().all(|m| *m == members[0]);
            for r in 0..cluster.index().rack_count() {
                let rack = RackId(r as u32);
                let (mut open, mut room) = (false, 0usize);
                let first = &members[0];
                for &n in cluster.index().rack_nodes(rack) {
                    // The index's own entries first: O(1) per node, and in a nearly full
                    // cluster they rule out almost every node before the full filter runs.
                    // A rack whose nodes the index does not list cannot hold the first member,
                    // since its placement draws from the index's candidates.
                    if first.mig.is_none()
                        && !cluster.index().admits(n, first.models, first.gpus, first.milli, first.cpu_milli)
                    {
                        continue;
                    }
                    let node = cluster.node(n);
                    if filter_node(node, first, cons, Domain::Anywhere).is_ok() {
                        open = true;
                        room = room.saturating_add(copies_at_most(node, first));
                    }
                }
                if open && (!same || room >= members.len()) && !attempt(cluster, Domain::Rack(rack)) {
                    break;
                }
            }
        } else {
            for domain in self.domains_for(cluster, &members[0], scope, cons) {
                if !attempt(cluster, domain) {
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
            None => Err(Miss::Topology),
        }
    }

    fn place_in(
        &self,
        cluster: &mut Cluster,
        members: &[Demand],
        cons: &Constraints<'_>,
        domain: Domain,
        explained: bool,
    ) -> Result<Vec<ReplicaAllocation>, Miss> {
        let mut placed: Vec<ReplicaAllocation> = Vec::with_capacity(members.len());
        for (i, demand) in members.iter().enumerate() {
            match self.best_allocation(cluster, demand, cons, domain, &placed) {
                Some((a, _)) => {
                    cluster.allocate(&a).expect("the filter admitted this allocation");
                    placed.push(a);
                }
                None => {
                    // Explained before the rollback: the members placed so far are part of
                    // why this one did not fit.
                    let rejections = if explained && domain == Domain::Anywhere {
                        explain(cluster, demand, cons)
                    } else {
                        NodeRejections::default()
                    };
                    rollback(cluster, &placed);
                    return Err(Miss::Member(i, rejections));
                }
            }
        }
        Ok(placed)
    }

    /// Node and NVLink domains that can hold the first member, tightest first.
    fn domains_for(
        &self,
        cluster: &Cluster,
        first: &Demand,
        scope: TopologyScope,
        cons: &Constraints<'_>,
    ) -> Vec<Domain> {
        let feasible = candidates(cluster, first, Domain::Anywhere)
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

/// An upper bound on how many replicas of `demand` fit on `node` by its GPUs alone (a node
/// that passed [`filter_node`]). Only ever used to skip domains that cannot fit, so it may
/// overestimate but never underestimate.
fn copies_at_most(node: &Node, demand: &Demand) -> usize {
    if demand.gpus == 0 {
        return usize::MAX;
    }
    let usable = node.gpus.iter().filter(|g| demand.models.allows(g.model));
    if demand.mig.is_some() {
        // At most seven instances per GPU.
        usable.filter(|g| g.mig.is_some()).count() * usize::from(crate::mig::COMPUTE_SLICES)
    } else if demand.is_fractional() {
        usable.map(|g| (g.free_milli() / demand.milli.max(1)) as usize).sum()
    } else {
        usable.filter(|g| g.is_whole_free()).count() / demand.gpus as usize
    }
}

/// How well a MIG instance fits where `devices` puts it: minus the room for further instances
/// it takes away ([`MigLayout::room`](crate::mig::MigLayout::room), weighted toward large
/// profiles), so an instance goes beside others on a partly used GPU, at the position that
/// keeps the large profiles placeable, before it splits an empty GPU. Never positive.
fn mig_pack_score(node: &Node, devices: &[DeviceShare]) -> f64 {
    devices
        .iter()
        .filter_map(|d| {
            let mig = node.gpus.get(d.gpu as usize)?.mig?;
            let slot = d.mig?;
            let before = mig.layout.room(mig.profiles);
            let after = mig.layout.take(slot).room(mig.profiles);
            Some(-f64::from(before.saturating_sub(after)))
        })
        .sum()
}

/// Why [`Placer::place_gang_inner`] gave up, before any explanation is computed.
enum Miss {
    /// Member `i` fit nowhere (scope `Any`, or a single member), with the explanation if asked.
    Member(usize, NodeRejections),
    /// No topology domain held the whole gang.
    Topology,
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
    use crate::resources::ModelSet;

    fn whole(gpus: u32) -> Demand {
        Demand {
            gpus,
            milli: 1000,
            gpu_memory_mib: 0,
            models: ModelSet::ANY,
            cpu_milli: 1000,
            memory_mib: 1024,
            mig: None,
            sharing_busy_limit_pct: None,
        }
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
    fn rack_scope_skips_racks_too_small_and_a_bounded_policy_stops_early() {
        let specs = ["r0", "r1", "r1", "r2", "r2"]
            .iter()
            .enumerate()
            .map(|(i, r)| NodeSpec {
                rack: Some(r.to_string()),
                ..NodeSpec::new(&format!("n{i}"), 64000, 1 << 20, 8, "A100")
            })
            .collect();
        let mut c = Cluster::new(specs).unwrap();
        let gang = [whole(8), whole(8)];
        let policy = Policy::binpack().with_max_gang_domains(1);
        let placer = Placer { policy: &policy, workload: &[] };
        let allocs = placer.try_place_gang(&mut c, &gang, TopologyScope::Rack, &Constraints::none()).unwrap();
        let nodes: Vec<_> = allocs.iter().map(|a| a.node).collect();
        assert_eq!(nodes, vec![NodeId(1), NodeId(2)], "rack r0 has one node; r1 is the first that fits");
        let allocs = placer.try_place_gang(&mut c, &gang, TopologyScope::Rack, &Constraints::none()).unwrap();
        assert_eq!(allocs.iter().map(|a| a.node).collect::<Vec<_>>(), vec![NodeId(3), NodeId(4)]);
        let before = c.gpu_used_milli();
        assert_eq!(placer.try_place_gang(&mut c, &gang, TopologyScope::Rack, &Constraints::none()), None);
        assert_eq!(c.gpu_used_milli(), before);
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
            devices: vec![DeviceShare::plain(0, 1000, 0)],
        };
        c.allocate(&taken).unwrap();
        let opts = device_options(c.node(NodeId(0)), &whole(3), Domain::Anywhere);
        assert_eq!(opts[0].iter().map(|d| d.gpu).collect::<Vec<_>>(), vec![1, 2, 3], "the tightest group that holds 3");
        let opts = device_options(c.node(NodeId(0)), &whole(4), Domain::Anywhere);
        assert_eq!(opts[0].iter().map(|d| d.gpu).collect::<Vec<_>>(), vec![4, 5, 6, 7]);
    }

    /// Places a seeded pending mix on a copy of `fleet`; the allocations in order.
    fn synthetic_pass(fleet: &Cluster, policy: &Policy) -> Vec<Option<Vec<ReplicaAllocation>>> {
        let mut c = fleet.clone();
        let pending = crate::synth::pending(c.models(), 1500, 3);
        let workload = crate::synth::typical_workload(&pending);
        let placer = Placer { policy, workload: &workload };
        pending.iter().map(|i| placer.try_place_gang(&mut c, &i.members, i.scope, &Constraints::none())).collect()
    }

    #[test]
    fn the_score_memo_changes_no_decision() {
        let fleet = crate::synth::cluster(crate::synth::ClusterShape { nodes: 120, gpus_per_node: 8, seed: 3 });
        let policy = Policy::grus_bounded();
        let memoised = synthetic_pass(&fleet, &policy);
        let scored = synthetic_pass(&fleet, &Policy::grus_bounded().without_memo());
        assert!(memoised.iter().filter(|a| a.is_some()).count() > 100, "the pass places pods");
        assert!(memoised.iter().any(|a| a.is_none()), "and fills the fleet");
        assert_eq!(memoised, scored);
        // A second copy of the fleet shares its stamps: the warm memo answers for the nodes
        // it has not changed yet, and still decides the same.
        assert_eq!(synthetic_pass(&fleet, &policy), scored);
    }

    #[test]
    fn fractional_options_skip_identical_devices() {
        let c = Cluster::new(vec![NodeSpec::new("a", 64000, 1 << 20, 4, "T4")]).unwrap();
        let d = Demand { gpus: 1, milli: 300, ..whole(1) };
        assert_eq!(device_options(c.node(NodeId(0)), &d, Domain::Anywhere).len(), 1);
    }
}
