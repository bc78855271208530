//! The default policy of the scheduling cycle: grus, against a typical workload the cycle
//! derives from its own jobs when none is configured.

use crate::common::*;
use grus_scheduler::cluster::{DeviceShare, NodeId, ReplicaAllocation};
use grus_scheduler::cycle::{typical_workload, Decision, PlacedReplica, RunningJob, SchedulerConfig};
use grus_scheduler::demand::Demand;
use grus_scheduler::job::Resources;
use grus_scheduler::resources::ModelSet;
use grus_scheduler::score::TypicalDemand;

fn whole(gpus: u32) -> Demand {
    Demand {
        gpus,
        milli: 1000,
        gpu_memory_mib: 0,
        models: ModelSet::ANY,
        cpu_milli: 1000,
        memory_mib: 0,
        mig: None,
        sharing_busy_limit_pct: None,
    }
}

#[test]
fn the_default_policy_is_grus_bounded_for_a_cycle() {
    let cfg = SchedulerConfig::default();
    assert_eq!(cfg.policy.name, "grus");
    assert!(cfg.policy.max_feasible_nodes < usize::MAX && cfg.policy.max_gang_domains < usize::MAX);
    assert!(cfg.workload.is_empty(), "derived per cycle");
}

#[test]
fn the_typical_workload_comes_from_pending_targets_and_running_replicas() {
    let mut sim = Sim::new(cluster(4, 8, "A100"), vec![queue(1, "q", 32)], vec![job(1, 1, 3, 2), job(2, 1, 1, 1)]);
    assert_eq!(
        typical_workload(&sim.input),
        vec![TypicalDemand { demand: whole(2), weight: 0.75 }, TypicalDemand { demand: whole(1), weight: 0.25 }]
    );
    // A running 1-GPU job with two replicas makes the two shapes equally common; a task
    // naming a model the cluster lacks counts for nothing.
    let running = job(3, 1, 2, 1);
    let replicas = (0..2u8)
        .map(|g| PlacedReplica {
            task: 0,
            allocation: ReplicaAllocation {
                node: NodeId(3),
                cpu_milli: 1000,
                memory_mib: 1024,
                devices: vec![DeviceShare::plain(g, 1000, 0)],
            },
        })
        .collect();
    sim.input.running.push(RunningJob { job: running, replicas, started_at: 0, privileged: false });
    let mut h100 = Resources::whole_gpus(1, 1000, 1024);
    h100.gpu_models = vec!["H100".into()];
    sim.input.pending.push(grus_scheduler::job::Job::single(4, 1, 5, h100));
    let w = typical_workload(&sim.input);
    assert_eq!(w.len(), 2);
    assert!(w.iter().all(|t| t.weight == 0.5), "{w:?}");
    sim.input.pending.clear();
    sim.input.running.clear();
    assert!(typical_workload(&sim.input).is_empty());
}

#[test]
fn the_default_cycle_keeps_whole_nodes_for_the_common_gang() {
    // Two 8-GPU nodes, one with two GPUs taken. Most pending work is 8-GPU pods, so grus puts
    // the 1-GPU pod on the used node and keeps the idle one whole; the 8-GPU pod, queued
    // later, then fits. (Binpack would do the same here; spread would not.)
    let mut sim = Sim::new(cluster(2, 8, "A100"), vec![queue(1, "q", 16)], vec![job(1, 1, 1, 1), job(2, 1, 1, 8)]);
    let taken = ReplicaAllocation {
        node: NodeId(1),
        cpu_milli: 1000,
        memory_mib: 1024,
        devices: (0..2).map(|gpu| DeviceShare::plain(gpu, 1000, 0)).collect(),
    };
    sim.input.cluster.allocate(&taken).unwrap();
    sim.input.running.push(RunningJob {
        job: job(9, 1, 1, 2),
        replicas: vec![PlacedReplica { task: 0, allocation: taken }],
        started_at: 0,
        privileged: false,
    });
    for p in [job(3, 1, 1, 8), job(4, 1, 1, 8), job(5, 1, 1, 8)] {
        sim.input.pending.push(p);
    }
    let decisions = sim.schedule();
    let start = |id: u64| {
        decisions.decisions.iter().find_map(|d| match d {
            Decision::Start { job, replicas, .. } if job.0 == id => Some(replicas[0].allocation.node),
            _ => None,
        })
    };
    assert_eq!(start(1), Some(NodeId(1)));
    assert_eq!(start(2), Some(NodeId(0)));
}
