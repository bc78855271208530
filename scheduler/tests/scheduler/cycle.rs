//! One test per behaviour of the scheduling cycle, named after what it checks.

use crate::common::*;
use grus_scheduler::cluster::{Cluster, NodeId, NodeSpec};
use grus_scheduler::cycle::{Decision, ReservationKind};
use grus_scheduler::explain::{FilterReason, PreemptionFailure, Unplaced};
use grus_scheduler::job::{JobId, Resources, Spread, TopologyScope};
use grus_scheduler::queue::{Queue, ResourceKey, ResourceVector};

#[test]
fn gang_that_does_not_fit_places_nothing_and_says_why() {
    // 2 nodes x 4 GPUs: a gang of 3 x 4 GPUs cannot fit; nothing of it is placed.
    let mut sim = Sim::new(cluster(2, 4, "A100"), vec![queue(1, "q", 0)], vec![job(1, 1, 3, 4)]);
    let d = sim.step();
    assert!(d.decisions.is_empty());
    assert_eq!(sim.input.cluster.gpu_used_milli(), 0);
    match &d.unplaced[&JobId(1)] {
        Unplaced::NoPreemptionPlan { fit, why } => {
            assert_eq!(*why, PreemptionFailure::InsufficientEvenIfAllEvicted);
            match &**fit {
                Unplaced::NoFit { placed, needed, nodes, .. } => {
                    assert_eq!((*placed, *needed), (2, 3));
                    assert_eq!(nodes.counts.get(&FilterReason::NotEnoughWholeGpus), Some(&2));
                }
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unplaced_job_counts_nodes_per_filter_stage() {
    let c = Cluster::new(vec![
        NodeSpec::new("t4", 64_000, 1 << 20, 4, "T4"),
        NodeSpec::new("a100", 64_000, 1 << 20, 2, "A100"),
        NodeSpec::new("cpu", 64_000, 1 << 20, 0, "none"),
    ])
    .unwrap();
    let mut j = job(1, 1, 1, 4);
    j.tasks[0].resources.gpu_models = vec!["A100".into()];
    let mut sim = Sim::new(c, vec![queue(1, "q", 0)], vec![j]);
    let d = sim.step();
    let Unplaced::NoPreemptionPlan { fit, .. } = &d.unplaced[&JobId(1)] else { panic!() };
    let Unplaced::NoFit { nodes, .. } = &**fit else { panic!() };
    assert_eq!(
        nodes.to_string(),
        "1 node have no GPUs; 1 node lack an allowed GPU model; 1 node have too few free whole GPUs"
    );
}

#[test]
fn unknown_gpu_model_and_invalid_jobs_are_explained() {
    let mut unknown = job(1, 1, 1, 1);
    unknown.tasks[0].resources.gpu_models = vec!["B200".into()];
    let mut invalid = job(2, 1, 1, 1);
    invalid.min_members = 5;
    let sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], vec![unknown, invalid]);
    let d = sim.schedule();
    assert!(matches!(d.unplaced[&JobId(1)], Unplaced::UnknownGpuModel { .. }));
    assert!(matches!(d.unplaced[&JobId(2)], Unplaced::Invalid { .. }));
}

#[test]
fn jobs_start_by_priority_then_age_within_a_queue() {
    // Room for one 8-GPU job: the high-priority one wins, then the older of two equals.
    let jobs = vec![job(1, 1, 1, 8), prio(job(2, 1, 1, 8), 100), job(3, 1, 1, 8)];
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], jobs);
    assert_eq!(started(&sim.step()), vec![2]);
    sim.finish(2);
    assert_eq!(started(&sim.step()), vec![1]);
}

#[test]
fn workspace_starts_before_older_batch_work_of_its_queue_at_the_same_priority() {
    // Room for one 8-GPU job; the workspace came last but starts first; priority still wins.
    let mut workspace = job(3, 1, 1, 8);
    workspace.submitted_at = 10;
    workspace.interactive = true;
    let jobs = vec![job(1, 1, 1, 8), workspace, prio(job(2, 1, 1, 8), 100)];
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], jobs);
    assert_eq!(started(&sim.step()), vec![2]);
    sim.finish(2);
    assert_eq!(started(&sim.step()), vec![3]);
    sim.finish(3);
    assert_eq!(started(&sim.step()), vec![1]);
}

#[test]
fn queue_with_the_largest_deficit_is_served_first() {
    // Queue 1 already holds 4 of 8 GPUs; both queues want 4 more; only queue 2's job fits.
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "a", 0), queue(2, "b", 0)], vec![job(1, 1, 1, 4)]);
    sim.step();
    sim.submit(job(2, 1, 1, 4));
    sim.submit(job(3, 2, 1, 4));
    let d = sim.step();
    assert_eq!(started(&d), vec![3]);
    assert!(d.shares[&grus_scheduler::job::QueueId(2)].fair > 0.0);
}

#[test]
fn weights_split_a_contended_cluster() {
    let mut a = queue(1, "a", 0);
    a.weight = 3;
    let b = queue(2, "b", 0);
    let jobs: Vec<_> = (0..8).map(|i| job(10 + i, 1, 1, 1)).chain((0..8).map(|i| job(20 + i, 2, 1, 1))).collect();
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![a, b], jobs);
    sim.step();
    let in_a = sim.input.running.iter().filter(|r| r.job.queue.0 == 1).count();
    assert_eq!((in_a, sim.input.running.len()), (6, 8));
}

#[test]
fn queue_limit_is_never_exceeded() {
    let mut q = queue(1, "q", 0);
    q.limit = gpus(4);
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![q], vec![job(1, 1, 1, 3), job(2, 1, 1, 2)]);
    let d = sim.step();
    assert_eq!(started(&d), vec![1]);
    assert_eq!(d.unplaced[&JobId(2)], Unplaced::QueueLimit { queue: "q".into(), resource: "GPUs".into() });
}

#[test]
fn queue_that_cannot_borrow_stops_at_its_guarantee() {
    let mut q = queue(1, "q", 2);
    q.can_borrow = false;
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![q], vec![job(1, 1, 1, 2), job(2, 1, 1, 1)]);
    let d = sim.step();
    assert_eq!(started(&d), vec![1]);
    assert!(matches!(&d.unplaced[&JobId(2)], Unplaced::QueueLimit { resource, .. } if resource.contains("borrow")));
}

#[test]
fn model_quota_steers_the_job_to_another_model() {
    let c = Cluster::new(vec![
        NodeSpec::new("a", 64_000, 1 << 20, 4, "A100"),
        NodeSpec::new("h", 64_000, 1 << 20, 8, "H100"),
    ])
    .unwrap();
    let mut q = queue(1, "q", 0);
    q.limit = ResourceVector::new().with(ResourceKey::gpu_model("A100"), 0).with(ResourceKey::gpu_model("H100"), 8000);
    q.limit.set(ResourceKey::gpu_model("A100"), 1); // effectively none: 1 milli
                                                    // Binpack would pick the fuller A100 node for 4 GPUs; the A100 limit sends it to H100.
    let mut sim = Sim::new(c, vec![q], vec![job(1, 1, 1, 4)]);
    let d = sim.step();
    let (_, replicas) = d.starts().next().expect("started");
    assert_eq!(sim.input.cluster.node(replicas[0].allocation.node).name, "h");
}

#[test]
fn borrowed_job_is_evicted_when_guaranteed_queue_needs_room() {
    // Queue b borrows the whole node; queue a (guarantee 4) arrives and reclaims.
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "a", 4), queue(2, "b", 0)], vec![job(1, 2, 1, 8)]);
    let d = sim.step();
    assert!(matches!(d.decisions[0], Decision::Start { borrowed: true, .. }));
    sim.submit(job(2, 1, 1, 4));
    let d = sim.step();
    assert_eq!(evicted(&d), vec![(1, 2)]);
    assert_eq!(d.unplaced[&JobId(2)], Unplaced::AwaitingEviction { victims: vec![1] });
}

#[test]
fn guaranteed_job_is_not_evicted_for_a_borrower() {
    // Queue a runs inside its guarantee; queue b (no guarantee) may not take it back.
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "a", 8), queue(2, "b", 0)], vec![job(1, 1, 1, 8)]);
    sim.step();
    sim.submit(prio(job(2, 2, 1, 4), 10_000));
    let d = sim.step();
    assert!(evicted(&d).is_empty());
    assert!(matches!(&d.unplaced[&JobId(2)], Unplaced::NoPreemptionPlan { why: PreemptionFailure::NotEntitled, .. }));
}

#[test]
fn higher_priority_job_evicts_lower_priority_in_its_queue() {
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], vec![job(1, 1, 1, 4)]);
    sim.step();
    sim.input.now = 50;
    sim.submit(job(2, 1, 1, 4));
    sim.step();
    sim.input.now = 100;
    sim.submit(prio(job(3, 1, 1, 4), 1000));
    let d = sim.step();
    assert_eq!(evicted(&d), vec![(2, 3)], "the younger of two equal victims (fewer GPU-seconds lost), and only one");
}

#[test]
fn lower_priority_job_never_evicts_higher() {
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], vec![prio(job(1, 1, 1, 8), 100)]);
    sim.step();
    sim.submit(job(2, 1, 1, 8));
    let d = sim.step();
    assert!(evicted(&d).is_empty());
    assert!(matches!(d.unplaced[&JobId(2)], Unplaced::NoPreemptionPlan { why: PreemptionFailure::NotEntitled, .. }));
}

#[test]
fn preemption_picks_the_fewest_victims() {
    // Four 1-GPU jobs and one 4-GPU job on 8 GPUs, all priority 0; a 4-GPU job of priority 1000
    // needs 4 GPUs on one node: evicting the single 4-GPU job beats evicting four.
    let jobs = vec![job(1, 1, 1, 1), job(2, 1, 1, 1), job(3, 1, 1, 1), job(4, 1, 1, 1), job(5, 1, 1, 4)];
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], jobs);
    sim.step();
    assert_eq!(sim.input.running.len(), 5);
    sim.submit(prio(job(6, 1, 1, 4), 1000));
    assert_eq!(evicted(&sim.step()), vec![(5, 6)]);
}

#[test]
fn preemption_evicts_whole_gangs_only() {
    // A 2-replica gang spans both nodes; making room for 8 GPUs on one node evicts the gang
    // as a whole (one Evict for the job), never one replica.
    let mut sim = Sim::new(cluster(2, 8, "A100"), vec![queue(1, "q", 0)], vec![job(1, 1, 2, 6)]);
    sim.step();
    sim.submit(prio(job(2, 1, 1, 8), 1000));
    let d = sim.step();
    assert_eq!(evicted(&d), vec![(1, 2)]);
    sim.complete_evictions();
    assert!(!sim.is_running(1));
    assert_eq!(sim.input.cluster.gpu_used_milli(), 0, "all replicas of the victim left together");
}

#[test]
fn grace_period_then_preemptor_placed() {
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], vec![job(1, 1, 1, 8)]);
    sim.step();
    sim.submit(prio(job(2, 1, 1, 8), 1000));
    assert_eq!(evicted(&sim.step()), vec![(1, 2)]);
    // During the grace period: the preemptor waits, no second eviction, nobody takes the node.
    sim.input.now = 10;
    sim.submit(job(3, 1, 1, 1));
    let d = sim.step();
    assert!(d.decisions.is_empty(), "{:?}", d.decisions);
    assert_eq!(d.unplaced[&JobId(2)], Unplaced::AwaitingEviction { victims: vec![1] });
    assert!(d.reservations.iter().any(|r| r.job == JobId(2) && r.kind == ReservationKind::Preemption));
    // The victim leaves: the preemptor starts first (before the requeued victim and job 3).
    sim.input.now = 30;
    sim.complete_evictions();
    let d = sim.step();
    assert_eq!(started(&d), vec![2]);
    assert!(sim.input.evictions.is_empty());
}

#[test]
fn eviction_cancelled_when_preemptor_placed_elsewhere() {
    let mut sim = Sim::new(cluster(2, 8, "A100"), vec![queue(1, "q", 0)], vec![job(1, 1, 1, 8), job(2, 1, 1, 8)]);
    sim.step();
    sim.submit(prio(job(3, 1, 1, 8), 1000));
    let d = sim.step();
    assert_eq!(evicted(&d).len(), 1);
    let victim = evicted(&d)[0].0;
    let other = if victim == 1 { 2 } else { 1 };
    // The other job ends during the grace period: the preemptor goes there instead.
    sim.finish(other);
    let d = sim.step();
    assert_eq!(started(&d), vec![3]);
    assert_eq!(cancelled(&d), vec![(victim, 3)]);
    assert!(sim.is_running(victim));
}

#[test]
fn eviction_cancelled_when_preemptor_is_cancelled() {
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], vec![job(1, 1, 1, 8)]);
    sim.step();
    sim.submit(prio(job(2, 1, 1, 8), 1000));
    sim.step();
    let keep = sim.input.evictions.clone();
    sim.cancel(2);
    sim.input.evictions = keep; // the shell still has the eviction in flight
    let d = sim.step();
    assert_eq!(cancelled(&d), vec![(1, 2)]);
}

#[test]
fn minimum_runtime_protects_young_jobs() {
    let mut young = job(1, 1, 1, 8);
    young.min_runtime_s = 600;
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], vec![young]);
    sim.step();
    sim.input.now = 100;
    sim.submit(prio(job(2, 1, 1, 8), 1000));
    let d = sim.step();
    assert!(matches!(
        d.unplaced[&JobId(2)],
        Unplaced::NoPreemptionPlan { why: PreemptionFailure::AllCandidatesProtected { by_min_runtime: 1, .. }, .. }
    ));
    sim.input.now = 600;
    assert_eq!(evicted(&sim.step()), vec![(1, 2)]);
}

#[test]
fn privileged_and_non_preemptible_jobs_are_never_victims() {
    let mut pinned = job(2, 1, 1, 4);
    pinned.preemptible = false;
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 8)], vec![job(1, 1, 1, 4), pinned]);
    sim.step();
    sim.input.running.iter_mut().find(|r| r.job.id == JobId(1)).unwrap().privileged = true;
    sim.submit(prio(job(3, 1, 1, 4), 1000));
    let d = sim.step();
    assert!(matches!(
        d.unplaced[&JobId(3)],
        Unplaced::NoPreemptionPlan { why: PreemptionFailure::AllCandidatesProtected { privileged: 2, .. }, .. }
    ));
}

#[test]
fn non_preemptible_job_may_not_borrow() {
    let mut pinned = job(1, 1, 1, 4);
    pinned.preemptible = false;
    let sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 2)], vec![pinned]);
    assert!(
        matches!(&sim.schedule().unplaced[&JobId(1)], Unplaced::QueueLimit { resource, .. } if resource.contains("non-preemptible"))
    );
}

#[test]
fn high_priority_job_at_its_queue_limit_evicts_lower_priority_of_its_queue() {
    let mut q = queue(1, "q", 0);
    q.limit = gpus(4);
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![q], vec![job(1, 1, 1, 4)]);
    sim.step();
    sim.submit(prio(job(2, 1, 1, 4), 1000));
    assert_eq!(evicted(&sim.step()), vec![(1, 2)]);
}

#[test]
fn elastic_job_starts_at_min_and_grows_when_capacity_frees() {
    let mut sim =
        Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], vec![job(1, 1, 1, 4), elastic(job(2, 1, 1, 2), 1, 4)]);
    let d = sim.step();
    assert_eq!(started(&d), vec![1, 2]);
    assert_eq!(sim.running(2).unwrap().replicas.len(), 2, "min 1, and one more fits beside job 1");
    sim.finish(1);
    let d = sim.step();
    assert!(matches!(&d.decisions[..], [Decision::Grow { job: JobId(2), replicas }] if replicas.len() == 2));
    assert_eq!(sim.running(2).unwrap().replicas.len(), 4);
    assert!(sim.step().decisions.is_empty(), "at its maximum");
}

#[test]
fn elastic_job_shrinks_for_a_higher_priority_job_and_grows_back() {
    // One node of 8 GPUs: the elastic job (min 2, max 8 replicas of 1 GPU) takes all of it.
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], vec![elastic(job(1, 1, 1, 1), 2, 8)]);
    sim.step();
    assert_eq!(sim.running(1).unwrap().replicas.len(), 8);
    sim.submit(prio(job(2, 1, 1, 3), 100));
    let d = sim.step();
    assert_eq!(shrunk(&d), vec![(1, 3)], "three spare replicas given back, the job is not evicted");
    assert!(evicted(&d).is_empty());
    assert!(matches!(&d.unplaced[&JobId(2)], Unplaced::AwaitingEviction { victims } if victims == &vec![1]));
    // In its grace period the shrink is not decided again, and the job does not grow.
    let d = sim.step();
    assert!(d.decisions.is_empty(), "{:?}", d.decisions);
    sim.complete_evictions();
    let d = sim.step();
    assert_eq!(started(&d), vec![2]);
    assert_eq!(sim.running(1).unwrap().replicas.len(), 5, "it runs on");
    sim.finish(2);
    let d = sim.step();
    assert!(matches!(&d.decisions[..], [Decision::Grow { job: JobId(1), replicas }] if replicas.len() == 3));
}

#[test]
fn a_shrink_never_goes_below_the_elastic_minimum_and_a_whole_job_goes_instead() {
    // The elastic job (min 6 of 8) can give back 2 GPUs; the preemptor needs 4: the other
    // lower-priority job (4 GPUs) is evicted and the elastic one keeps all its replicas.
    let mut sim =
        Sim::new(cluster(1, 12, "A100"), vec![queue(1, "q", 0)], vec![elastic(job(1, 1, 1, 1), 6, 8), job(3, 1, 1, 4)]);
    sim.step();
    assert_eq!(sim.running(1).unwrap().replicas.len(), 8);
    // Time passes: the elastic job has used more GPU-seconds, job 3 is the cheaper victim.
    sim.input.now += 10;
    sim.submit(prio(job(2, 1, 1, 4), 100));
    let d = sim.step();
    assert_eq!(evicted(&d), vec![(3, 2)]);
    assert!(shrunk(&d).is_empty(), "spare replicas that are not enough are kept: {:?}", d.decisions);
    // Needing 6: both the spare replicas and the whole job.
    let mut sim =
        Sim::new(cluster(1, 12, "A100"), vec![queue(1, "q", 0)], vec![elastic(job(1, 1, 1, 1), 6, 8), job(3, 1, 1, 4)]);
    sim.step();
    sim.input.now += 10;
    sim.submit(prio(job(2, 1, 1, 6), 100));
    let d = sim.step();
    assert_eq!(shrunk(&d), vec![(1, 2)]);
    assert_eq!(evicted(&d), vec![(3, 2)]);
}

#[test]
fn a_shrink_in_flight_that_no_longer_suffices_is_redone_or_becomes_an_eviction() {
    for (min, widened) in [(2, true), (4, false)] {
        let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], vec![elastic(job(1, 1, 1, 1), min, 8)]);
        sim.step();
        sim.submit(prio(job(2, 1, 1, 4), 100));
        let d = sim.step();
        assert_eq!(shrunk(&d), vec![(1, 4)]);
        // A GPU the shrink frees fails in the grace period: four healthy GPUs no longer come free.
        let (_, given) = d.shrinks().next().unwrap();
        let a = &given[0].allocation;
        sim.input.cluster.set_gpu_health(a.node, a.devices[0].gpu, false);
        let d = sim.step();
        if widened {
            // Another replica is given back instead; the one on the failed GPU runs on.
            assert_eq!(shrunk(&d), vec![(1, 4)], "min {min}: {:?}", d.decisions);
            let (_, now_given) = d.shrinks().next().unwrap();
            assert!(now_given.iter().all(|p| p.allocation.devices != a.devices));
            assert!(evicted(&d).is_empty());
        } else {
            assert_eq!(evicted(&d), vec![(1, 2)], "min {min}: {:?}", d.decisions);
            assert!(shrunk(&d).is_empty());
        }
    }
}

#[test]
fn extra_replicas_beyond_min_members_are_best_effort() {
    let mut j = job(1, 1, 4, 4);
    j.min_members = 2;
    let mut sim = Sim::new(cluster(3, 4, "A100"), vec![queue(1, "q", 0)], vec![j]);
    let d = sim.step();
    assert_eq!(d.starts().next().unwrap().1.len(), 3);
    sim.finish(1);
}

#[test]
fn node_scoped_extras_stay_on_the_gang_node() {
    let mut j = Job1::new();
    j.0.tasks[0].topology = TopologyScope::Node;
    j.0.min_members = 1;
    let mut sim = Sim::new(cluster(2, 8, "A100"), vec![queue(1, "q", 0)], vec![j.0]);
    let d = sim.step();
    let replicas = d.starts().next().unwrap().1;
    assert_eq!(replicas.len(), 4);
    assert!(replicas.iter().all(|r| r.allocation.node == replicas[0].allocation.node));
}

struct Job1(grus_scheduler::job::Job);
impl Job1 {
    fn new() -> Job1 {
        Job1(job(1, 1, 4, 2))
    }
}

#[test]
fn backfill_does_not_delay_reserved_gang() {
    // Two nodes x 8 GPUs. Job 1 (8 GPUs) runs for 100 s on node 0; node 1 is half used by a job
    // without known end. A gang of 2 x 8 GPUs is blocked and reserves both nodes; starting at
    // t=100 at the earliest. A short job (ends at 50) may backfill; a long one may not.
    let mut sim = Sim::new(
        cluster(2, 8, "A100"),
        vec![queue(1, "q", 0)],
        vec![runtime(job(1, 1, 1, 8), 100), runtime(job(2, 1, 1, 4), 10)],
    );
    sim.step();
    sim.submit(job(3, 1, 2, 8)); // same priority as the running jobs: may not preempt them
    sim.submit(runtime(job(4, 1, 1, 2), 500));
    sim.submit(runtime(job(5, 1, 1, 2), 5));
    let d = sim.step();
    let r = d.reservations.iter().find(|r| r.job == JobId(3)).expect("the gang reserves");
    assert_eq!(r.kind, ReservationKind::Backfill { earliest_start: 100 });
    assert_eq!(r.nodes.len(), 2);
    assert_eq!(started(&d), vec![5], "only the job that ends in time backfills");
    assert_eq!(d.unplaced[&JobId(4)], Unplaced::Reserved { behind: 3 });
}

/// Nobody knows when jobs 1 and 2 end: the blocked 8-GPU job reserves the node of the one
/// that started last (run times are heavy-tailed: the longer a job has run, the longer it
/// is likely to go on), not of the lower id.
#[test]
fn a_reservation_without_known_ends_waits_for_the_youngest_job() {
    let mut sim = Sim::new(cluster(2, 8, "A100"), vec![queue(1, "q", 0)], vec![job(1, 1, 1, 6)]);
    let first = sim.step();
    let old_node = first.starts().next().unwrap().1[0].allocation.node;
    sim.input.now = 1000;
    sim.submit(job(2, 1, 1, 6));
    let second = sim.step();
    let young_node = second.starts().next().unwrap().1[0].allocation.node;
    assert_ne!(old_node, young_node);
    sim.input.now = 1010;
    sim.submit(job(3, 1, 1, 8));
    let d = sim.step();
    let r = d.reservations.iter().find(|r| r.job == JobId(3)).expect("the job reserves");
    assert_eq!(r.nodes.iter().copied().collect::<Vec<_>>(), vec![young_node]);
}

#[test]
fn a_job_backfills_on_its_predicted_p90_and_a_user_given_maximum_wins() {
    // As above: the gang of job 3 may start at t=100 at the earliest. Jobs without a maximum
    // runtime backfill on what their history predicts: one predicted to end at 40 starts, one
    // predicted to end at 400 waits; a maximum runtime of 500 wins over a short prediction.
    let mut sim = Sim::new(
        cluster(2, 8, "A100"),
        vec![queue(1, "q", 0)],
        vec![runtime(job(1, 1, 1, 8), 100), runtime(job(2, 1, 1, 4), 10)],
    );
    sim.step();
    let predicted = |mut j: grus_scheduler::job::Job, p90: u64| {
        j.predicted_runtime_s = Some(p90);
        j
    };
    sim.submit(job(3, 1, 2, 8));
    sim.submit(predicted(job(4, 1, 1, 2), 400));
    sim.submit(predicted(job(5, 1, 1, 1), 40));
    sim.submit(predicted(runtime(job(6, 1, 1, 1), 500), 20));
    let d = sim.step();
    assert_eq!(
        d.reservations.iter().find(|r| r.job == JobId(3)).unwrap().kind,
        ReservationKind::Backfill { earliest_start: 100 }
    );
    assert_eq!(started(&d), vec![5], "only the job predicted to end in time backfills");
    assert_eq!(d.unplaced[&JobId(4)], Unplaced::Reserved { behind: 3 });
    assert_eq!(d.unplaced[&JobId(6)], Unplaced::Reserved { behind: 3 }, "its maximum runtime wins");
}

#[test]
fn jobs_away_from_the_reserved_nodes_still_start() {
    let c = Cluster::new(vec![
        NodeSpec::new("a", 64_000, 1 << 20, 8, "A100"),
        NodeSpec::new("t", 64_000, 1 << 20, 4, "T4"),
    ])
    .unwrap();
    let mut sim = Sim::new(c, vec![queue(1, "q", 0)], vec![runtime(job(1, 1, 1, 6), 100)]);
    sim.step();
    let mut big = prio(job(2, 1, 1, 8), 1000);
    big.tasks[0].resources.gpu_models = vec!["A100".into()];
    sim.submit(big);
    sim.submit(job(3, 1, 1, 2)); // no known end: may not touch node a, goes to the T4 node
    let d = sim.step();
    assert_eq!(started(&d), vec![3]);
    let (_, replicas) = d.starts().next().unwrap();
    assert_eq!(sim.input.cluster.node(replicas[0].allocation.node).name, "t");
}

#[test]
fn fractional_shares_pack_onto_one_device() {
    let jobs: Vec<_> =
        (1..=4).map(|i| grus_scheduler::job::Job::single(i, 1, 1, Resources::gpu_share(250, 1000, 1024))).collect();
    let mut sim = Sim::new(cluster(1, 2, "T4"), vec![queue(1, "q", 0)], jobs);
    sim.step();
    let node = sim.input.cluster.node(grus_scheduler::cluster::NodeId(0));
    assert_eq!(node.gpus.iter().map(|g| g.used_milli).collect::<Vec<_>>(), vec![1000, 0]);
}

#[test]
fn a_settled_state_schedules_nothing() {
    let mut sim = Sim::new(
        cluster(2, 8, "A100"),
        vec![queue(1, "a", 4), queue(2, "b", 4)],
        vec![job(1, 1, 2, 4), job(2, 2, 1, 8), job(3, 2, 1, 8), prio(job(4, 1, 1, 2), 5)],
    );
    for _ in 0..6 {
        sim.step();
        sim.complete_evictions();
    }
    let d = sim.schedule();
    assert!(d.decisions.is_empty(), "{:?}", d.decisions);
    assert_eq!(d, sim.schedule(), "deterministic");
}

#[test]
fn project_limit_caps_its_queues_together() {
    use grus_scheduler::queue::{Project, Queues, Tenant};
    let t = Tenant::new(0, "t");
    let p = Project { limit: gpus(6), ..Project::new(0, 0, "p") };
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![], vec![job(1, 1, 1, 4), job(2, 2, 1, 4)]);
    sim.input.queues = Queues::new(vec![t], vec![p], vec![Queue::new(1, 0, "a"), Queue::new(2, 0, "b")]).unwrap();
    let d = sim.step();
    assert_eq!(started(&d).len(), 1);
    assert!(d.unplaced.values().any(|u| matches!(u, Unplaced::QueueLimit { queue, .. } if queue == "project p")));
}

#[test]
fn elastic_job_grows_only_after_pending_jobs_had_their_turn() {
    let mut sim = Sim::new(
        cluster(1, 8, "A100"),
        vec![queue(1, "a", 0), queue(2, "b", 0)],
        vec![elastic(job(1, 1, 1, 2), 1, 4), job(2, 2, 1, 4)],
    );
    let d = sim.step();
    assert_eq!(d.starts().count(), 2);
    assert_eq!(sim.running(1).unwrap().replicas.len(), 2, "min 1, grown by 1 in the same Start");
    assert!(!d.decisions.iter().any(|x| matches!(x, Decision::Grow { .. })));
}

#[test]
fn waiting_preemptor_holds_its_quota_from_smaller_jobs_of_its_queue() {
    // Regression (livelock found by the property test): a queue that may not borrow, at its
    // guarantee; a high-priority job evicts a low one to get the quota, and a small job of the
    // same queue took the freed quota before the preemptor could start; then the preemptor
    // evicted it, the first victim restarted, and so on.
    let mut q = queue(1, "q", 4);
    q.can_borrow = false;
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![q], vec![job(1, 1, 1, 4)]);
    sim.step();
    sim.submit(prio(job(2, 1, 1, 4), 1000));
    sim.submit(job(3, 1, 1, 1));
    let d = sim.step();
    assert_eq!(evicted(&d), vec![(1, 2)]);
    assert!(started(&d).is_empty(), "job 3 may not take the quota job 2 waits for");
    assert!(matches!(&d.unplaced[&JobId(3)], Unplaced::QueueLimit { .. }));
    sim.complete_evictions();
    assert_eq!(started(&sim.step()), vec![2]);
}

#[test]
fn higher_priority_job_takes_the_guarantee_ahead_of_borrowed_lower_priority_work() {
    // Regression (livelock): a non-preemptible job may not borrow; lower-priority work above
    // the guarantee is borrowed, so the high-priority job is inside the guarantee and starts
    // without evicting anyone.
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 1)], vec![job(1, 1, 1, 2), job(2, 1, 1, 1)]);
    sim.step();
    let mut pinned = prio(job(3, 1, 1, 1), 100);
    pinned.preemptible = false;
    sim.submit(pinned);
    let d = sim.step();
    assert_eq!(started(&d), vec![3]);
    assert!(evicted(&d).is_empty());
}

#[test]
fn nodes_held_for_a_waiting_job_are_explained_as_reserved() {
    let mut sim = Sim::new(cluster(2, 8, "A100"), vec![queue(1, "q", 0)], vec![job(1, 1, 1, 8), job(2, 1, 1, 6)]);
    sim.step();
    sim.submit(prio(job(3, 1, 1, 8), 1000));
    sim.submit(job(4, 1, 1, 4));
    let d = sim.step();
    assert_eq!(evicted(&d).len(), 1);
    let Unplaced::NoPreemptionPlan { fit, .. } = &d.unplaced[&JobId(4)] else { panic!("{:?}", d.unplaced) };
    let Unplaced::NoFit { nodes, .. } = &**fit else { panic!() };
    assert_eq!(nodes.counts.get(&FilterReason::Reserved), Some(&1), "{nodes}");
}

#[test]
fn higher_priority_job_evicts_borrowed_work_of_a_sibling_queue_but_not_of_another_project() {
    use grus_scheduler::queue::{Project, Queues, Tenant};
    let tenant = Tenant::new(0, "t");
    let project = |id, name: &str| Project::new(id, 0, name);
    let tree = |b_project| {
        Queues::new(
            vec![tenant.clone()],
            vec![project(0, "p0"), project(1, "p1")],
            vec![Queue::new(1, 0, "a"), Queue::new(2, b_project, "b")],
        )
        .unwrap()
    };
    for (b_project, evicts) in [(0, true), (1, false)] {
        let mut sim = Sim::new(cluster(1, 8, "A100"), vec![], vec![job(1, 2, 1, 8)]);
        sim.input.queues = tree(b_project);
        sim.step();
        sim.submit(prio(job(2, 1, 1, 8), 1000));
        let d = sim.step();
        assert_eq!(evicted(&d) == vec![(1, 2)], evicts, "project {b_project}: {:?}", d.unplaced);
    }
}

#[test]
fn decayed_past_usage_lowers_a_queue_in_the_order() {
    use grus_scheduler::fairshare::{FairShareConfig, PastUsage};
    use grus_scheduler::job::QueueId;
    let run = |history: bool| {
        let mut sim = Sim::new(
            cluster(1, 8, "A100"),
            vec![queue(1, "a", 0), queue(2, "b", 0)],
            vec![job(1, 1, 1, 8), job(2, 2, 1, 8)],
        );
        sim.input.now = 10_000;
        if history {
            sim.config.fair_share = FairShareConfig { half_life_s: Some(3600), history_weight: 0.5 };
            // Queue a held the whole cluster for the last few hours.
            let past = PastUsage::default().accumulate(&gpus(8), 10_000, 3600);
            sim.input.past_usage.insert(QueueId(1), past);
        }
        started(&sim.schedule())
    };
    assert_eq!(run(false), vec![1], "equal shares: the lower queue id first");
    assert_eq!(run(true), vec![2], "queue a used more in the past: b first");
}

#[test]
fn an_inconsistent_snapshot_is_refused() {
    use grus_scheduler::cycle::InputError;
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![queue(1, "q", 0)], vec![job(1, 1, 1, 4)]);
    sim.step();
    assert_eq!(sim.input.validate(), Ok(()));
    let mut lost = sim.input.clone();
    lost.running.clear(); // the cluster still holds the job's GPUs
    assert!(matches!(lost.validate(), Err(InputError::UsageMismatch(_))));
    let mut twice = sim.input.clone();
    twice.pending.push(twice.running[0].job.clone());
    assert_eq!(twice.validate(), Err(InputError::DuplicateJob(JobId(1))));
}

/// Capacity the control plane freed on a node for a job whose dispatch has not arrived is
/// kept for it: another waiting job that would fit there waits (and says the capacity is
/// reserved), and the job, once here, takes it.
#[test]
fn capacity_held_for_an_arriving_job_is_left_to_it() {
    use grus_scheduler::cluster::NodeId;
    use grus_scheduler::cycle::CapacityHold;
    // Two nodes x 4 GPUs; node 0 is held for job 9, which is not here yet.
    let mut sim = Sim::new(cluster(2, 4, "A100"), vec![queue(1, "q", 0)], vec![job(1, 1, 1, 4), job(2, 1, 1, 4)]);
    sim.input.holds = vec![CapacityHold { job: JobId(9), nodes: [NodeId(0)].into_iter().collect() }];
    let d = sim.step();
    assert_eq!(started(&d), vec![1], "one job on the free node");
    assert_eq!(sim.running(1).unwrap().replicas[0].allocation.node, NodeId(1));
    let fit = match &d.unplaced[&JobId(2)] {
        Unplaced::NoPreemptionPlan { fit, .. } => &**fit,
        other => other,
    };
    match fit {
        Unplaced::NoFit { nodes, .. } => assert_eq!(nodes.counts.get(&FilterReason::Reserved), Some(&1), "{nodes:?}"),
        other => panic!("job 2 should wait for reserved capacity: {other:?}"),
    }
    // Job 9 arrives (lower priority than job 2 even): it starts on the node kept for it.
    sim.submit(prio(job(9, 1, 1, 4), -5));
    let d = sim.step();
    assert_eq!(started(&d), vec![9]);
    assert_eq!(sim.running(9).unwrap().replicas[0].allocation.node, NodeId(0));
    // A hold of a job that runs is over.
    let d = sim.step();
    assert!(started(&d).is_empty() && !d.unplaced.contains_key(&JobId(9)));
}

/// A hold naming a node the cluster does not have is refused by validation.
#[test]
fn a_hold_on_an_unknown_node_is_an_input_error() {
    use grus_scheduler::cluster::NodeId;
    use grus_scheduler::cycle::{CapacityHold, InputError};
    let mut sim = Sim::new(cluster(1, 4, "A100"), vec![queue(1, "q", 0)], vec![]);
    sim.input.holds = vec![CapacityHold { job: JobId(3), nodes: [NodeId(5)].into_iter().collect() }];
    assert_eq!(sim.input.validate(), Err(InputError::UnknownHoldNode { job: JobId(3), node: NodeId(5) }));
}

/// Regression: two holds naming the same node masked it from each other, so neither job could
/// start there until the holds expired. A shared node is the lower job id's.
#[test]
fn two_holds_on_one_node_do_not_block_each_other() {
    use grus_scheduler::cluster::NodeId;
    use grus_scheduler::cycle::CapacityHold;
    let mut sim = Sim::new(cluster(2, 4, "A100"), vec![queue(1, "q", 0)], vec![job(9, 1, 1, 4), job(10, 1, 1, 4)]);
    sim.input.holds = vec![
        CapacityHold { job: JobId(10), nodes: [NodeId(0), NodeId(1)].into_iter().collect() },
        CapacityHold { job: JobId(9), nodes: [NodeId(0)].into_iter().collect() },
    ];
    let d = sim.step();
    assert_eq!(started(&d), vec![9, 10], "{:?}", d.unplaced);
    assert_eq!(sim.running(9).unwrap().replicas[0].allocation.node, NodeId(0));
    assert_eq!(sim.running(10).unwrap().replicas[0].allocation.node, NodeId(1));
}

/// An inference service's replica goes to a node its siblings do not hold when one has room,
/// though packing would put it beside them; with no such node it goes beside them.
#[test]
fn a_service_replica_spreads_away_from_its_siblings_when_it_can() {
    let node_of = |spread_from: &[&str], busy_node_1: bool| {
        let mut sim = Sim::new(cluster(2, 8, "A100"), vec![queue(0, "q", 16)], vec![]);
        // Node 0 has one GPU left: packing puts a one-GPU replica there.
        sim.run_on(job(1, 0, 1, 7), 0, 0);
        if busy_node_1 {
            sim.run_on(job(4, 0, 1, 8), 1, 0);
        }
        let mut replica = job(2, 0, 1, 1);
        let from = spread_from.iter().map(|n| (*n).to_owned()).collect();
        replica.spread = Some(Spread { group: "vision/chat".into(), from });
        sim.submit(replica);
        sim.step();
        sim.running(2).expect("started").replicas[0].allocation.node
    };
    assert_eq!(node_of(&[], false), NodeId(0), "without a spread it packs");
    assert_eq!(node_of(&["A100-0"], false), NodeId(1), "the replica avoids its siblings' node");
    assert_eq!(node_of(&["A100-0"], true), NodeId(0), "no other node has room: beside its siblings");
}

/// Two replicas of one service started in the same cycle avoid each other.
#[test]
fn replicas_of_a_service_started_together_go_to_different_nodes() {
    let mut sim = Sim::new(cluster(3, 8, "A100"), vec![queue(0, "q", 24)], vec![]);
    for id in [1, 2, 3] {
        let mut replica = job(id, 0, 1, 1);
        replica.spread = Some(Spread { group: "vision/chat".into(), from: vec![] });
        sim.submit(replica);
    }
    sim.step();
    let nodes: std::collections::BTreeSet<NodeId> =
        [1, 2, 3].iter().map(|id| sim.running(*id).expect("started").replicas[0].allocation.node).collect();
    assert_eq!(nodes.len(), 3, "{nodes:?}");
}
