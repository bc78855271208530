//! Synthetic clusters and pending workloads for the throughput bench (`grus-schedbench`) and
//! the criterion benches: seeded, so every run of a given size and seed is the same problem.
//!
//! The cluster mixes GPU models in roughly the proportions of a large shared fleet, groups
//! each node's GPUs into NVLink islands of 4 and two NUMA halves, puts nodes into racks, and
//! sprinkles in what real fleets have: a few unhealthy nodes and devices, tainted nodes, and
//! live utilization on about half the devices. The workload is the mix asked of the bench,
//! drawn per pending item: 70 % single-GPU pods, 15 % GPU shares, 10 % pods of 2-4 GPUs, 5 %
//! gangs of 2-4 members with 8 GPUs each (so gang members are about 14 % of the pods).

use crate::cluster::{Cluster, LiveUtilization, NodeId, NodeSpec, Taint, TaintEffect};
use crate::demand::Demand;
use crate::job::TopologyScope;
use crate::resources::{ModelSet, ModelTable};
use crate::rng::SeededRng;
use crate::score::grus::{ONLINE_MAX_FEASIBLE_NODES, ONLINE_MAX_GANG_DOMAINS};
use crate::score::{Policy, TypicalDemand, TYPICAL_COVERAGE_PCT};

/// GPU models of the synthetic fleet: name, memory, share of nodes (percent, summing to 100).
pub const MODELS: [(&str, u64, u32); 5] = [
    ("H100-80GB", 80 * 1024, 30),
    ("A100-80GB", 80 * 1024, 30),
    ("A100-40GB", 40 * 1024, 15),
    ("L40S", 48 * 1024, 15),
    ("T4", 16 * 1024, 10),
];

/// Nodes per rack.
pub const RACK_SIZE: usize = 32;

/// Devices per NVLink island.
pub const NVLINK_GROUP: usize = 4;

/// How many feasible nodes the bench policy scores per replica: the online bound.
pub const BENCH_MAX_FEASIBLE_NODES: usize = ONLINE_MAX_FEASIBLE_NODES;

/// How many racks (or nodes, NVLink groups) that hold a whole scoped gang the bench policy
/// compares: the online bound.
pub const BENCH_MAX_GANG_DOMAINS: usize = ONLINE_MAX_GANG_DOMAINS;

/// The policy the bench places with: the default `grus` policy, bounded as a scheduling
/// cycle runs it ([`Policy::grus_bounded`]). Give the placer the typical workload of the
/// pending mix ([`typical_workload`]).
pub fn bench_policy() -> Policy {
    Policy::grus_bounded()
}

/// The typical workload of a pending mix (FGD's 95 % coverage), as the cycle derives it
/// from its pending and running jobs: every member counts once.
pub fn typical_workload(pending: &[PendingItem]) -> Vec<TypicalDemand> {
    TypicalDemand::from_demands(
        pending.iter().flat_map(|i| i.members.iter().map(|d| (d.clone(), 1))),
        TYPICAL_COVERAGE_PCT,
    )
}

/// Size and seed of a synthetic cluster.
#[derive(Clone, Copy, Debug)]
pub struct ClusterShape {
    pub nodes: usize,
    pub gpus_per_node: usize,
    pub seed: u64,
}

/// The synthetic fleet, with live utilization already recorded.
pub fn cluster(shape: ClusterShape) -> Cluster {
    let mut rng = SeededRng::new(shape.seed);
    let specs = (0..shape.nodes)
        .map(|i| {
            let mut pick = rng.below(100) as u32;
            let &(model, memory, _) = MODELS
                .iter()
                .find(|&&(_, _, pct)| {
                    let hit = pick < pct;
                    pick = pick.saturating_sub(pct);
                    hit
                })
                .unwrap_or(&MODELS[0]);
            let mut spec = NodeSpec::new(&format!("node-{i:05}"), 192_000, 2 << 20, shape.gpus_per_node, model);
            spec.max_pods = 110;
            spec.rack = Some(format!("rack-{:04}", i / RACK_SIZE));
            spec.labels.insert("pool".into(), if i % 10 == 0 { "reserved" } else { "shared" }.into());
            for (j, g) in spec.gpus.iter_mut().enumerate() {
                g.memory_mib = memory;
                g.nvlink_group = (j / NVLINK_GROUP) as u8;
                g.numa = (j * 2 / shape.gpus_per_node.max(1)) as u8;
                g.healthy = rng.below(500) != 0;
            }
            spec.healthy = rng.below(200) != 0;
            if rng.below(50) == 0 {
                spec.taints.push(Taint {
                    key: "dedicated".into(),
                    value: "infra".into(),
                    effect: TaintEffect::NoSchedule,
                });
            }
            spec
        })
        .collect();
    let mut c = Cluster::new(specs).expect("synthetic node names are unique and models few");
    for n in 0..shape.nodes {
        if rng.below(2) == 0 {
            continue;
        }
        for g in 0..shape.gpus_per_node {
            let busy = rng.below(40) as f32;
            let used = rng.below(4096) as u64;
            c.set_live_utilization(
                NodeId(n as u32),
                g as u8,
                Some(LiveUtilization { busy_pct: busy, memory_used_mib: used }),
            );
        }
    }
    c
}

/// One pending item: a single pod or a gang of identical members.
#[derive(Clone, Debug)]
pub struct PendingItem {
    pub members: Vec<Demand>,
    pub scope: TopologyScope,
}

impl PendingItem {
    pub fn pods(&self) -> usize {
        self.members.len()
    }
}

fn models(table: &ModelTable, names: &[&str]) -> ModelSet {
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    table.resolve(&names).unwrap_or(ModelSet::ANY)
}

/// At least `pods` pending pods in the bench mix, in queue order.
pub fn pending(table: &ModelTable, pods: usize, seed: u64) -> Vec<PendingItem> {
    let mut rng = SeededRng::new(seed ^ 0x5EED_F00D);
    let big = models(table, &["H100-80GB", "A100-80GB"]);
    let choices = [
        ModelSet::ANY,
        ModelSet::ANY,
        big,
        models(table, &["H100-80GB"]),
        models(table, &["A100-80GB", "A100-40GB"]),
        models(table, &["L40S", "T4"]),
    ];
    let mut out = Vec::with_capacity(pods);
    let mut count = 0;
    while count < pods {
        let r = rng.below(100);
        let item = if r < 70 {
            let gpus = 1;
            let m = choices[rng.below(choices.len())];
            PendingItem { members: vec![whole(gpus, m)], scope: TopologyScope::Any }
        } else if r < 85 {
            let milli = [100, 250, 250, 500, 500, 750][rng.below(6)];
            let m = if rng.below(2) == 0 { ModelSet::ANY } else { choices[5] };
            let d = Demand {
                gpus: 1,
                milli,
                gpu_memory_mib: [0, 2048, 4096][rng.below(3)],
                models: m,
                cpu_milli: 2000,
                memory_mib: 8192,
                mig: None,
                sharing_busy_limit_pct: None,
            };
            PendingItem { members: vec![d], scope: TopologyScope::Any }
        } else if r < 95 {
            let gpus = 2 + rng.below(3) as u32;
            PendingItem { members: vec![whole(gpus, choices[rng.below(4)])], scope: TopologyScope::Any }
        } else {
            let size = 2 + rng.below(3);
            let scope = if rng.below(2) == 0 { TopologyScope::Rack } else { TopologyScope::Any };
            PendingItem { members: vec![whole(8, big); size], scope }
        };
        count += item.pods();
        out.push(item);
    }
    out
}

fn whole(gpus: u32, models: ModelSet) -> Demand {
    Demand {
        gpus,
        milli: 1000,
        gpu_memory_mib: 0,
        models,
        cpu_milli: 8000 * gpus as u64,
        memory_mib: 65536 * gpus as u64,
        mig: None,
        sharing_busy_limit_pct: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_problem_and_the_mix_is_as_documented() {
        let shape = ClusterShape { nodes: 200, gpus_per_node: 8, seed: 7 };
        let (a, b) = (cluster(shape), cluster(shape));
        assert_eq!(a.nodes(), b.nodes());
        let pa = pending(a.models(), 20_000, 7);
        let pb = pending(b.models(), 20_000, 7);
        assert_eq!(
            pa.iter().map(|i| (&i.members, i.scope)).collect::<Vec<_>>(),
            pb.iter().map(|i| (&i.members, i.scope)).collect::<Vec<_>>()
        );
        let share = |f: fn(&PendingItem) -> bool| pa.iter().filter(|i| f(i)).count() as f64 / pa.len() as f64;
        let single = share(|i| i.pods() == 1 && i.members[0].gpus == 1 && !i.members[0].is_fractional());
        let fractional = share(|i| i.members[0].is_fractional());
        let multi = share(|i| i.pods() == 1 && i.members[0].gpus > 1);
        let gangs = share(|i| i.pods() > 1);
        for (got, want) in [(single, 0.70), (fractional, 0.15), (multi, 0.10), (gangs, 0.05)] {
            assert!((got - want).abs() < 0.02, "{got} vs {want}");
        }
        assert!(pa.iter().filter(|i| i.pods() > 1).all(|i| i.members.iter().all(|d| d.gpus == 8)));
    }
}
