//! Properties of the capacity index and of the placement choices drawn from it, on random
//! clusters under random sequences of allocations, releases and health changes:
//! - the incrementally kept index equals an index rebuilt from scratch after every step;
//! - no device ever holds more than 1000 milli (invariant 4) or more memory than it has;
//! - `best_allocation` only ever picks a node that `filter_node` accepts, inside the domain it
//!   was given, with an allocation the cluster accepts;
//! - with an unbounded policy it finds a place whenever some node can hold the demand on
//!   devices of one model (the index never hides a fitting node);
//! - candidates come in the order of a plain walk over the index with a table of seen nodes,
//!   and `CapacityIndex::admits` agrees with them node by node.

use std::collections::HashSet;

use grus_scheduler::cluster::CapacityIndex;
use grus_scheduler::cluster::{
    Cluster, DeviceShare, GpuSpec, NodeId, NodeSpec, RackId, ReplicaAllocation, Taint, TaintEffect,
};
use grus_scheduler::demand::Demand;
use grus_scheduler::job::TopologyScope;
use grus_scheduler::place::{candidate_nodes, filter_node, Constraints, Domain, Placer};
use grus_scheduler::resources::{ModelSet, MILLI_PER_GPU};
use grus_scheduler::score::{Binpack, Policy, Topology, Utilization};
use proptest::prelude::*;

const MODELS: [&str; 3] = ["A100", "H100", "T4"];

/// A generated node: rack, GPUs (model, NVLink group, healthy), CPU size, healthy, tainted.
type NodeGen = (u8, Vec<(u8, u8, bool)>, u8, bool, bool);

fn node_spec() -> impl Strategy<Value = NodeGen> {
    (
        0u8..3,                                                                   // rack
        prop::collection::vec((0u8..3, 0u8..3, prop::bool::weighted(0.9)), 0..9), // gpus: model, group, healthy
        0u8..3,                                                                   // cpu size
        prop::bool::weighted(0.9),                                                // healthy
        prop::bool::weighted(0.15),                                               // tainted
    )
}

fn build_cluster(nodes: &[NodeGen]) -> Cluster {
    let specs = nodes
        .iter()
        .enumerate()
        .map(|(i, (rack, gpus, cpu, healthy, tainted))| {
            let mut s = NodeSpec::new(&format!("n{i}"), 4000 * (1 + *cpu as u64), 1 << 16, 0, "A100");
            s.rack = Some(format!("r{rack}"));
            s.healthy = *healthy;
            s.max_pods = 6;
            if *tainted {
                s.taints.push(Taint { key: "k".into(), value: "v".into(), effect: TaintEffect::NoSchedule });
            }
            s.gpus = gpus
                .iter()
                .map(|&(m, group, ok)| GpuSpec {
                    model: MODELS[m as usize].into(),
                    memory_mib: if m == 2 { 16 * 1024 } else { 80 * 1024 },
                    numa: group / 2,
                    nvlink_group: group,
                    healthy: ok,
                    mig: false,
                })
                .collect();
            s
        })
        .collect();
    Cluster::new(specs).expect("unique names, few models")
}

#[derive(Clone, Debug)]
enum Op {
    /// Allocate on node (index modulo), devices (indices modulo, deduplicated) with milli each.
    Allocate {
        node: usize,
        devices: Vec<(usize, u32)>,
        cpu: u64,
        gpu_memory: u64,
    },
    /// Release the allocation at this position (modulo) of those still held.
    Release(usize),
    NodeHealth(usize, bool),
    GpuHealth(usize, usize, bool),
    /// Place with the engine and apply the result.
    Place(DemandSpec),
}

#[derive(Clone, Debug)]
struct DemandSpec {
    gpus: u32,
    milli: u32,
    gpu_memory_mib: u64,
    models: u8,
    cpu: u64,
    tolerate: bool,
}

/// Milli amounts: mostly the round shares real jobs ask for, so that free capacity often
/// equals a request exactly (the boundary an off-by-one would get wrong); sometimes any.
fn milli() -> impl Strategy<Value = u32> {
    prop_oneof![3 => prop::sample::select(vec![100u32, 250, 500, 750, 1000]), 1 => 1u32..=1000]
}

fn demand_spec() -> impl Strategy<Value = DemandSpec> {
    (0u32..5, milli(), prop::sample::select(vec![0u64, 8192, 20480]), 0u8..8, 0u64..6000, any::<bool>()).prop_map(
        |(gpus, milli, gpu_memory_mib, models, cpu, tolerate)| DemandSpec {
            gpus,
            // Shares only with one GPU; whole GPUs otherwise.
            milli: if gpus == 1 { milli } else { 1000 },
            gpu_memory_mib,
            models,
            cpu,
            tolerate,
        },
    )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<usize>(), prop::collection::vec((any::<usize>(), milli()), 1..4), 0u64..3000, 0u64..30000)
            .prop_map(|(node, devices, cpu, gpu_memory)| Op::Allocate { node, devices, cpu, gpu_memory }),
        3 => any::<usize>().prop_map(Op::Release),
        1 => (any::<usize>(), prop::bool::weighted(0.7)).prop_map(|(n, h)| Op::NodeHealth(n, h)),
        1 => (any::<usize>(), any::<usize>(), prop::bool::weighted(0.7)).prop_map(|(n, g, h)| Op::GpuHealth(n, g, h)),
        3 => demand_spec().prop_map(Op::Place),
    ]
}

fn resolve(c: &Cluster, d: &DemandSpec) -> Demand {
    let mut models = ModelSet::ANY;
    for (i, name) in MODELS.iter().enumerate() {
        if d.models & (1 << i) != 0 {
            if let Some(id) = c.models().get(name) {
                models.insert(id);
            }
        }
    }
    Demand {
        gpus: d.gpus,
        milli: if d.gpus == 0 { 0 } else { d.milli },
        gpu_memory_mib: if d.gpus == 0 { 0 } else { d.gpu_memory_mib },
        models,
        cpu_milli: d.cpu,
        memory_mib: 1024,
        mig: None,
        sharing_busy_limit_pct: None,
    }
}

fn check_invariants(c: &Cluster) -> Result<(), TestCaseError> {
    let rebuilt = CapacityIndex::build(c.models().len(), c.nodes());
    prop_assert!(*c.index() == rebuilt, "the incremental index drifted from a rebuilt one");
    for n in c.nodes() {
        for g in &n.gpus {
            prop_assert!(g.used_milli <= MILLI_PER_GPU, "a device holds {} milli", g.used_milli);
            prop_assert!(g.used_memory_mib <= g.memory_mib);
        }
        prop_assert!(n.cpu_used <= n.cpu_milli && n.memory_used <= n.memory_mib && n.pods <= n.max_pods);
    }
    Ok(())
}

/// Some node can hold `d` on devices of one allowed model, as the placement engine places it.
fn fits_somewhere(c: &Cluster, d: &Demand, cons: &Constraints<'_>) -> bool {
    c.nodes().iter().any(|n| {
        filter_node(n, d, cons, Domain::Anywhere).is_ok()
            && (d.gpus == 0
                || d.is_fractional()
                || c.models().ids().filter(|&m| d.models.allows(m)).any(|m| {
                    n.gpus
                        .iter()
                        .filter(|g| g.model == m && g.is_whole_free() && g.memory_mib >= d.gpu_memory_mib)
                        .count()
                        >= d.gpus as usize
                }))
    })
}

/// The candidate order of `candidate_nodes` computed the plain way, straight from the index's
/// public streams with a table of nodes already seen: model by model, for a share partially
/// used devices then nodes with a whole free device, for whole GPUs nodes with k free, each
/// tightest first; a node at its first appearance only.
fn reference_candidates(c: &Cluster, d: &Demand, domain: Domain) -> Vec<NodeId> {
    let ix = c.index();
    let models: Vec<_> = if d.models.is_any() { c.models().ids().collect() } else { d.models.iter().collect() };
    let stream: Vec<NodeId> = if d.gpus == 0 {
        ix.nodes_with_cpu(d.cpu_milli).map(|(_, n)| n).collect()
    } else if d.is_fractional() {
        models
            .iter()
            .flat_map(|&m| {
                ix.partial_devices(m, d.milli).map(|(_, n, _)| n).chain(ix.nodes_with_whole(m, 1).map(|(_, n)| n))
            })
            .collect()
    } else {
        models.iter().flat_map(|&m| ix.nodes_with_whole(m, d.gpus as u16).map(|(_, n)| n)).collect()
    };
    let mut seen = HashSet::new();
    stream
        .into_iter()
        .filter(|n| seen.insert(*n))
        .filter(|&n| match domain {
            Domain::Rack(r) => c.node(n).rack == Some(r),
            _ => true,
        })
        .collect()
}

fn check_placement(
    c: &Cluster,
    placer: &Placer<'_>,
    d: &Demand,
    cons: &Constraints<'_>,
    domain: Domain,
    bounded: bool,
) -> Result<Option<ReplicaAllocation>, TestCaseError> {
    let cands: Vec<NodeId> = candidate_nodes(c, d, domain).collect();
    prop_assert_eq!(&cands, &reference_candidates(c, d, domain), "candidates differ from the plain index walk");
    if domain == Domain::Anywhere {
        for n in c.nodes() {
            let admitted = c.index().admits(n.id, d.models, d.gpus, d.milli, d.cpu_milli);
            prop_assert_eq!(admitted, cands.contains(&n.id), "admits disagrees with the candidates on {:?}", n.id);
        }
    }
    let choice = placer.best_allocation(c, d, cons, domain, &[]).map(|(a, _)| a);
    match &choice {
        Some(a) => {
            let node = c.node(a.node);
            prop_assert_eq!(filter_node(node, d, cons, domain), Ok(()), "picked a node the filter refuses");
            if let Domain::Rack(r) = domain {
                prop_assert_eq!(node.rack, Some(r));
            }
            prop_assert_eq!(a.devices.len(), d.gpus as usize);
            let mut probe = c.clone();
            prop_assert_eq!(probe.allocate(a), Ok(()), "the cluster refuses the engine's choice");
        }
        None if !bounded && domain == Domain::Anywhere => {
            prop_assert!(!fits_somewhere(c, d, cons), "the index hid a node that fits {d:?}");
        }
        None => {}
    }
    Ok(choice)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn index_and_choices_stay_consistent(
        nodes in prop::collection::vec(node_spec(), 1..10),
        ops in prop::collection::vec(op(), 1..60),
        bounded in any::<bool>(),
    ) {
        let mut c = build_cluster(&nodes);
        let mut policy = Policy::new("props").with(1.0, Binpack).with(0.5, Topology).with(0.5, Utilization);
        if bounded {
            policy = policy.with_max_feasible_nodes(2).with_max_gang_domains(1);
        }
        let placer = Placer { policy: &policy, workload: &[] };
        let toleration = [grus_scheduler::cluster::Toleration { key: "k".into(), value: None, effect: None }];
        let mut held: Vec<ReplicaAllocation> = Vec::new();
        check_invariants(&c)?;
        for op in ops {
            let n = c.nodes().len();
            match op {
                Op::Allocate { node, devices, cpu, gpu_memory } => {
                    let node = NodeId((node % n) as u32);
                    let gpus = c.node(node).gpus.len();
                    let mut shares: Vec<DeviceShare> = Vec::new();
                    if gpus > 0 {
                        for (g, milli) in devices {
                            let gpu = (g % gpus) as u8;
                            if shares.iter().all(|s| s.gpu != gpu) {
                                shares.push(DeviceShare::plain(gpu, milli, gpu_memory));
                            }
                        }
                    }
                    let a = ReplicaAllocation { node, cpu_milli: cpu, memory_mib: 512, devices: shares };
                    let before = c.node(node).clone();
                    match c.allocate(&a) {
                        Ok(()) => held.push(a),
                        Err(_) => prop_assert_eq!(c.node(node), &before, "a refused allocation changed the node"),
                    }
                }
                Op::Release(i) if !held.is_empty() => {
                    let a = held.swap_remove(i % held.len());
                    prop_assert_eq!(c.release(&a), Ok(()));
                }
                Op::Release(_) => {}
                Op::NodeHealth(i, h) => c.set_node_health(NodeId((i % n) as u32), h),
                Op::GpuHealth(i, g, h) => {
                    let node = NodeId((i % n) as u32);
                    let gpus = c.node(node).gpus.len();
                    if gpus > 0 {
                        c.set_gpu_health(node, (g % gpus) as u8, h);
                    }
                }
                Op::Place(spec) => {
                    let d = resolve(&c, &spec);
                    let cons = if spec.tolerate {
                        Constraints { tolerations: &toleration, ..Constraints::none() }
                    } else {
                        Constraints::none()
                    };
                    let rack = Domain::Rack(RackId((spec.cpu % 3) as u32));
                    check_placement(&c, &placer, &d, &cons, rack, bounded)?;
                    if let Some(a) = check_placement(&c, &placer, &d, &cons, Domain::Anywhere, bounded)? {
                        c.allocate(&a).expect("checked above");
                        held.push(a);
                    }
                    // A gang of two in one rack: all or nothing.
                    let before_used = c.gpu_used_milli();
                    match placer.try_place_gang(&mut c, &[d.clone(), d.clone()], TopologyScope::Rack, &cons) {
                        Some(allocs) => {
                            prop_assert_eq!(allocs.len(), 2);
                            let racks: Vec<_> = allocs.iter().map(|a| c.node(a.node).rack).collect();
                            prop_assert_eq!(racks[0], racks[1], "a rack-scoped gang spans racks");
                            held.extend(allocs);
                        }
                        None => prop_assert_eq!(c.gpu_used_milli(), before_used, "a failed gang left allocations"),
                    }
                }
            }
            check_invariants(&c)?;
        }
    }
}
