//! The placement policies of the replay: the six published ones (README §4), with their
//! exact integer scores and GPU choice rules, and `grus`, which scores with
//! [`Policy::grus`] through the same plugin code the general placer uses.
//!
//! Every policy picks the feasible node with the highest score; ties go to the smallest
//! node rank (the simulator's `"%04d-"` name prefix). FGD and grus scores depend only on the
//! node's own state and the pod's shape, so they are cached per (node, shape) and recomputed
//! only for a node that changed since: one node changes per event, which is what makes a
//! run over ~10,000 pods and 1,213 nodes take a fraction of a second.

use crate::cluster::{Cluster, DeviceShare, Node, NodeId};
use crate::demand::Demand;
use crate::place::{device_options, Domain};
use crate::resources::{Milli, MILLI_PER_GPU};
use crate::rng::SeededRng;
use crate::score::fgd::{fragmentation_after, node_fragmentation, paper_score};
use crate::score::{Policy, ScoreContext, TypicalDemand};

/// A replay policy, by the short name the binary takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PolicyKind {
    Random,
    DotProd,
    GpuClustering,
    GpuPacking,
    BestFit,
    Fgd,
    Grus,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 7] = [
        PolicyKind::Random,
        PolicyKind::DotProd,
        PolicyKind::GpuClustering,
        PolicyKind::GpuPacking,
        PolicyKind::BestFit,
        PolicyKind::Fgd,
        PolicyKind::Grus,
    ];

    /// The short name (`random`, `dotprod`, `clustering`, `packing`, `bestfit`, `fgd`, `grus`).
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Random => "random",
            PolicyKind::DotProd => "dotprod",
            PolicyKind::GpuClustering => "clustering",
            PolicyKind::GpuPacking => "packing",
            PolicyKind::BestFit => "bestfit",
            PolicyKind::Fgd => "fgd",
            PolicyKind::Grus => "grus",
        }
    }

    /// The name in the published results (`01-Random` … `06-FGD`).
    pub fn paper_name(self) -> &'static str {
        match self {
            PolicyKind::Random => "01-Random",
            PolicyKind::DotProd => "02-DotProd",
            PolicyKind::GpuClustering => "03-GpuClustering",
            PolicyKind::GpuPacking => "04-GpuPacking",
            PolicyKind::BestFit => "05-BestFit",
            PolicyKind::Fgd => "06-FGD",
            PolicyKind::Grus => "grus",
        }
    }
}

impl std::str::FromStr for PolicyKind {
    type Err = String;

    fn from_str(s: &str) -> Result<PolicyKind, String> {
        PolicyKind::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| {
            format!("unknown policy `{s}` (expected one of random, dotprod, clustering, packing, bestfit, fgd, grus)")
        })
    }
}

/// A pod as the policies see it.
#[derive(Clone, Debug)]
pub struct PodPlan {
    /// The request as allocated and filtered.
    pub demand: Demand,
    /// The request as scored: a CPU request of 0 counts as 100 m.
    pub scored: Demand,
    /// Dense id of the pod's shape, for the score cache.
    pub shape: usize,
    /// GPU milli the pod requests (`num_gpu · gpu_milli`), counted as arrived even if it fails.
    pub arrived_milli: u64,
}

/// The fork's normalisers for DotProd and BestFit: the largest node's CPU and GPU milli.
const MAX_CPU: f64 = 128_000.0;
const MAX_GPU: f64 = 8000.0;

/// GpuClustering's tag: `Some(0)` for a share, `Some(k)` for `k` whole GPUs.
fn tag(d: &Demand) -> Option<u32> {
    match d.gpus {
        0 => None,
        _ if d.is_fractional() => Some(0),
        k => Some(k),
    }
}

/// What a cached score was computed from and what it says.
#[derive(Clone, Copy, Debug)]
struct Cached {
    /// The node's version plus one (0: empty slot).
    version: u32,
    score: f64,
    /// The device a share goes to (unused for other demands).
    gpu: u8,
}

/// The replay's placement state: node ranks, GpuClustering's tags, and the score cache.
pub struct Engine<'w> {
    kind: PolicyKind,
    workload: &'w [TypicalDemand],
    grus: Policy,
    ranks: Vec<u32>,
    /// Per node: (tag, count) of the GPU pods placed on it.
    tags: Vec<Vec<(u32, u32)>>,
    versions: Vec<u32>,
    /// Per node: F(n) at version (plus one).
    frag: Vec<(u32, f64)>,
    cache: Vec<Cached>,
}

impl<'w> Engine<'w> {
    /// `ranks[i]` is node `i`'s tie-break rank; `shapes` bounds [`PodPlan::shape`].
    pub fn new(kind: PolicyKind, workload: &'w [TypicalDemand], ranks: Vec<u32>, shapes: usize) -> Engine<'w> {
        let n = ranks.len();
        let cached = matches!(kind, PolicyKind::Fgd | PolicyKind::Grus);
        Engine {
            kind,
            workload,
            grus: Policy::grus(),
            ranks,
            tags: vec![Vec::new(); n],
            versions: vec![0; n],
            frag: vec![(0, 0.0); if cached { n } else { 0 }],
            cache: vec![Cached { version: 0, score: 0.0, gpu: 0 }; if cached { n * shapes } else { 0 }],
        }
    }

    /// Chooses a node among `feasible` (non-empty) and the devices on it.
    pub fn choose(
        &mut self,
        cluster: &Cluster,
        pod: &PodPlan,
        feasible: &[NodeId],
        rng: &mut SeededRng,
    ) -> (NodeId, Vec<DeviceShare>) {
        let d = &pod.scored;
        if self.kind == PolicyKind::Random {
            // A lone feasible node skips PreScore, where the random pick (and its draw) lives.
            let pick = if feasible.len() == 1 { 0 } else { rng.below(feasible.len()) };
            let node = cluster.node(feasible[pick]);
            let devices = if d.is_fractional() {
                // Reservoir sampling over the devices that can hold the share.
                let mut pick = None;
                let mut seen = 0;
                for (i, g) in node.gpus.iter().enumerate() {
                    if d.models.allows(g.model) && g.free_milli() >= d.milli && !d.would_crowd(g) {
                        seen += 1;
                        if rng.below(seen) == 0 {
                            pick = Some(i);
                        }
                    }
                }
                share(pick.expect("a feasible node has a device for the share"), d.milli)
            } else {
                lowest_whole(node, d)
            };
            return (node.id, devices);
        }
        if feasible.len() == 1 && self.kind != PolicyKind::Grus {
            // The scheduler takes a lone feasible node without scoring; devices by default rule.
            let node = cluster.node(feasible[0]);
            return (node.id, default_devices(node, d));
        }
        let node = match self.kind {
            PolicyKind::DotProd => self.argmax(feasible.iter().map(|&n| (n, dot_prod(cluster.node(n), d) as f64))),
            PolicyKind::GpuClustering => {
                let tags = &self.tags;
                self.argmax(feasible.iter().map(|&n| (n, gpu_clustering(cluster.node(n), d, &tags[n.index()]) as f64)))
            }
            PolicyKind::GpuPacking => {
                self.argmax(feasible.iter().map(|&n| (n, gpu_packing(cluster.node(n), d) as f64)))
            }
            PolicyKind::BestFit => {
                let raw: Vec<i64> = feasible.iter().map(|&n| best_fit_raw(cluster.node(n), d)).collect();
                let (lo, hi) = (raw.iter().min().copied().unwrap_or(0), raw.iter().max().copied().unwrap_or(0));
                // Min-max normalisation, integer division as published (it keeps the order).
                let normalised = |r: i64| if hi == lo { 0 } else { (r - lo) * 100 / (hi - lo) };
                self.argmax(feasible.iter().zip(&raw).map(|(&n, &r)| (n, normalised(r) as f64)))
            }
            PolicyKind::Fgd | PolicyKind::Grus => {
                let mut best: Option<(f64, u32, NodeId)> = None;
                for &n in feasible {
                    let s = self.cached_score(cluster, n, pod).score;
                    let r = self.ranks[n.index()];
                    if best.is_none_or(|(bs, br, _)| s > bs || s == bs && r < br) {
                        best = Some((s, r, n));
                    }
                }
                best.expect("feasible is not empty").2
            }
            PolicyKind::Random => unreachable!("handled above"),
        };
        let chosen = cluster.node(node);
        let devices = match self.kind {
            PolicyKind::Fgd if d.is_fractional() => share(self.cached_score(cluster, node, pod).gpu as usize, d.milli),
            PolicyKind::Grus => {
                let gpu = self.cached_score(cluster, node, pod).gpu;
                match d.gpus {
                    0 => Vec::new(),
                    _ if d.is_fractional() => share(gpu as usize, d.milli),
                    _ => device_options(chosen, &pod.demand, Domain::Anywhere).swap_remove(0),
                }
            }
            _ => default_devices(chosen, d),
        };
        (node, devices)
    }

    /// Records that `pod` was placed on `node` (after the cluster applied it).
    pub fn placed(&mut self, node: NodeId, pod: &PodPlan) {
        self.versions[node.index()] += 1;
        if let Some(t) = tag(&pod.demand) {
            let tags = &mut self.tags[node.index()];
            match tags.iter_mut().find(|(x, _)| *x == t) {
                Some((_, c)) => *c += 1,
                None => tags.push((t, 1)),
            }
        }
    }

    /// The feasible node with the highest score; ties to the smallest rank.
    fn argmax(&self, scored: impl Iterator<Item = (NodeId, f64)>) -> NodeId {
        let mut best: Option<(f64, u32, NodeId)> = None;
        for (n, s) in scored {
            let r = self.ranks[n.index()];
            if best.is_none_or(|(bs, br, _)| s > bs || s == bs && r < br) {
                best = Some((s, r, n));
            }
        }
        best.expect("feasible is not empty").2
    }

    fn cached_score(&mut self, cluster: &Cluster, n: NodeId, pod: &PodPlan) -> Cached {
        let i = n.index();
        let version = self.versions[i] + 1;
        // Shape-major: one pod scans its shape's row in node order, which stays in cache.
        let slot = pod.shape * self.ranks.len() + i;
        if self.cache[slot].version == version {
            return self.cache[slot];
        }
        let node = cluster.node(n);
        let (score, gpu) = if self.kind == PolicyKind::Fgd {
            if self.frag[i].0 != version {
                self.frag[i] = (version, node_fragmentation(node, self.workload));
            }
            fgd_option(node, &pod.scored, self.frag[i].1, self.workload)
        } else {
            let ctx = ScoreContext { cluster, gang: &[], workload: self.workload };
            let mut best: Option<(f64, u8)> = None;
            for devices in device_options(node, &pod.scored, Domain::Anywhere) {
                let s = self.grus.score(&ctx, node, &pod.scored, &devices);
                if best.is_none_or(|(bs, _)| s > bs) {
                    best = Some((s, devices.first().map_or(0, |d| d.gpu)));
                }
            }
            best.unwrap_or((f64::NEG_INFINITY, 0))
        };
        self.cache[slot] = Cached { version, score, gpu };
        self.cache[slot]
    }
}

fn share(gpu: usize, milli: Milli) -> Vec<DeviceShare> {
    vec![DeviceShare::plain(gpu as u8, milli, 0)]
}

/// `AllocateExclusiveGpuId`: the lowest-index fully free devices the demand may use.
fn lowest_whole(node: &Node, d: &Demand) -> Vec<DeviceShare> {
    node.gpus
        .iter()
        .enumerate()
        .filter(|(_, g)| d.models.allows(g.model) && g.is_whole_free())
        .take(d.gpus as usize)
        .map(|(i, _)| DeviceShare::plain(i as u8, MILLI_PER_GPU, 0))
        .collect()
}

/// The device a share goes to under policies 02–05: the smallest free milli that holds it,
/// lowest index on ties.
fn tightest_share(node: &Node, d: &Demand) -> usize {
    node.gpus
        .iter()
        .enumerate()
        .filter(|(_, g)| d.models.allows(g.model) && g.free_milli() >= d.milli && !d.would_crowd(g))
        .min_by_key(|&(i, g)| (g.free_milli(), i))
        .map(|(i, _)| i)
        .expect("a feasible node has a device for the share")
}

fn default_devices(node: &Node, d: &Demand) -> Vec<DeviceShare> {
    match d.gpus {
        0 => Vec::new(),
        _ if d.is_fractional() => share(tightest_share(node, d), d.milli),
        _ => lowest_whole(node, d),
    }
}

/// 02-DotProd: `int(100·(1 − ½·[cpuLeft·c/128000² + G·gTot/8000²]))`.
pub fn dot_prod(node: &Node, d: &Demand) -> i64 {
    let cpu = node.cpu_free() as f64 / MAX_CPU * (d.cpu_milli as f64 / MAX_CPU);
    let gpu = node.gpu_free_milli() as f64 / MAX_GPU * (d.total_milli() as f64 / MAX_GPU);
    (100.0 * (1.0 - 0.5 * (cpu + gpu))) as i64
}

/// 03-GpuClustering: pods of one kind together. `tags` are the node's (tag, count).
pub fn gpu_clustering(node: &Node, d: &Demand, tags: &[(u32, u32)]) -> i64 {
    let Some(own) = tag(d) else { return 0 };
    let b = 25 * (MAX_GPU as i64 - node.gpu_free_milli() as i64) / MAX_GPU as i64;
    let present = |t: u32| tags.iter().any(|&(x, c)| x == t && c > 0);
    let kinds = tags.iter().filter(|&&(_, c)| c > 0).count();
    if kinds == 0 {
        b + 25
    } else if present(own) && kinds == 1 {
        b + 75
    } else if present(own) {
        b + 50
    } else {
        b
    }
}

/// 04-GpuPacking: shares onto used devices first, then used nodes, then small empty nodes.
pub fn gpu_packing(node: &Node, d: &Demand) -> i64 {
    if d.gpus == 0 {
        return 0;
    }
    let n = node.gpus.len() as i64;
    if node.gpus.iter().all(|g| g.is_whole_free()) {
        return (33 - n).max(n);
    }
    let mut order: Vec<(Milli, usize)> = node.gpus.iter().enumerate().map(|(i, g)| (g.free_milli(), i)).collect();
    order.sort(); // ascending idle, index order on ties (stable)
    let used: Vec<Milli> = order
        .iter()
        .filter(|&&(free, i)| d.models.allows(node.gpus[i].model) && free >= d.milli)
        .take(d.gpus as usize)
        .map(|&(free, _)| free)
        .collect();
    let fully_free = used.iter().filter(|&&f| f == MILLI_PER_GPU).count() as i64;
    if fully_free > 0 {
        (50 - fully_free).max(33)
    } else {
        let sum: i64 = used.iter().map(|&f| (f as i64 * 100) / 1000).sum();
        (100 - sum / 10).max(50)
    }
}

/// 05-BestFit before normalisation: `int(100·(1 − [½(cpuLeft−c)/128000 + ½(G−gTot)/8000]))`.
pub fn best_fit_raw(node: &Node, d: &Demand) -> i64 {
    let cpu = (node.cpu_free() as f64 - d.cpu_milli as f64) / MAX_CPU;
    let gpu = (node.gpu_free_milli() as f64 - d.total_milli() as f64) / MAX_GPU;
    (100.0 * (1.0 - (0.5 * cpu + 0.5 * gpu))) as i64
}

/// 06-FGD on one node: the published score and, for a share, the device (the first of the
/// best, in index order). `f_node` is the node's F(n).
pub fn fgd_option(node: &Node, d: &Demand, f_node: f64, workload: &[TypicalDemand]) -> (f64, u8) {
    if !d.is_fractional() {
        let devices = if d.gpus == 0 { Vec::new() } else { lowest_whole(node, d) };
        return (paper_score(f_node - fragmentation_after(node, d, &devices, workload)) as f64, 0);
    }
    let mut best: Option<(u32, u8)> = None;
    let mut seen: Vec<(Milli, u16)> = Vec::with_capacity(node.gpus.len());
    for (i, g) in node.gpus.iter().enumerate() {
        if !d.models.allows(g.model) || g.free_milli() < d.milli || d.would_crowd(g) {
            continue;
        }
        // Devices with the same model and idle milli lead to the same F(n'); the first wins.
        let key = (g.free_milli(), g.model.0);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let s = paper_score(f_node - fragmentation_after(node, d, &share(i, d.milli), workload));
        if best.is_none_or(|(bs, _)| s > bs) {
            best = Some((s, i as u8));
        }
    }
    let (s, gpu) = best.expect("a feasible node has a device for the share");
    (s as f64, gpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{NodeSpec, ReplicaAllocation};
    use crate::resources::ModelSet;

    fn demand(cpu: u64, milli: Milli, gpus: u32) -> Demand {
        Demand {
            gpus,
            milli,
            gpu_memory_mib: 0,
            models: ModelSet::ANY,
            cpu_milli: cpu,
            memory_mib: 0,
            mig: None,
            sharing_busy_limit_pct: None,
        }
    }

    /// A node of `n` GPUs with the given used milli per device and `cpu_used` CPU.
    fn node(cpu: u64, used: &[Milli], cpu_used: u64) -> Cluster {
        let mut c = Cluster::new(vec![NodeSpec::new("n", cpu, 1 << 20, used.len(), "G2")]).unwrap();
        let devices: Vec<DeviceShare> =
            used.iter().enumerate().filter(|(_, &u)| u > 0).map(|(i, &u)| DeviceShare::plain(i as u8, u, 0)).collect();
        c.allocate(&ReplicaAllocation { node: NodeId(0), cpu_milli: cpu_used, memory_mib: 0, devices }).unwrap();
        c
    }

    #[test]
    fn dot_prod_by_hand() {
        // cpuLeft 64000, G 4000; pod 8000 m and one GPU:
        // 64000·8000/128000² = 0.03125; 4000·1000/8000² = 0.0625; 100·(1 − 0.046875) = 95.3.
        let c = node(96_000, &[1000, 1000, 1000, 1000, 0, 0, 0, 0], 32_000);
        assert_eq!(dot_prod(c.node(NodeId(0)), &demand(8000, 1000, 1)), 95);
    }

    #[test]
    fn gpu_clustering_cases() {
        let c = node(96_000, &[1000, 1000, 0, 0, 0, 0, 0, 0], 0);
        let n = c.node(NodeId(0));
        // G = 6000: b = 25·2000 div 8000 = 6.
        let share = demand(1000, 500, 1);
        assert_eq!(gpu_clustering(n, &share, &[]), 31, "empty: b + 25");
        assert_eq!(gpu_clustering(n, &share, &[(0, 2)]), 81, "only own tag: b + 75");
        assert_eq!(gpu_clustering(n, &share, &[(0, 1), (1, 1)]), 56, "own among others: b + 50");
        assert_eq!(gpu_clustering(n, &share, &[(2, 1)]), 6, "others only: b");
        assert_eq!(gpu_clustering(n, &demand(1000, 1000, 2), &[(2, 1)]), 81);
        assert_eq!(gpu_clustering(n, &demand(1000, 0, 0), &[]), 0, "CPU-only");
    }

    #[test]
    fn gpu_packing_cases() {
        let share = demand(1000, 300, 1);
        let empty8 = node(96_000, &[0; 8], 0);
        assert_eq!(gpu_packing(empty8.node(NodeId(0)), &share), 25, "max(33 − 8, 8)");
        let empty2 = node(96_000, &[0; 2], 0);
        assert_eq!(gpu_packing(empty2.node(NodeId(0)), &share), 31);
        // Idle [1000, 450, 250, 1000]: ascending [250, 450, 1000, 1000]; 300 first fits 450.
        let used = node(96_000, &[0, 550, 750, 0], 0);
        let n = used.node(NodeId(0));
        assert_eq!(gpu_packing(n, &share), 96, "100 − int(450·100/1000) div 10 = 100 − 4");
        assert_eq!(gpu_packing(n, &demand(1000, 1000, 2)), 48, "two fully free devices: 50 − 2");
        assert_eq!(gpu_packing(n, &demand(1000, 500, 1)), 49, "the first fit is a free device");
        assert_eq!(gpu_packing(n, &demand(1000, 0, 0)), 0);
    }

    #[test]
    fn best_fit_by_hand() {
        // ½·56000/128000 = 0.21875; ½·3000/8000 = 0.1875; 100·(1 − 0.40625) = 59.4.
        let c = node(96_000, &[1000, 1000, 1000, 1000, 0, 0, 0, 0], 32_000);
        assert_eq!(best_fit_raw(c.node(NodeId(0)), &demand(8000, 1000, 1)), 59);
    }

    #[test]
    fn fgd_picks_the_first_device_among_equal_scores() {
        // Workload: a 500 share. Idle [1000, 600, 1000, 600]: placing 500 on a 600 leaves
        // 100 stranded (drop −100 → 47); on a 1000 leaves 500 usable (drop 0 → 50).
        let w = vec![TypicalDemand { demand: demand(1000, 500, 1), weight: 1.0 }];
        let c = node(96_000, &[0, 400, 0, 400], 0);
        let n = c.node(NodeId(0));
        let f = node_fragmentation(n, &w);
        assert_eq!(fgd_option(n, &demand(1000, 500, 1), f, &w), (50.0, 0));
        // A 600 share fills a 600 exactly (drop 0 → 50); on GPU 0 it leaves 400 < 500 (→ 40).
        assert_eq!(fgd_option(n, &demand(1000, 600, 1), f, &w), (50.0, 1));
    }
}
