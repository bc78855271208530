//! The cross-cluster allocator's decisions: cluster choice with whyPending reasons, rounds
//! with in-round deduction, re-dispatch after rejection, reclaim of borrowed work.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use grus_api::allocator::*;
use grus_api::domain::TenantRights;
use grus_protocol::wire::{
    CapacitySummary, GangSpec, JobSpec, ModelCapacity, MovableRoom, PoolCapacity, ResourcesSpec, TaskSpec,
    TopologyScope, TopologySpec,
};
use proptest::prelude::*;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

fn model(name: &str, nodes: &[u32], shares: &[u32]) -> ModelCapacity {
    let mut whole = nodes.to_vec();
    whole.sort_unstable_by(|a, b| b.cmp(a));
    let mut shares = shares.to_vec();
    shares.sort_unstable_by(|a, b| b.cmp(a));
    let node = whole.first().copied().unwrap_or(0);
    ModelCapacity {
        model: name.into(),
        total_gpus: whole.iter().sum::<u32>() + shares.len() as u32,
        largest_gang_gpus: BTreeMap::from([
            ("node".into(), node),
            ("nvlink".into(), node),
            ("rack".into(), whole.iter().sum()),
            ("any".into(), whole.iter().sum()),
        ]),
        free_whole_per_node: whole,
        free_milli_per_device: shares,
        movable_per_node: vec![],
        mig_free: Default::default(),
    }
}

fn cluster(id: &str, models: Vec<ModelCapacity>) -> ClusterView {
    ClusterView {
        id: id.into(),
        healthy: true,
        cordoned: false,
        labels: BTreeMap::new(),
        capacity: CapacitySummary {
            models,
            cpu_free_milli: 1_000_000,
            memory_free_mib: 10_000_000,
            pending_jobs: 0,
            pools: vec![],
        },
        reservations: vec![],
        holds: vec![],
    }
}

fn task(replicas: u32, gpus: u32, milli: Option<u32>, models: &[&str], scope: TopologyScope) -> TaskSpec {
    TaskSpec {
        name: format!("t{replicas}x{gpus}"),
        replicas,
        image: "img".into(),
        command: vec![],
        env: BTreeMap::new(),
        resources: ResourcesSpec {
            gpus,
            gpu_milli: milli,
            gpu_models: models.iter().map(|m| m.to_string()).collect(),
            cpu_milli: 1000,
            memory_mib: 1024,
            ..ResourcesSpec::default()
        },
        topology: Some(TopologySpec { scope }),
    }
}

fn job(id: u64, priority: i32, tasks: Vec<TaskSpec>) -> PendingJob {
    let replicas = tasks.iter().map(|t| t.replicas).sum();
    PendingJob {
        spec: JobSpec {
            id,
            name: format!("j{id}"),
            project: "p".into(),
            queue: "q".into(),
            priority,
            preemptible: false,
            may_preempt: true,
            tasks,
            gang: Some(GangSpec { min_members: replicas }),
            elastic: None,
            policies: vec![],
            max_runtime_s: None,
            min_runtime_s: None,
            predicted_runtime_s: None,
            labels: BTreeMap::new(),
            node_selector: BTreeMap::new(),
            pools: Vec::new(),
            submitted_by: "u".into(),
            submitted_at_ms: id as i64 * 1000,
            checkpoint: None,
            workspace: None,
            service: None,
        },
        cluster_selector: BTreeMap::new(),
        attempts: vec![],
        epoch: 0,
        borrowed: false,
    }
}

fn whole(id: u64, replicas: u32, gpus: u32, scope: TopologyScope) -> PendingJob {
    job(id, 100, vec![task(replicas, gpus, None, &["A100"], scope)])
}

fn chosen(c: &Choice) -> &str {
    match c {
        Choice::Cluster { cluster, .. } => cluster,
        Choice::NoCluster { skipped } => panic!("no cluster: {}", why_pending(skipped)),
    }
}

fn skipped(c: Choice) -> Vec<(String, SkipReason)> {
    match c {
        Choice::Cluster { cluster, .. } => panic!("unexpectedly chose {cluster}"),
        Choice::NoCluster { skipped } => skipped,
    }
}

#[test]
fn best_fit_prefers_the_cluster_left_with_fewest_free_gpus() {
    let clusters =
        vec![cluster("big", vec![model("A100", &[8, 8, 8], &[])]), cluster("small", vec![model("A100", &[8], &[])])];
    let c = choose_cluster(&whole(1, 1, 8, TopologyScope::Any), &clusters, now());
    assert_eq!(chosen(&c), "small");
}

/// A cluster whose GPUs are split into node pools: `(pool, free whole GPUs per node)`.
fn pooled(id: &str, pools: &[(&str, &[u32])]) -> ClusterView {
    let all: Vec<u32> = pools.iter().flat_map(|(_, nodes)| nodes.iter().copied()).collect();
    let mut c = cluster(id, vec![model("A100", &all, &[])]);
    c.capacity.pools = pools
        .iter()
        .map(|(name, nodes)| PoolCapacity {
            name: name.to_string(),
            nodes: nodes.len() as u32,
            models: vec![model("A100", nodes, &[])],
        })
        .collect();
    c
}

fn in_pools(mut j: PendingJob, pools: &[&str]) -> PendingJob {
    j.spec.pools = pools.iter().map(|p| p.to_string()).collect();
    j
}

#[test]
fn a_job_naming_pools_goes_only_where_one_of_them_has_room_for_its_gang() {
    let clusters = vec![
        pooled("a", &[("inference", &[8, 8])]),
        pooled("b", &[("train", &[4, 4]), ("inference", &[8])]),
        pooled("c", &[("train", &[8, 8])]),
    ];
    let gang = || whole(1, 2, 8, TopologyScope::Any);
    assert_eq!(chosen(&choose_cluster(&in_pools(gang(), &["train"]), &clusters, now())), "c");
    // Without pools, cluster a (best fit) takes it.
    assert_eq!(chosen(&choose_cluster(&gang(), &clusters, now())), "a");
    let why = skipped(choose_cluster(&in_pools(gang(), &["train"]), &clusters[..2], now()));
    assert_eq!(why[0].1, SkipReason::NoSuchPool { wanted: vec!["train".into()], available: vec!["inference".into()] });
    assert_eq!(why[0].1.stage(), "pool");
    assert!(matches!(&why[1].1, SkipReason::NotInPool { pool, .. } if pool == "train"), "{why:?}");
    let text = why_pending(&why);
    assert!(text.contains("a: lacks node pool train (has inference)"), "{text}");
    assert!(text.contains("b: in node pool train: needs 16 gpu/A100, 8 free"), "{text}");
    // The second pool named is tried too.
    assert_eq!(chosen(&choose_cluster(&in_pools(gang(), &["train", "inference"]), &clusters[..2], now())), "a");
}

#[test]
fn fewer_pending_jobs_break_a_tie() {
    let mut a = cluster("a", vec![model("A100", &[4], &[])]);
    a.capacity.pending_jobs = 5;
    let b = cluster("b", vec![model("A100", &[4], &[])]);
    assert_eq!(chosen(&choose_cluster(&whole(1, 1, 2, TopologyScope::Any), &[a, b], now())), "b");
}

#[test]
fn every_skip_reason_is_reported_per_cluster() {
    let mut sick = cluster("a-sick", vec![model("A100", &[8], &[])]);
    sick.healthy = false;
    let v100 = cluster("b-v100", vec![model("V100", &[8], &[])]);
    let small = cluster("c-small", vec![model("A100", &[2, 2], &[])]);
    let spread = cluster("d-spread", vec![model("A100", &[4, 4, 4], &[])]);
    let mut labelled = cluster("e-label", vec![model("A100", &[8, 8], &[])]);
    labelled.labels.insert("region".into(), "us".into());
    let mut j = whole(1, 2, 4, TopologyScope::Node);
    j.cluster_selector.insert("region".into(), "eu".into());
    let s = skipped(choose_cluster(&j, &[sick, v100, small, spread, labelled], now()));
    assert_eq!(
        s,
        vec![
            ("a-sick".into(), SkipReason::Unhealthy),
            ("b-v100".into(), SkipReason::SelectorMismatch { key: "region".into() }),
            ("c-small".into(), SkipReason::SelectorMismatch { key: "region".into() }),
            ("d-spread".into(), SkipReason::SelectorMismatch { key: "region".into() }),
            ("e-label".into(), SkipReason::SelectorMismatch { key: "region".into() }),
        ]
    );
    j.cluster_selector.clear();
    let mut sick = cluster("a-sick", vec![model("A100", &[8], &[])]);
    sick.healthy = false;
    let clusters = [
        sick,
        cluster("b-v100", vec![model("V100", &[8], &[])]),
        cluster("c-small", vec![model("A100", &[2, 2], &[])]),
        cluster("d-spread", vec![model("A100", &[4, 4, 4], &[])]),
    ];
    let s = skipped(choose_cluster(&j, &clusters, now()));
    assert_eq!(s[1].1, SkipReason::NoSuchGpuModel { wanted: vec!["A100".into()], available: vec!["V100".into()] });
    assert_eq!(s[2].1, SkipReason::InsufficientCapacity { resource: "gpu/A100".into(), needed: 8, free: 4 });
    assert_eq!(
        s[3].1,
        SkipReason::GangDoesNotFit {
            model: "A100".into(),
            members: 2,
            per_member_gpus: 4,
            scope: TopologyScope::Node,
            largest: 4
        }
    );
    assert_eq!(
        why_pending(&s),
        "a-sick: agent heartbeat is stale; b-v100: lacks A100 (has V100); c-small: needs 8 gpu/A100, 4 free; \
         d-spread: gang of 2 x 4 A100 does not fit within one node (largest has 4 free)"
    );
}

#[test]
fn a_cordoned_cluster_is_skipped_at_the_health_stage() {
    let mut cordoned = cluster("a", vec![model("A100", &[8], &[])]);
    cordoned.cordoned = true;
    let open = cluster("b", vec![model("V100", &[8], &[])]);
    let s = skipped(choose_cluster(&whole(1, 1, 2, TopologyScope::Any), &[cordoned.clone(), open], now()));
    assert_eq!(s[0], ("a".into(), SkipReason::Cordoned));
    assert_eq!(s[0].1.stage(), "health");
    assert_eq!(s[1].1.stage(), "gpu_model");
    assert_eq!(why_pending(&s[..1]), "a: cluster is cordoned");
    cordoned.cordoned = false;
    assert_eq!(chosen(&choose_cluster(&whole(1, 1, 2, TopologyScope::Any), &[cordoned], now())), "a");
}

#[test]
fn a_gang_spread_over_nodes_fits_when_scope_is_any() {
    let clusters = [cluster("a", vec![model("A100", &[4, 4, 4], &[])])];
    assert_eq!(chosen(&choose_cluster(&whole(1, 3, 4, TopologyScope::Any), &clusters, now())), "a");
    let s = skipped(choose_cluster(&whole(1, 2, 6, TopologyScope::Any), &clusters, now()));
    assert!(matches!(s[0].1, SkipReason::GangDoesNotFit { largest: 4, .. }), "{s:?}");
}

#[test]
fn active_reservations_are_deducted_and_expired_ones_are_not() {
    let mut c = cluster("a", vec![model("A100", &[8], &[])]);
    c.reservations.push(Reservation {
        job: 9,
        gpus: vec![GpuTake { model: "A100".into(), per_node: vec![6], shares: vec![], mig: vec![] }],
        cpu_milli: 0,
        memory_mib: 0,
        expires_at: now() + Duration::seconds(30),
    });
    let j = whole(1, 1, 4, TopologyScope::Any);
    assert_eq!(skipped(choose_cluster(&j, std::slice::from_ref(&c), now())), vec![("a".into(), SkipReason::Reserved)]);
    assert_eq!(chosen(&choose_cluster(&j, &[c], now() + Duration::seconds(30))), "a");
}

#[test]
fn fractional_members_pack_onto_partly_used_devices_first() {
    let clusters = [cluster("a", vec![model("A100", &[1], &[500, 300])])];
    let j = job(1, 100, vec![task(2, 1, Some(250), &[], TopologyScope::Any)]);
    match choose_cluster(&j, &clusters, now()) {
        Choice::Cluster { gpus, .. } => {
            assert_eq!(
                gpus,
                vec![GpuTake { model: "A100".into(), per_node: vec![], shares: vec![250, 250], mig: vec![] }]
            )
        }
        c => panic!("{c:?}"),
    }
    // Three shares of 600 need three devices: two partial ones are too small, one whole GPU.
    let j = job(2, 100, vec![task(3, 1, Some(600), &[], TopologyScope::Any)]);
    assert!(matches!(skipped(choose_cluster(&j, &clusters, now()))[0].1, SkipReason::GangDoesNotFit { .. }));
}

#[test]
fn only_min_members_must_fit_before_dispatch() {
    let clusters = [cluster("a", vec![model("A100", &[8], &[])])];
    let mut j = whole(1, 4, 4, TopologyScope::Any);
    assert!(matches!(choose_cluster(&j, &clusters, now()), Choice::NoCluster { .. }));
    j.spec.gang = Some(GangSpec { min_members: 2 });
    assert_eq!(chosen(&choose_cluster(&j, &clusters, now())), "a");
}

#[test]
fn a_round_never_sends_two_jobs_to_room_for_one() {
    let clusters = [cluster("a", vec![model("A100", &[8], &[])])];
    let jobs = [whole(1, 1, 8, TopologyScope::Node), whole(2, 1, 8, TopologyScope::Node)];
    let actions = plan_round(&jobs, &clusters, now(), &AllocatorConfig::default());
    assert!(matches!(&actions[0], Action::Dispatch { job: 1, epoch: 1, .. }));
    let Action::Wait { job: 2, skipped, .. } = &actions[1] else { panic!("{actions:?}") };
    assert_eq!(skipped.as_slice(), [("a".to_string(), SkipReason::Reserved)]);
}

/// `n` members each asking one MIG instance of `profile`.
fn mig(id: u64, n: u32, profile: &str) -> PendingJob {
    let mut t = task(
        n,
        1,
        Some(grus_scheduler::mig::milli_of(grus_scheduler::mig::known_profile(profile).unwrap())),
        &[],
        TopologyScope::Any,
    );
    t.resources.mig_profile = Some(profile.into());
    job(id, 100, vec![t])
}

/// A cluster of V100s (no MIG) and one with A100-80GB GPUs in MIG mode, `free` instances left per
/// profile.
fn with_mig(free: &[(&str, u32)]) -> [ClusterView; 2] {
    let mut m = model("A100-80GB", &[], &[]);
    m.total_gpus = 2;
    m.mig_free = free.iter().map(|(p, n)| (p.to_string(), *n)).collect();
    [cluster("plain", vec![model("V100", &[8, 8], &[])]), cluster("mig", vec![m])]
}

#[test]
fn a_mig_job_goes_only_where_its_profile_has_room_and_the_round_deducts_it() {
    let clusters = with_mig(&[("1g.10gb", 14), ("3g.40gb", 4), ("7g.80gb", 2)]);
    assert_eq!(chosen(&choose_cluster(&mig(1, 2, "1g.10gb"), &clusters, now())), "mig");
    let reasons = skipped(choose_cluster(&mig(2, 15, "1g.10gb"), &clusters, now()));
    let mig_reason = &reasons.iter().find(|(c, _)| c == "mig").unwrap().1;
    assert_eq!(mig_reason.to_string(), "needs 15 mig/1g.10gb/A100-80GB, 14 free");
    assert!(matches!(reasons.iter().find(|(c, _)| c == "plain").unwrap().1, SkipReason::NoSuchGpuModel { .. }));
    // A round: a 7g takes one GPU; the second 7g would need the other, which the 1g taken
    // before it may have split: the view errs toward "does not fit".
    let jobs = [mig(3, 1, "1g.10gb"), mig(4, 1, "7g.80gb"), mig(5, 1, "7g.80gb")];
    let actions = plan_round(&jobs, &clusters, now(), &AllocatorConfig::default());
    let Action::Dispatch { reservation, .. } = &actions[0] else { panic!("{actions:?}") };
    assert_eq!(reservation.gpus[0].mig, vec!["1g.10gb".to_string()]);
    assert!(matches!(&actions[1], Action::Dispatch { job: 4, .. }), "{actions:?}");
    assert!(matches!(&actions[2], Action::Wait { job: 5, .. }), "{actions:?}");
}

#[test]
fn a_round_serves_priority_before_age() {
    let clusters = [cluster("a", vec![model("A100", &[8], &[])])];
    let old = whole(1, 1, 8, TopologyScope::Any);
    let mut urgent = whole(2, 1, 8, TopologyScope::Any);
    urgent.spec.priority = 1000;
    let actions = plan_round(&[old, urgent], &clusters, now(), &AllocatorConfig::default());
    assert!(matches!(&actions[0], Action::Dispatch { job: 2, .. }), "{actions:?}");
    assert!(matches!(&actions[1], Action::Wait { job: 1, .. }));
}

#[test]
fn a_dispatch_carries_a_new_epoch_and_a_reservation_with_ttl() {
    let clusters = [cluster("a", vec![model("A100", &[8], &[])])];
    let mut j = whole(7, 2, 2, TopologyScope::Node);
    j.epoch = 3;
    let cfg = AllocatorConfig { reservation_ttl: Duration::seconds(45) };
    let actions = plan_round(&[j], &clusters, now(), &cfg);
    let Action::Dispatch { job, cluster, epoch, reservation } = &actions[0] else { panic!("{actions:?}") };
    assert_eq!((*job, cluster.as_str(), *epoch), (7, "a", 4));
    assert_eq!(reservation.expires_at, now() + Duration::seconds(45));
    assert_eq!(
        reservation.gpus,
        vec![GpuTake { model: "A100".into(), per_node: vec![4], shares: vec![], mig: vec![] }]
    );
    assert_eq!((reservation.cpu_milli, reservation.memory_mib), (2000, 2048));
}

#[test]
fn a_rejected_job_goes_elsewhere_and_returns_only_when_every_cluster_failed() {
    let clusters = [cluster("a", vec![model("A100", &[8], &[])]), cluster("b", vec![model("A100", &[8, 8], &[])])];
    let mut j = whole(1, 1, 8, TopologyScope::Any);
    assert_eq!(chosen(&choose_cluster(&j, &clusters, now())), "a");
    j.attempts.push(Attempt {
        cluster: "a".into(),
        epoch: 1,
        outcome: AttemptOutcome::Rejected { reason: "taint".into() },
    });
    assert_eq!(chosen(&choose_cluster(&j, &clusters, now())), "b");
    j.attempts.push(Attempt { cluster: "b".into(), epoch: 2, outcome: AttemptOutcome::TimedOut });
    // Both failed: only the latest (b) stays excluded.
    assert_eq!(chosen(&choose_cluster(&j, &clusters, now())), "a");
    let only_b = [clusters[1].clone()];
    assert_eq!(chosen(&choose_cluster(&j, &only_b, now())), "b");
}

#[test]
fn rejected_before_is_the_reason_when_the_job_must_wait() {
    let clusters = [cluster("a", vec![model("A100", &[8], &[])]), cluster("b", vec![model("A100", &[2], &[])])];
    let mut j = whole(1, 1, 8, TopologyScope::Any);
    j.attempts.push(Attempt {
        cluster: "a".into(),
        epoch: 1,
        outcome: AttemptOutcome::Rejected { reason: "no room".into() },
    });
    let s = skipped(choose_cluster(&j, &clusters, now()));
    assert_eq!(s[0], ("a".into(), SkipReason::RejectedBefore { reason: "no room".into() }));
    assert_eq!(why_pending(&s[..1]), "a: rejected the job before: no room");
}

#[test]
fn dispatches_past_their_deadline_time_out() {
    let d = |job, secs| InFlight { job, cluster: "a".into(), epoch: 2, deadline: now() + Duration::seconds(secs) };
    let out = timed_out(&[d(2, -1), d(1, 0), d(3, 10)], now());
    assert_eq!(out.iter().map(|(j, _)| *j).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(out[0].1.outcome, AttemptOutcome::TimedOut);
}

fn running(id: u64, cluster: &str, priority: i32, borrowed: bool, gpus: u32) -> RunningJob {
    RunningJob {
        id,
        project: "p".into(),
        queue: "q".into(),
        cluster: cluster.into(),
        epoch: 1,
        priority,
        borrowed,
        preemptible: borrowed,
        privileged: false,
        started_at: now() - Duration::hours(1),
        min_runtime_s: 0,
        gpus: vec![GpuTake { model: "A100".into(), per_node: vec![gpus], shares: vec![], mig: vec![] }],
        cpu_milli: 0,
        memory_mib: 0,
    }
}

#[test]
fn reclaim_evicts_the_lowest_priority_borrowed_job_that_makes_room() {
    let clusters = [cluster("a", vec![model("A100", &[], &[])])];
    let run = [
        running(10, "a", 0, true, 4),
        running(11, "a", 50, true, 4),
        running(12, "a", 0, false, 8),
        running(13, "a", 0, true, 8),
    ];
    let waiter = whole(1, 1, 4, TopologyScope::Node);
    let ev =
        plan_reclaim(&[waiter], &run, &clusters, now(), &ReclaimConfig { grace_s: 20, ..ReclaimConfig::default() });
    let hold = Reservation {
        job: 1,
        gpus: vec![GpuTake { model: "A100".into(), per_node: vec![4], shares: vec![], mig: vec![] }],
        cpu_milli: 1000,
        memory_mib: 1024,
        expires_at: now() + Duration::seconds(20 + ReclaimConfig::default().hold_s as i64),
    };
    assert_eq!(
        ev,
        vec![Evict {
            job: 10,
            cluster: "a".into(),
            epoch: 1,
            grace_s: 20,
            for_job: 1,
            hold,
            ground: ReclaimGround::Guarantee
        }]
    );
}

/// Two tenants, `p` (tenant 1) and `o` (tenant 2), one queue `q` each; `p/q` holds `held` GPU
/// milli of an 8-GPU fleet.
fn two_tenants(held: u64) -> ShareTree {
    let node = |id, parent, name: &str| ShareNode {
        id,
        parent,
        name: name.into(),
        weight: 1.0,
        guarantees: Default::default(),
        limits: Default::default(),
    };
    ShareTree {
        tenants: vec![node(1, 0, "t1"), node(2, 0, "t2")],
        projects: vec![node(10, 1, "p"), node(11, 2, "o")],
        queues: vec![node(100, 10, "q"), node(101, 11, "q")],
        held: BTreeMap::from([(100, held)]),
        capacity_milli: 8000,
        ..ShareTree::default()
    }
}

#[test]
fn a_queue_below_its_fair_share_reclaims_borrowed_work_only_down_to_the_other_queues_fair_share() {
    // Queue p/q holds the whole fleet in four borrowed 2-GPU jobs; a borrowed job of o/q waits.
    let clusters = [cluster("a", vec![model("A100", &[], &[])])];
    let run: Vec<RunningJob> = (10..14).map(|id| running(id, "a", 0, true, 2)).collect();
    // A gang of `members` x 2 GPUs.
    let waiting = |id, members| {
        let mut j = whole(id, members, 2, TopologyScope::Any);
        j.spec.project = "o".into();
        j.spec.priority = 0;
        j.borrowed = true;
        j
    };
    let cfg = ReclaimConfig::default();
    let plan = |members| {
        let w = [waiting(1, members)];
        let shares = FleetShares::new(&two_tenants(8000), &w).unwrap();
        plan_reclaim_fair(&shares, &w, &run, &[], &clusters, now(), &cfg, &ReclaimRights::default())
    };
    // 2 GPUs: o/q's fair share is 2 (its demand), p/q's 6: one victim.
    let ev = plan(1);
    assert_eq!(ev.iter().map(|e| (e.for_job, e.ground)).collect::<Vec<_>>(), vec![(1, ReclaimGround::FairShare)]);
    // 4 GPUs: 4 and 4: two victims, leaving p/q at its fair share.
    assert_eq!(plan(2).len(), 2);
    // 6 GPUs would take o/q above its fair share of 4: nothing.
    assert!(plan(3).is_empty());
    // Without the fair shares a borrowed waiting job is the caller's to leave out; with them,
    // a job within its guarantee still reclaims on that ground.
    let mut within = waiting(2, 1);
    within.borrowed = false;
    let shares = FleetShares::new(&two_tenants(8000), [&within]).unwrap();
    let ev = plan_reclaim_fair(&shares, &[within], &run, &[], &clusters, now(), &cfg, &ReclaimRights::default());
    assert_eq!(ev.iter().map(|e| e.ground).collect::<Vec<_>>(), vec![ReclaimGround::Guarantee]);
}

/// The eviction thrash: a borrowed job evicted for a guaranteed job of the same shape was sent
/// back into the room it had just freed (it is older), then evicted again, 27 times in five
/// minutes. The room is held for the job it was freed for.
#[test]
fn capacity_freed_by_reclaim_is_held_for_its_job_not_given_back_to_the_victim() {
    let clusters = [cluster("a", vec![model("A100", &[], &[])])];
    let victim = PendingJob { borrowed: true, epoch: 1, ..whole(10, 1, 8, TopologyScope::Any) };
    let waiter = whole(11, 1, 8, TopologyScope::Any);
    let ev = plan_reclaim(
        std::slice::from_ref(&waiter),
        &[running(10, "a", 100, true, 8)],
        &clusters,
        now(),
        &ReclaimConfig::default(),
    );
    assert_eq!(ev.len(), 1);
    // The victim stopped and was requeued; the cluster reports the room free. Both wait.
    let mut c = cluster("a", vec![model("A100", &[8], &[])]);
    c.holds.push(ev[0].hold.clone());
    let later = now() + Duration::seconds(40);
    let actions = plan_round(&[victim.clone(), waiter.clone()], &[c.clone()], later, &AllocatorConfig::default());
    assert!(matches!(&actions[0], Action::Wait { job: 10, .. }), "{actions:?}");
    assert!(matches!(&actions[1], Action::Dispatch { job: 11, .. }), "{actions:?}");
    let Action::Wait { skipped, .. } = &actions[0] else { unreachable!() };
    assert_eq!(skipped[0].1, SkipReason::Reserved, "the victim is told the room is reserved");
    // Once the hold expires the room is anyone's again.
    let expired = ev[0].hold.expires_at + Duration::seconds(1);
    let actions = plan_round(&[victim, waiter], &[c], expired, &AllocatorConfig::default());
    assert!(matches!(&actions[0], Action::Dispatch { job: 10, .. }), "{actions:?}");
    // Reclaim itself does not count a hold against the job it is for: no second victim.
    let mut held = cluster("a", vec![model("A100", &[8], &[])]);
    held.holds.push(ev[0].hold.clone());
    let again = plan_reclaim(
        &[whole(11, 1, 8, TopologyScope::Any)],
        &[running(12, "a", 0, true, 8)],
        &[held],
        later,
        &ReclaimConfig::default(),
    );
    assert!(again.is_empty(), "{again:?}");
}

#[test]
fn reclaim_never_takes_guaranteed_higher_priority_privileged_or_young_work() {
    let clusters = [cluster("a", vec![model("A100", &[], &[])])];
    let mut young = running(14, "a", 0, true, 8);
    young.min_runtime_s = 7200;
    let mut privileged = running(15, "a", 0, true, 8);
    privileged.privileged = true;
    let run = [running(12, "a", 0, false, 8), running(13, "a", 500, true, 8), young, privileged];
    let ev = plan_reclaim(&[whole(1, 1, 8, TopologyScope::Any)], &run, &clusters, now(), &ReclaimConfig::default());
    assert_eq!(ev, vec![]);
}

#[test]
fn reclaim_does_nothing_when_the_job_already_fits() {
    let clusters = [cluster("a", vec![model("A100", &[8], &[])])];
    let run = [running(10, "a", 0, true, 8)];
    assert!(plan_reclaim(&[whole(1, 1, 8, TopologyScope::Any)], &run, &clusters, now(), &ReclaimConfig::default())
        .is_empty());
}

#[test]
fn reclaim_uses_each_victim_for_one_waiting_job() {
    let clusters = [cluster("a", vec![model("A100", &[], &[])]), cluster("b", vec![model("A100", &[], &[])])];
    let run = [running(10, "a", 0, true, 8), running(20, "b", 10, true, 8)];
    let waiting =
        [whole(1, 1, 8, TopologyScope::Any), whole(2, 1, 8, TopologyScope::Any), whole(3, 1, 8, TopologyScope::Any)];
    let ev = plan_reclaim(&waiting, &run, &clusters, now(), &ReclaimConfig::default());
    let pairs: Vec<(u64, u64)> = ev.iter().map(|e| (e.job, e.for_job)).collect();
    assert_eq!(pairs, vec![(10, 1), (20, 2)]);
}

// ---- properties ----

fn arb_cluster(i: usize) -> impl Strategy<Value = ClusterView> {
    (
        prop::collection::vec(0u32..=8, 0..4),
        prop::collection::vec(1u32..1000, 0..3),
        prop::collection::vec(0u32..=8, 0..3),
        any::<bool>(),
        0u32..3,
        prop::collection::vec((1u32..=8, -30i64..30), 0..3),
    )
        .prop_map(move |(a, sa, v, healthy, pending, res)| {
            let mut c = cluster(&format!("c{i}"), vec![model("A100", &a, &sa), model("V100", &v, &[])]);
            c.healthy = healthy || i == 0;
            c.capacity.pending_jobs = pending;
            c.capacity.cpu_free_milli = 40_000;
            c.reservations = res
                .into_iter()
                .enumerate()
                .map(|(k, (n, ttl))| Reservation {
                    job: 1000 + k as u64,
                    gpus: vec![GpuTake { model: "A100".into(), per_node: vec![n], shares: vec![], mig: vec![] }],
                    cpu_milli: 1000,
                    memory_mib: 0,
                    expires_at: now() + Duration::seconds(ttl),
                })
                .collect();
            c
        })
}

fn arb_task() -> impl Strategy<Value = TaskSpec> {
    let scope = prop_oneof![
        Just(TopologyScope::Any),
        Just(TopologyScope::Node),
        Just(TopologyScope::Nvlink),
        Just(TopologyScope::Rack)
    ];
    let models = prop_oneof![Just(vec![]), Just(vec!["A100"]), Just(vec!["V100"]), Just(vec!["A100", "V100"])];
    (1u32..=4, 0u32..=8, prop::option::of(1u32..1000), models, scope).prop_map(|(r, g, share, m, s)| {
        let (gpus, milli) = match share {
            Some(x) if g > 0 && x % 2 == 0 => (1, Some(x)),
            _ => (g, None),
        };
        task(r, gpus, milli, &m, s)
    })
}

fn arb_jobs() -> impl Strategy<Value = Vec<PendingJob>> {
    prop::collection::vec((prop::collection::vec(arb_task(), 1..3), 0i32..3), 1..8).prop_map(|js| {
        js.into_iter()
            .enumerate()
            .map(|(i, (mut tasks, p))| {
                for (k, t) in tasks.iter_mut().enumerate() {
                    t.name = format!("t{k}");
                }
                job(i as u64 + 1, p * 100, tasks)
            })
            .collect()
    })
}

fn arb_world() -> impl Strategy<Value = (Vec<ClusterView>, Vec<PendingJob>)> {
    (prop::collection::vec(any::<u8>(), 1..4), arb_jobs()).prop_flat_map(|(n, jobs)| {
        let cs: Vec<_> = (0..n.len()).map(arb_cluster).collect();
        (cs, Just(jobs))
    })
}

fn milli_of(takes: &[GpuTake], model: &str) -> u64 {
    takes.iter().filter(|t| t.model == model).map(GpuTake::milli).sum()
}

/// A busy world: few job shapes repeated by many jobs (what the allocator's memo reuses), some
/// with cluster selectors, earlier rejections or capacity held for them.
fn arb_busy_world() -> impl Strategy<Value = (Vec<ClusterView>, Vec<PendingJob>)> {
    let shapes = prop::collection::vec(prop::collection::vec(arb_task(), 1..3), 1..4);
    let picks = prop::collection::vec((0usize..4, 0i32..3, 0u8..8, 0usize..5), 1..40);
    (1usize..5, shapes, picks)
        .prop_flat_map(|(n, shapes, picks)| {
            let cs: Vec<_> = (0..n).map(arb_cluster).collect();
            let jobs: Vec<PendingJob> = picks
                .iter()
                .enumerate()
                .map(|(i, &(shape, p, twist, c))| {
                    let mut tasks = shapes[shape % shapes.len()].clone();
                    for (k, t) in tasks.iter_mut().enumerate() {
                        t.name = format!("t{k}");
                    }
                    let mut j = job(i as u64 + 1, p * 100, tasks);
                    match twist {
                        0 => {
                            j.attempts.push(Attempt {
                                cluster: format!("c{}", c % n),
                                epoch: 1,
                                outcome: AttemptOutcome::Rejected { reason: "no room".into() },
                            });
                            j.epoch = 1;
                        }
                        1 => {
                            j.cluster_selector.insert("region".into(), "eu".into());
                        }
                        _ => {}
                    }
                    j
                })
                .collect();
            (cs, Just(jobs), prop::collection::vec((0usize..5, 1u64..41, 1u32..=8), 0..3))
        })
        .prop_map(|(mut cs, jobs, holds)| {
            let n = cs.len();
            for (c, job, gpus) in holds {
                cs[c % n].holds.push(Reservation {
                    job,
                    gpus: vec![GpuTake { model: "A100".into(), per_node: vec![gpus], shares: vec![], mig: vec![] }],
                    cpu_milli: 1000,
                    memory_mib: 0,
                    expires_at: now() + Duration::seconds(30),
                });
            }
            cs[0].labels.insert("region".into(), "eu".into());
            (cs, jobs)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The round reuses verdicts of earlier jobs of the same shape on clusters whose view did
    /// not change since; its plan (dispatches, reservations, every whyPending reason) is
    /// exactly the plan of fitting every job on every cluster afresh.
    #[test]
    fn the_memoized_round_plans_exactly_what_a_fresh_one_does((clusters, jobs) in arb_busy_world()) {
        let cfg = AllocatorConfig::default();
        prop_assert_eq!(plan_round(&jobs, &clusters, now(), &cfg), plan_round_afresh(&jobs, &clusters, now(), &cfg));
    }

    /// Everything a round dispatches to a cluster, plus the reservations still active
    /// there, fits the cluster's free GPUs, CPU and memory; each gang's reservation holds
    /// all of its members, and a gang packed on one node fits the summary's largest node.
    #[test]
    fn a_round_never_dispatches_beyond_capacity((clusters, jobs) in arb_world()) {
        let actions = plan_round(&jobs, &clusters, now(), &AllocatorConfig::default());
        prop_assert_eq!(actions.len(), jobs.len());
        for c in &clusters {
            let mut promised: Vec<&Reservation> = c.reservations.iter().filter(|r| r.is_active(now())).collect();
            for a in &actions {
                if let Action::Dispatch { cluster, reservation, .. } = a {
                    if *cluster == c.id {
                        prop_assert!(c.healthy);
                        promised.push(reservation);
                    }
                }
            }
            for m in &c.capacity.models {
                let free: u64 = m.free_whole_per_node.iter().map(|&w| w as u64 * 1000).sum::<u64>()
                    + m.free_milli_per_device.iter().map(|&s| s as u64).sum::<u64>();
                let whole_free: u64 = m.free_whole_per_node.iter().map(|&w| w as u64).sum();
                let used: u64 = promised.iter().map(|r| milli_of(&r.gpus, &m.model)).sum();
                let whole_of = |r: &&Reservation| -> u64 {
                    r.gpus.iter().filter(|t| t.model == m.model).flat_map(|t| &t.per_node).map(|&n| n as u64).sum()
                };
                let whole: u64 = promised.iter().map(whole_of).sum();
                // Reservations that alone exceed the summary are stale (the agent already
                // counts them); the property is about what the round adds on top of sane ones.
                let old = promised.iter().filter(|r| r.job >= 1000);
                let sane = old.clone().map(|r| milli_of(&r.gpus, &m.model)).sum::<u64>() <= free
                    && old.map(whole_of).sum::<u64>() <= whole_free;
                if sane {
                    prop_assert!(used <= free, "{}: {used} > {free}", m.model);
                    prop_assert!(whole <= whole_free, "{}: {whole} whole > {whole_free}", m.model);
                }
            }
            let cpu: u64 = promised.iter().map(|r| r.cpu_milli).sum();
            prop_assert!(cpu <= c.capacity.cpu_free_milli);
        }
        for a in &actions {
            if let Action::Dispatch { job, cluster, reservation, .. } = a {
                let j = jobs.iter().find(|j| j.id() == *job).unwrap();
                let c = clusters.iter().find(|c| c.id == *cluster).unwrap();
                let want: u64 = j.spec.tasks.iter().map(|t| {
                    let r = &t.resources;
                    t.replicas as u64 * r.gpus as u64 * r.gpu_milli.unwrap_or(1000) as u64
                }).sum();
                let got: u64 = reservation.gpus.iter().map(GpuTake::milli).sum();
                prop_assert_eq!(want, got, "gang sent without all its members");
                for t in &reservation.gpus {
                    let m = c.capacity.models.iter().find(|m| m.model == t.model).unwrap();
                    let max_node = m.free_whole_per_node.first().copied().unwrap_or(0);
                    prop_assert!(t.per_node.iter().all(|&n| n <= max_node));
                }
            }
        }
    }

    /// The same inputs in any order give the same actions.
    #[test]
    fn a_round_is_deterministic((clusters, jobs) in arb_world(), seed in any::<u64>()) {
        let a = plan_round(&jobs, &clusters, now(), &AllocatorConfig::default());
        let (mut c2, mut j2) = (clusters.clone(), jobs.clone());
        let k = seed as usize;
        let (nc, nj) = (c2.len(), j2.len());
        c2.rotate_left(k % nc);
        j2.rotate_left((k / 7) % nj);
        j2.reverse();
        prop_assert_eq!(a, plan_round(&j2, &c2, now(), &AllocatorConfig::default()));
    }

    /// Reclaim only evicts borrowed, preemptible, non-privileged work of priority at most the
    /// waiting job's, each victim once, and only for a job that does not fit already.
    #[test]
    fn reclaim_never_evicts_guaranteed_or_higher_priority_work(
        (clusters, jobs) in arb_world(),
        run in prop::collection::vec((0usize..3, 0i32..4, any::<bool>(), any::<bool>(), 1u32..=8), 0..8),
    ) {
        let running: Vec<RunningJob> = run.iter().enumerate().map(|(i, &(c, p, borrowed, pre, g))| {
            let mut r = running(100 + i as u64, &format!("c{}", c % clusters.len()), p * 100, borrowed, g);
            r.preemptible = pre;
            r
        }).collect();
        let ev = plan_reclaim(&jobs, &running, &clusters, now(), &ReclaimConfig::default());
        let mut seen = std::collections::BTreeSet::new();
        for e in &ev {
            let v = running.iter().find(|r| r.id == e.job).unwrap();
            let w = jobs.iter().find(|j| j.id() == e.for_job).unwrap();
            prop_assert!(v.borrowed && v.preemptible && !v.privileged);
            prop_assert!(v.priority <= w.spec.priority);
            prop_assert_eq!(&v.cluster, &e.cluster);
            prop_assert!(seen.insert(e.job));
        }
        // Alone, a job gets evictions only if it fits nowhere as things are.
        for j in &jobs {
            let alone = plan_reclaim(std::slice::from_ref(j), &running, &clusters, now(), &ReclaimConfig::default());
            let fits = matches!(choose_cluster(j, &clusters, now()), Choice::Cluster { .. });
            prop_assert!(alone.is_empty() || !fits);
        }
    }
}

#[test]
fn a_stale_reservation_larger_than_the_summary_only_shrinks_the_view() {
    // The agent already counts job 9 (its summary shows 2 free), and the reservation for it
    // has not been dropped yet: the view must not go negative nor panic, and nothing fits.
    let mut c = cluster("a", vec![model("A100", &[2], &[300])]);
    c.reservations.push(Reservation {
        job: 9,
        gpus: vec![GpuTake { model: "A100".into(), per_node: vec![8], shares: vec![900, 900], mig: vec![] }],
        cpu_milli: u64::MAX,
        memory_mib: 0,
        expires_at: now() + Duration::seconds(5),
    });
    let j = job(1, 100, vec![task(1, 1, Some(100), &[], TopologyScope::Any)]);
    assert_eq!(skipped(choose_cluster(&j, std::slice::from_ref(&c), now())), vec![("a".into(), SkipReason::Reserved)]);
}

#[test]
fn reclaim_frees_shares_and_prefers_the_plan_disturbing_fewest_gpus() {
    let clusters = [cluster("a", vec![model("A100", &[], &[])]), cluster("b", vec![model("A100", &[], &[])])];
    let share = |id, c: &str, milli| {
        let mut r = running(id, c, 0, true, 0);
        r.gpus = vec![GpuTake { model: "A100".into(), per_node: vec![], shares: vec![milli], mig: vec![] }];
        r
    };
    // In a, a 500-milli share frees enough for a 400 share; in b only an 8-GPU job would.
    let run = [running(20, "b", 0, true, 8), share(10, "a", 500)];
    let waiter = job(1, 100, vec![task(1, 1, Some(400), &[], TopologyScope::Any)]);
    let ev = plan_reclaim(&[waiter], &run, &clusters, now(), &ReclaimConfig::default());
    assert_eq!(ev.iter().map(|e| (e.job, e.cluster.as_str())).collect::<Vec<_>>(), vec![(10, "a")]);
}

#[test]
fn reclaim_follows_tenant_rights_never_preempting_for_a_tenant_without_them() {
    let clusters = [cluster("a", vec![model("A100", &[], &[])])];
    let in_project = |mut r: RunningJob, project: &str| {
        r.project = project.into();
        r
    };
    // Borrowed work of two other tenants fills the cluster; tenant 1 (project p) waits.
    let run = [in_project(running(10, "a", 0, true, 4), "other"), in_project(running(11, "a", 0, true, 4), "third")];
    let waiter = [whole(1, 1, 4, TopologyScope::Node)];
    let cfg = ReclaimConfig::default();
    let rights_with = |rights: TenantRights| ReclaimRights {
        tenants: [(1, rights), (2, TenantRights::default()), (3, TenantRights::default())].into(),
        project_tenants: [("p".to_owned(), 1), ("other".to_owned(), 2), ("third".to_owned(), 3)].into(),
    };
    let victims = |rights: &ReclaimRights| {
        plan_reclaim_with_evictions(&waiter, &run, &[], &clusters, now(), &cfg, rights)
            .iter()
            .map(|e| e.job)
            .collect::<Vec<_>>()
    };
    assert_eq!(victims(&rights_with(TenantRights::default())), vec![10], "from anyone: the first candidate");
    let no_preempt = TenantRights { may_preempt: false, ..TenantRights::default() };
    assert!(victims(&rights_with(no_preempt)).is_empty(), "a tenant without preemption rights waits");
    let only_third = TenantRights { reclaim_from: Some([3].into()), ..TenantRights::default() };
    assert_eq!(victims(&rights_with(only_third)), vec![11], "only the listed tenant's work");
    let only_own = TenantRights { reclaim_from: Some(Default::default()), ..TenantRights::default() };
    assert!(victims(&rights_with(only_own)).is_empty(), "nothing of its own tenant runs borrowed here");
}

#[test]
fn reclaim_counts_evictions_in_flight_as_freed_so_rounds_do_not_evict_twice() {
    let clusters = [cluster("a", vec![model("A100", &[], &[])])];
    let evicting = [running(10, "a", 0, true, 8)];
    let run = [running(11, "a", 0, true, 8)];
    let waiter = [whole(1, 1, 8, TopologyScope::Any)];
    let cfg = ReclaimConfig::default();
    assert!(plan_reclaim_with_evictions(&waiter, &run, &evicting, &clusters, now(), &cfg, &ReclaimRights::default())
        .is_empty());
    // A second waiting job is not covered by the one eviction in flight.
    let two = [whole(1, 1, 8, TopologyScope::Any), whole(2, 1, 8, TopologyScope::Any)];
    let ev = plan_reclaim_with_evictions(&two, &run, &evicting, &clusters, now(), &cfg, &ReclaimRights::default());
    assert_eq!(ev.iter().map(|e| (e.job, e.for_job)).collect::<Vec<_>>(), vec![(11, 2)]);
    // Without the eviction in flight the same round would take another victim.
    assert_eq!(plan_reclaim(&waiter, &run, &clusters, now(), &cfg).len(), 1);
}

/// An elastic job of queue `queue` (project `p`) with `spare` single-GPU replicas above its
/// minimum in `cluster`, running for an hour.
fn elastic_running(id: u64, cluster: &str, queue: &str, priority: i32, spare: usize) -> ElasticJob {
    ElasticJob {
        id,
        project: "p".into(),
        queue: queue.into(),
        cluster: cluster.into(),
        priority,
        preemptible: true,
        borrowed: false,
        started_at: now() - Duration::hours(1),
        min_runtime_s: 0,
        spare: vec![GpuTake { model: "A100".into(), per_node: vec![1; spare], shares: vec![], mig: vec![] }],
        spare_cpu_milli: 0,
        spare_memory_mib: 0,
    }
}

fn in_queue(mut j: PendingJob, queue: &str) -> PendingJob {
    j.spec.queue = queue.into();
    j
}

fn shrink_plan(
    waiting: &[PendingJob],
    elastic: &[ElasticJob],
    clusters: &[ClusterView],
) -> Vec<(u64, String, Vec<u64>)> {
    plan_shrink_room(waiting, elastic, clusters, now(), Duration::seconds(60), &ReclaimRights::default())
        .into_iter()
        .map(|r| (r.job, r.cluster, r.shrinking))
        .collect()
}

#[test]
fn a_higher_priority_job_goes_where_lower_priority_elastic_work_of_its_queue_gives_room() {
    // One GPU free in each cluster; the job needs three members of one GPU each.
    let clusters = [cluster("a", vec![model("A100", &[1], &[])]), cluster("b", vec![model("A100", &[1], &[])])];
    let urgent = whole(10, 3, 1, TopologyScope::Any);
    let spare = [elastic_running(1, "a", "q", 0, 1), elastic_running(2, "b", "q", 0, 4)];
    assert_eq!(shrink_plan(std::slice::from_ref(&urgent), &spare, &clusters), [(10, "b".to_string(), vec![2])]);
    let planned =
        plan_shrink_room(&[urgent], &spare, &clusters, now(), Duration::seconds(60), &ReclaimRights::default());
    assert_eq!(planned[0].epoch, 1);
    assert_eq!(planned[0].reservation.gpus.iter().map(GpuTake::milli).sum::<u64>(), 3000);
    // Not for a job of no higher priority, nor from another queue's guaranteed work.
    let equal = job(11, 0, vec![task(3, 1, None, &["A100"], TopologyScope::Any)]);
    assert!(shrink_plan(&[equal], &spare, &clusters).is_empty());
    let other_queue = in_queue(whole(12, 3, 1, TopologyScope::Any), "other");
    assert!(shrink_plan(std::slice::from_ref(&other_queue), &spare, &clusters).is_empty());
    // Borrowed elastic work of another queue gives way to a job within its guarantee.
    let mut borrowed = spare.clone();
    borrowed[1].borrowed = true;
    assert_eq!(shrink_plan(&[other_queue], &borrowed, &clusters), [(12, "b".to_string(), vec![2])]);
}

#[test]
fn each_elastic_job_makes_room_once_and_too_little_room_plans_nothing() {
    let clusters = [cluster("a", vec![model("A100", &[], &[])])];
    let spare = [elastic_running(1, "a", "q", 0, 2)];
    let (first, second) = (whole(10, 2, 1, TopologyScope::Any), whole(11, 2, 1, TopologyScope::Any));
    assert_eq!(shrink_plan(&[second, first], &spare, &clusters), [(10, "a".to_string(), vec![1])]);
    assert!(shrink_plan(&[whole(12, 3, 1, TopologyScope::Any)], &spare, &clusters).is_empty());
}

#[test]
fn elastic_room_respects_minimum_runtime_preemptibility_and_tenant_rights() {
    let clusters = [cluster("a", vec![model("A100", &[], &[])])];
    let waiting = [whole(10, 2, 1, TopologyScope::Any)];
    let mut young = elastic_running(1, "a", "q", 0, 2);
    young.min_runtime_s = 7200;
    assert!(shrink_plan(&waiting, &[young], &clusters).is_empty());
    let mut pinned = elastic_running(1, "a", "q", 0, 2);
    pinned.preemptible = false;
    assert!(shrink_plan(&waiting, &[pinned], &clusters).is_empty());
    let rights = ReclaimRights {
        tenants: [(1, TenantRights { may_preempt: false, ..TenantRights::default() })].into(),
        project_tenants: [("p".to_owned(), 1)].into(),
    };
    let spare = [elastic_running(1, "a", "q", 0, 2)];
    assert!(
        plan_shrink_room(&waiting, &spare, &clusters, now(), Duration::seconds(60), &rights).is_empty(),
        "a tenant that may not preempt shrinks nobody"
    );
}

/// 3 nodes of 8 GPUs: 6 free on node 0 and node 1 (2 GPUs of movable jobs of `priority` on
/// each), 4 free on node 2 (a pinned job on the rest).
fn scattered(priority: i32) -> ClusterView {
    let mut m = model("A100", &[6, 6, 4], &[]);
    m.movable_per_node = vec![
        MovableRoom { free: 6, movable: 2, max_priority: priority },
        MovableRoom { free: 6, movable: 2, max_priority: priority },
    ];
    cluster("solo", vec![m])
}

fn consolidation_plan(waiting: &[PendingJob], clusters: &[ClusterView]) -> Vec<(u64, String, u32)> {
    plan_consolidation_room(waiting, clusters, now(), Duration::seconds(60))
        .into_iter()
        .map(|r| (r.job, r.cluster, r.moved_gpus))
        .collect()
}

#[test]
fn a_gang_that_fits_only_once_jobs_move_is_sent_where_they_can_move() {
    let gang = whole(1, 2, 8, TopologyScope::Any);
    let clusters = [scattered(100)];
    assert!(matches!(choose_cluster(&gang, &clusters, now()), Choice::NoCluster { .. }), "scattered room");
    let rooms = plan_consolidation_room(std::slice::from_ref(&gang), &clusters, now(), Duration::seconds(60));
    assert_eq!(rooms.len(), 1, "{rooms:?}");
    assert_eq!((rooms[0].cluster.as_str(), rooms[0].moved_gpus, rooms[0].epoch), ("solo", 4, 1));
    assert_eq!(rooms[0].reservation.gpus[0].per_node, [8, 8]);
    // Jobs more important than the gang are not moved for it.
    assert!(consolidation_plan(&[gang], &[scattered(1000)]).is_empty());
}

#[test]
fn no_gang_is_sent_where_the_jobs_it_moves_would_find_no_room() {
    // Node 2 has 2 free: the 4 GPUs two nodes' worth of moves need do not fit.
    let mut c = scattered(100);
    c.capacity.models[0].free_whole_per_node = vec![6, 6, 2];
    assert!(consolidation_plan(&[whole(1, 2, 8, TopologyScope::Any)], std::slice::from_ref(&c)).is_empty());
    // One node's worth moves 2 GPUs, which fit.
    assert_eq!(consolidation_plan(&[whole(1, 1, 8, TopologyScope::Any)], &[c]), [(1, "solo".to_string(), 2)]);
}

#[test]
fn one_consolidation_per_cluster_and_round_for_the_first_job_in_line() {
    let jobs = [whole(2, 1, 8, TopologyScope::Any), whole(1, 1, 8, TopologyScope::Any)];
    assert_eq!(consolidation_plan(&jobs, &[scattered(100)]), [(1, "solo".to_string(), 2)]);
}
