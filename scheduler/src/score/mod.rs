//! Scoring plugins and the weighted policies built from them.
//!
//! A plugin scores one placement option (a node plus the devices chosen on it) in 0..=100,
//! higher is better. A [`Policy`] sums weighted plugin scores; the placement engine keeps the
//! best option. Plugins never mutate state and never see more than the cluster snapshot, the
//! gang members placed so far and the typical workload.
//!
//! The default policy is [`Policy::grus`] (see [`grus`]); the typical workload comes from the
//! configuration or, by default, from the cycle's own jobs ([`TypicalDemand::from_demands`]).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::cluster::{Cluster, DeviceShare, Node, NodeId, ReplicaAllocation};
use crate::demand::Demand;

mod basic;
pub mod fgd;
pub mod grus;
mod topology;
mod utilization;

pub use basic::{Binpack, Spread};
pub use topology::Topology;
pub use utilization::Utilization;

/// A demand shape that is common in the workload, with its share (FGD's target workload).
#[derive(Clone, Debug, PartialEq)]
pub struct TypicalDemand {
    pub demand: Demand,
    pub weight: f64,
}

/// Share of the pods the typical workload covers by default, in percent (FGD's choice).
pub const TYPICAL_COVERAGE_PCT: u64 = 95;

impl TypicalDemand {
    /// The typical workload of a population of demands given with their counts: equal shapes
    /// merged, the most common first, the fewest that cover `coverage_pct` percent of the
    /// pods, weights normalised over them (see [`most_common`]).
    ///
    /// A shape is what fragmentation looks at: GPU count, milli per GPU, allowed models and
    /// CPU. Host and GPU memory are dropped, so pods that differ only in memory count as one
    /// shape. Deterministic: the result depends on the multiset of demands, not their order.
    /// Empty when there are no demands (or all counts are 0).
    pub fn from_demands(demands: impl IntoIterator<Item = (Demand, u64)>, coverage_pct: u64) -> Vec<TypicalDemand> {
        let mut counts: std::collections::BTreeMap<Demand, u64> = std::collections::BTreeMap::new();
        for (d, n) in demands {
            if n > 0 {
                *counts.entry(Demand { memory_mib: 0, gpu_memory_mib: 0, ..d }).or_default() += n;
            }
        }
        most_common(counts, coverage_pct)
            .into_iter()
            .map(|(demand, _, weight)| TypicalDemand { demand, weight })
            .collect()
    }
}

/// FGD's rule for a typical workload, over any shape key: shapes by count, most common first
/// (ties to the larger key), the fewest that cover `coverage_pct` percent of all counted
/// items, each with its count and its weight renormalised over the kept shapes. Keys must
/// be distinct. The one implementation behind [`TypicalDemand::from_demands`] and the trace
/// replay's typical workload.
pub fn most_common<K: Ord>(counts: impl IntoIterator<Item = (K, u64)>, coverage_pct: u64) -> Vec<(K, u64, f64)> {
    let mut shapes: Vec<(K, u64)> = counts.into_iter().filter(|(_, n)| *n > 0).collect();
    shapes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    let total: u64 = shapes.iter().map(|s| s.1).sum();
    let need = total as u128 * coverage_pct as u128;
    let mut covered = 0u128;
    let mut k = 0;
    while k < shapes.len() && covered * 100 < need {
        covered += shapes[k].1 as u128;
        k += 1;
    }
    shapes.truncate(k);
    let kept: u64 = shapes.iter().map(|s| s.1).sum();
    shapes.into_iter().map(|(key, n)| (key, n, n as f64 / kept as f64)).collect()
}

/// What a plugin may look at besides the node itself.
pub struct ScoreContext<'a> {
    pub cluster: &'a Cluster,
    /// Allocations of the same gang already placed in this attempt.
    pub gang: &'a [ReplicaAllocation],
    /// The typical workload, weights summing to 1 (empty when unknown).
    pub workload: &'a [TypicalDemand],
}

pub trait ScorePlugin: Send + Sync {
    fn name(&self) -> &'static str;

    /// Whether, with no gang members placed (`ScoreContext::gang` empty), the score depends
    /// only on the node's own state (usage, health, live metrics: what
    /// [`Cluster::node_stamp`] versions), the demand, the devices and the typical workload,
    /// never on other nodes. A policy whose plugins all say so has its per-node scores
    /// memoised by the placer. The default, `false`, is always safe.
    fn node_local(&self) -> bool {
        false
    }

    /// Score in 0..=100 of putting `demand` on `node` using `devices`.
    fn score(&self, ctx: &ScoreContext<'_>, node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64;
}

/// A named, weighted sum of plugins.
pub struct Policy {
    pub name: String,
    plugins: Vec<(f64, Box<dyn ScorePlugin>)>,
    /// Per-node best scores, when every plugin is [`ScorePlugin::node_local`].
    memo: Option<Mutex<ScoreMemo>>,
    /// Stop looking after this many feasible nodes (tightest fits first); `usize::MAX` scores all.
    pub max_feasible_nodes: usize,
    /// For a gang held to a topology scope: stop after this many domains (nodes, NVLink
    /// groups, racks) that hold the whole gang; `usize::MAX` tries all. Each try places every
    /// member, so this bounds a gang's cost separately from `max_feasible_nodes`.
    pub max_gang_domains: usize,
}

impl Policy {
    pub fn new(name: &str) -> Policy {
        Policy {
            name: name.to_string(),
            plugins: Vec::new(),
            memo: Some(Mutex::new(ScoreMemo::default())),
            max_feasible_nodes: usize::MAX,
            max_gang_domains: usize::MAX,
        }
    }

    pub fn with(mut self, weight: f64, plugin: impl ScorePlugin + 'static) -> Policy {
        if !plugin.node_local() {
            self.memo = None;
        }
        self.plugins.push((weight, Box::new(plugin)));
        self
    }

    /// The memo of per-node scores for `workload`, if this policy's scores may be memoised
    /// (see [`ScoreMemo`]); emptied when the workload differs from the one it was filled for.
    pub(crate) fn memo(&self, workload: &[TypicalDemand]) -> Option<MutexGuard<'_, ScoreMemo>> {
        // A panic while holding the lock cannot leave a half-written entry: entries are
        // inserted whole, so a poisoned memo is still consistent.
        let mut memo = self.memo.as_ref()?.lock().unwrap_or_else(PoisonError::into_inner);
        if memo.workload != workload {
            *memo = ScoreMemo { workload: workload.to_vec(), ..ScoreMemo::default() };
        }
        Some(memo)
    }

    /// Scores every option afresh, without the per-node memo (decisions are the same; for
    /// measuring what the memo saves, and for checking that it changes nothing).
    pub fn without_memo(mut self) -> Policy {
        self.memo = None;
        self
    }

    pub fn with_max_feasible_nodes(mut self, n: usize) -> Policy {
        self.max_feasible_nodes = n.max(1);
        self
    }

    pub fn with_max_gang_domains(mut self, n: usize) -> Policy {
        self.max_gang_domains = n.max(1);
        self
    }

    pub fn plugin_names(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.plugins.iter().map(|(w, p)| (p.name(), *w))
    }

    pub fn score(&self, ctx: &ScoreContext<'_>, node: &Node, demand: &Demand, devices: &[DeviceShare]) -> f64 {
        self.plugins.iter().map(|(w, p)| w * p.score(ctx, node, demand, devices)).sum()
    }

    /// Binpack alone: fill the fullest node that fits.
    pub fn binpack() -> Policy {
        Policy::new("binpack").with(1.0, Binpack)
    }

    /// Spread alone: prefer the emptiest node.
    pub fn spread() -> Policy {
        Policy::new("spread").with(1.0, Spread)
    }
}

/// The best option of one node for one demand, memoised by the node's stamp.
///
/// [`Cluster::node_stamp`] changes with every change to a node and is unique across every
/// cluster in the process, so one stamp means one node state, even across cluster copies and
/// cycles. With no gang members placed, node-local plugins give the same score for the same
/// stamp, demand and devices, so the placer scores a node once per state and demand instead
/// of once per placement: in a pass over a backlog only the node that took the last pod
/// changes. The memo is a cache only; decisions are the same with or without it.
///
/// One placement holds the memo's lock throughout, so placements with one policy on several
/// threads take turns. Laid out for the placer's access pattern: demands are interned once per placement, then
/// each candidate node is one index into `nodes` and a scan of the few demands scored on
/// that node's current state.
#[derive(Default)]
pub(crate) struct ScoreMemo {
    /// The typical workload the entries were computed against.
    workload: Vec<TypicalDemand>,
    /// Interned (demand, NVLink group a domain holds the replica to): the group limits the
    /// options.
    demands: HashMap<(Demand, Option<u8>), u32, BuildHasherDefault<FxHasher>>,
    /// Per node index: the stamp the entries are for, and (demand id, best option).
    nodes: Vec<(u64, Vec<(u32, MemoEntry)>)>,
}

/// Distinct demands interned before the memo starts over.
const MEMO_DEMANDS: usize = 4096;

/// A node's best option: its score and its index among the node's device options (`None`:
/// the node offered no option).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MemoEntry {
    pub score: f64,
    pub option: Option<u16>,
}

impl ScoreMemo {
    /// The id of a demand (held to `nvlink_group`, if any) for [`ScoreMemo::get`].
    pub(crate) fn intern(&mut self, demand: &Demand, nvlink_group: Option<u8>) -> u32 {
        if let Some(&id) = self.demands.get(&(demand.clone(), nvlink_group)) {
            return id;
        }
        if self.demands.len() >= MEMO_DEMANDS {
            self.demands.clear();
            self.nodes.clear();
        }
        let id = self.demands.len() as u32;
        self.demands.insert((demand.clone(), nvlink_group), id);
        id
    }

    pub(crate) fn get(&self, node: NodeId, stamp: u64, demand: u32) -> Option<MemoEntry> {
        let (s, entries) = self.nodes.get(node.index())?;
        if *s != stamp {
            return None;
        }
        entries.iter().find(|(d, _)| *d == demand).map(|(_, e)| *e)
    }

    pub(crate) fn insert(&mut self, node: NodeId, stamp: u64, demand: u32, entry: MemoEntry) {
        if self.nodes.len() <= node.index() {
            self.nodes.resize_with(node.index() + 1, Default::default);
        }
        let (s, entries) = &mut self.nodes[node.index()];
        if *s != stamp {
            *s = stamp;
            entries.clear();
        }
        entries.push((demand, entry));
    }
}

/// FxHash (rustc's): the memo's keys are small integers, not attacker-chosen.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }

    fn write_u16(&mut self, i: u16) {
        self.write_u64(i as u64);
    }

    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }

    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("name", &self.name)
            .field("plugins", &self.plugin_names().collect::<Vec<_>>())
            .field("max_feasible_nodes", &self.max_feasible_nodes)
            .field("max_gang_domains", &self.max_gang_domains)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::{ModelId, ModelSet};

    fn demand(gpus: u32, milli: u32, cpu: u64, memory_mib: u64) -> Demand {
        Demand {
            gpus,
            milli,
            gpu_memory_mib: 0,
            models: ModelSet::ANY,
            cpu_milli: cpu,
            memory_mib,
            mig: None,
            sharing_busy_limit_pct: None,
        }
    }

    #[test]
    fn typical_demands_merge_shapes_that_differ_in_memory_only_and_cover_95_percent() {
        // 60 + 30 one-GPU pods differing only in memory are one shape (90); 6 half shares;
        // 4 on another model. 95 % of 100 is 95: 90 + 6 = 96 covers it, the 4 are left out.
        let other = Demand { models: ModelSet::only(ModelId(1)), ..demand(1, 1000, 8000, 0) };
        let input = vec![
            (demand(1, 1000, 8000, 1024), 60),
            (other.clone(), 4),
            (Demand { gpu_memory_mib: 4096, ..demand(1, 500, 2000, 0) }, 6),
            (demand(1, 1000, 8000, 65536), 30),
            (demand(2, 1000, 8000, 0), 0),
        ];
        let w = TypicalDemand::from_demands(input.clone(), TYPICAL_COVERAGE_PCT);
        assert_eq!(
            w,
            vec![
                TypicalDemand { demand: demand(1, 1000, 8000, 0), weight: 90.0 / 96.0 },
                TypicalDemand { demand: demand(1, 500, 2000, 0), weight: 6.0 / 96.0 },
            ]
        );
        let mut reversed = input;
        reversed.reverse();
        assert_eq!(TypicalDemand::from_demands(reversed, TYPICAL_COVERAGE_PCT), w, "order does not matter");
        assert_eq!(TypicalDemand::from_demands(Vec::new(), TYPICAL_COVERAGE_PCT), Vec::new());
        assert_eq!(TypicalDemand::from_demands(vec![(other, 0)], TYPICAL_COVERAGE_PCT), Vec::new());
    }

    #[test]
    fn most_common_breaks_ties_to_the_larger_key() {
        let got = most_common(vec![("a", 2), ("c", 2), ("b", 2)], 50);
        assert_eq!(got, vec![("c", 2, 0.5), ("b", 2, 0.5)]);
    }

    /// A plugin that looks at other nodes (the count of nodes): never memoised.
    struct ClusterWide;

    impl ScorePlugin for ClusterWide {
        fn name(&self) -> &'static str {
            "cluster-wide"
        }

        fn score(&self, ctx: &ScoreContext<'_>, _: &Node, _: &Demand, _: &[DeviceShare]) -> f64 {
            ctx.cluster.nodes().len() as f64
        }
    }

    #[test]
    fn only_policies_of_node_local_plugins_are_memoised() {
        assert!(Policy::grus().memo(&[]).is_some());
        assert!(Policy::binpack().memo(&[]).is_some());
        assert!(Policy::grus().with(0.0, ClusterWide).memo(&[]).is_none());
        assert!(Policy::grus().without_memo().memo(&[]).is_none());
    }

    #[test]
    fn the_memo_starts_over_for_another_workload_or_node_state() {
        let policy = Policy::grus();
        let d = demand(1, 1000, 1000, 0);
        let entry = MemoEntry { score: 7.0, option: Some(0) };
        let id = policy.memo(&[]).unwrap().intern(&d, None);
        policy.memo(&[]).unwrap().insert(NodeId(3), 11, id, entry);
        let mut memo = policy.memo(&[]).unwrap();
        assert_eq!(memo.intern(&d, None), id);
        assert_eq!(memo.get(NodeId(3), 11, id), Some(entry));
        assert_eq!(memo.get(NodeId(3), 12, id), None, "another state of the node");
        assert_eq!(memo.get(NodeId(2), 11, id), None);
        let grouped = memo.intern(&d, Some(0));
        assert_ne!(grouped, id, "the NVLink group is part of the demand");
        assert_eq!(memo.get(NodeId(3), 11, grouped), None);
        drop(memo);
        let w = [TypicalDemand { demand: d.clone(), weight: 1.0 }];
        assert_eq!(policy.memo(&w).unwrap().get(NodeId(3), 11, id), None);
    }
}
