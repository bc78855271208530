//! MIG instances in the cycle: a job asking a MIG profile goes only to GPUs in MIG mode of a
//! model offering it, at a valid position, packed beside other instances; whole GPUs and
//! shares never land on a MIG-mode GPU; preemption frees instances; and any sequence of
//! placements and releases keeps every GPU's layout valid (property).

use crate::common::*;
use grus_scheduler::cluster::{Cluster, GpuSpec, NodeId, NodeSpec, ReplicaAllocation};
use grus_scheduler::demand::Demand;
use grus_scheduler::job::{Job, JobId, Resources};
use grus_scheduler::mig::{self, MigLayout, MigSlot};
use grus_scheduler::place::{filter_node, Constraints, Domain, Placer};
use grus_scheduler::score::Policy;
use proptest::prelude::*;

/// Node 0: `mig_gpus` A100-80GB GPUs in MIG mode; node 1: two plain A100-80GB GPUs.
fn mixed(mig_gpus: usize) -> Cluster {
    let mut m = NodeSpec::new("mig", 256_000, 1 << 21, mig_gpus, "A100-80GB");
    for g in &mut m.gpus {
        g.mig = true;
    }
    Cluster::new(vec![m, NodeSpec::new("plain", 256_000, 1 << 21, 2, "A100-80GB")]).unwrap()
}

fn mig_job(id: u64, profile: &str) -> Job {
    Job::single(id, 0, 1, Resources::mig(profile, 1000, 1024))
}

fn slots_of(sim: &Sim, id: u64) -> Vec<(u32, u8, MigSlot)> {
    let r = sim.running(id).unwrap_or_else(|| panic!("job {id} runs"));
    r.replicas
        .iter()
        .flat_map(|p| {
            p.allocation.devices.iter().map(move |d| (p.allocation.node.0, d.gpu, d.mig.expect("a MIG slot")))
        })
        .collect()
}

#[test]
fn mig_instances_go_only_to_mig_gpus_and_pack_before_splitting_another() {
    let mut sim = Sim::new(mixed(2), vec![queue(0, "q", 0)], vec![]);
    for id in 1..=3 {
        sim.submit(mig_job(id, "1g.10gb"));
    }
    sim.submit(job(4, 0, 1, 2));
    sim.submit(mig_job(5, "3g.40gb"));
    let d = sim.step();
    let mut runs = started(&d);
    runs.sort_unstable();
    assert_eq!(runs, vec![1, 2, 3, 4, 5], "{:?}", d.unplaced);
    let small: Vec<_> = (1..=3).flat_map(|id| slots_of(&sim, id)).collect();
    assert!(small.iter().all(|&(node, gpu, _)| node == 0 && gpu == small[0].1), "packed on one GPU: {small:?}");
    let whole = &sim.running(4).unwrap().replicas[0].allocation;
    assert_eq!(whole.node, NodeId(1), "whole GPUs never take a MIG-mode GPU");
    let (node, gpu, slot) = slots_of(&sim, 5)[0];
    assert_eq!((node, gpu), (0, small[0].1), "the 3g fits beside three 1g in the other half");
    assert!(small.iter().all(|&(_, _, s)| s.start >= slot.start + slot.memory || s.start + s.memory <= slot.start));
    // The GPU's layout is what the replicas hold; the other MIG GPU stays empty for a 7g.
    let layout = sim.input.cluster.node(NodeId(0)).gpus[gpu as usize].mig.unwrap().layout;
    assert_eq!(layout.compute, 6);
    sim.submit(mig_job(6, "7g.80gb"));
    let d = sim.step();
    assert_eq!(started(&d), vec![6], "{:?}", d.unplaced);
}

#[test]
fn a_profile_without_room_waits_with_its_reason_and_shares_never_use_mig_gpus() {
    let mut sim = Sim::new(mixed(1), vec![queue(0, "q", 0)], vec![]);
    sim.submit(mig_job(1, "4g.40gb"));
    assert_eq!(started(&sim.step()), vec![1]);
    sim.submit(mig_job(2, "4g.40gb"));
    sim.submit(mig_job(3, "1g.5gb"));
    let d = sim.step();
    assert!(started(&d).is_empty());
    let why = d.unplaced[&JobId(2)].to_string();
    assert!(why.contains("MIG-mode GPU with room for the profile"), "{why}");
    assert!(d.unplaced.contains_key(&JobId(3)), "an A100-40GB profile has no GPU of an offering model here");
    // A share of one GPU fills the plain node's devices, never the MIG GPU's free half.
    for id in 10..14 {
        sim.submit(Job::single(id, 0, 1, Resources::gpu_share(500, 1000, 1024)));
    }
    let d = sim.step();
    for id in 10..14 {
        assert_eq!(sim.running(id).unwrap().replicas[0].allocation.node, NodeId(1), "{d:?}");
    }
}

#[test]
fn a_higher_priority_mig_job_preempts_the_instance_in_its_way() {
    let mut sim = Sim::new(mixed(1), vec![queue(0, "q", 0)], vec![]);
    sim.submit(mig_job(1, "7g.80gb"));
    assert_eq!(started(&sim.step()), vec![1]);
    sim.submit(prio(mig_job(2, "3g.40gb"), 10));
    let d = sim.step();
    assert_eq!(d.evictions().map(|(victim, _)| victim).collect::<Vec<_>>(), vec![JobId(1)], "{d:?}");
    sim.complete_evictions();
    let d = sim.step();
    assert_eq!(started(&d), vec![2], "{:?}", d.unplaced);
}

#[test]
fn a_job_naming_a_model_without_the_profile_is_never_placed_on_a_mig_gpu() {
    let mut spec = NodeSpec::new("h", 256_000, 1 << 21, 1, "H100-80GB");
    spec.gpus[0].mig = true;
    let mut a = NodeSpec::new("a", 256_000, 1 << 21, 1, "A100-40GB");
    a.gpus[0] = GpuSpec { mig: true, ..GpuSpec::new("A100-40GB", 40_960) };
    let c = Cluster::new(vec![spec, a]).unwrap();
    let mut sim = Sim::new(c, vec![queue(0, "q", 0)], vec![]);
    sim.submit(mig_job(1, "1g.5gb"));
    sim.submit(mig_job(2, "1g.10gb"));
    let d = sim.step();
    let mut runs = started(&d);
    runs.sort_unstable();
    assert_eq!(runs, vec![1, 2]);
    assert_eq!(slots_of(&sim, 1)[0].0, 1, "1g.5gb exists on the A100-40GB only");
    assert_eq!(slots_of(&sim, 2)[0].0, 0, "1g.10gb on the H100 only");
}

/// One step of the property: place a demand (a MIG profile or plain GPUs), or release one
/// placed replica.
#[derive(Clone, Debug)]
enum Op {
    Mig(usize),
    Whole(u32),
    Share(u32),
    Release(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..6).prop_map(Op::Mig),
        1 => (1u32..3).prop_map(Op::Whole),
        1 => (1u32..1000).prop_map(Op::Share),
        3 => (0usize..64).prop_map(Op::Release),
    ]
}

proptest! {
    /// Whatever is asked and released, on a cluster mixing MIG-mode GPUs of several models and
    /// plain GPUs: every MIG instance sits at a valid position of its GPU's model, instances on
    /// a GPU never overlap nor exceed seven compute slices, the GPU's layout is exactly what
    /// its replicas hold, no whole GPU or share lands on a MIG-mode GPU, and a MIG request is
    /// refused only when no MIG-mode GPU of an offering model has a free valid position.
    #[test]
    fn mig_placements_never_break_the_geometry(ops in proptest::collection::vec(op(), 1..60)) {
        let mut specs = Vec::new();
        for (i, model) in ["A100-80GB", "H100-80GB", "A100-40GB"].iter().enumerate() {
            let mut s = NodeSpec::new(&format!("m{i}"), 1 << 30, 1 << 30, 2, model);
            s.max_pods = 1000;
            s.gpus[0].mig = true;
            if i != 1 {
                s.gpus[1].mig = true;
            }
            specs.push(s);
        }
        let mut cluster = Cluster::new(specs).unwrap();
        let policy = Policy::binpack();
        let placer = Placer { policy: &policy, workload: &[] };
        let cons = Constraints::none();
        let names = mig::known_profile_names();
        let mut held: Vec<ReplicaAllocation> = Vec::new();
        for op in ops {
            let resources = match op {
                Op::Release(i) => {
                    if !held.is_empty() {
                        let a = held.remove(i % held.len());
                        cluster.release(&a).unwrap();
                    }
                    continue;
                }
                Op::Mig(i) => Resources::mig(names[(i * 7) % names.len()], 10, 10),
                Op::Whole(n) => Resources::whole_gpus(n, 10, 10),
                Op::Share(m) => Resources::gpu_share(m, 10, 10),
            };
            let Some(demand) = Demand::resolve(&resources, cluster.models()) else {
                prop_assert!(resources.mig_profile.is_some(), "only a profile no node's model offers resolves to nothing");
                continue;
            };
            match placer.best_allocation(&cluster, &demand, &cons, Domain::Anywhere, &[]) {
                Some((a, _)) => {
                    cluster.allocate(&a).map_err(|e| TestCaseError::fail(format!("{e}")))?;
                    for d in &a.devices {
                        let gpu = &cluster.node(a.node).gpus[d.gpu as usize];
                        prop_assert_eq!(d.mig.is_some(), gpu.mig.is_some(), "MIG only on MIG-mode GPUs");
                    }
                    held.push(a);
                }
                None => {
                    if demand.mig.is_some() {
                        for node in cluster.nodes() {
                            prop_assert!(filter_node(node, &demand, &cons, Domain::Anywhere).is_err());
                        }
                    }
                }
            }
            for node in cluster.nodes() {
                for (g, gpu) in node.gpus.iter().enumerate() {
                    let Some(m) = gpu.mig else { continue };
                    let mut layout = MigLayout::default();
                    for a in held.iter().filter(|a| a.node == node.id) {
                        for d in a.devices.iter().filter(|d| d.gpu as usize == g) {
                            let slot = d.mig.unwrap();
                            prop_assert!(slot.profile_in(m.profiles).is_some(), "valid position on {}", node.name);
                            prop_assert!(layout.can_take(slot), "overlap on {} GPU {g}", node.name);
                            layout = layout.take(slot);
                        }
                    }
                    prop_assert_eq!(layout, m.layout);
                    prop_assert!(layout.compute <= mig::COMPUTE_SLICES);
                    prop_assert!(gpu.used_milli <= 1000);
                }
            }
        }
    }
}
