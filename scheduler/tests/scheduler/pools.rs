//! Node pools: a job naming pools goes whole into the first that can take it and admit it;
//! quotas, fair share (weights per pool), borrowing, preemption and why a job waits all work
//! per pool.

use std::collections::BTreeMap;

use crate::common::*;
use grus_scheduler::cluster::{Cluster, NodeSpec};
use grus_scheduler::explain::Unplaced;
use grus_scheduler::job::{Job, JobId};
use grus_scheduler::queue::{Queue, ResourceKey, ResourceVector};
use proptest::prelude::*;

/// Nodes of 8 GPUs: the first `train` in pool `train`, the next `infer` in pool `infer`.
fn pooled(train: usize, infer: usize) -> Cluster {
    let spec = |i: usize, pool: &str| NodeSpec {
        pool: Some(pool.to_string()),
        ..NodeSpec::new(&format!("n{i}"), 256_000, 1 << 21, 8, "A100")
    };
    Cluster::new((0..train + infer).map(|i| spec(i, if i < train { "train" } else { "infer" })).collect()).unwrap()
}

fn in_pools(mut j: Job, pools: &[&str]) -> Job {
    j.pools = pools.iter().map(|p| p.to_string()).collect();
    j
}

fn pool_gpus(pool: &str, n: u64) -> ResourceVector {
    ResourceVector::new().with(ResourceKey::pool(pool), n * 1000)
}

fn nodes_of(sim: &Sim, id: u64) -> Vec<u32> {
    sim.running(id).unwrap().replicas.iter().map(|r| r.allocation.node.0).collect()
}

#[test]
fn a_job_naming_pools_goes_whole_into_the_first_that_can_take_it() {
    let mut sim = Sim::new(pooled(2, 2), vec![queue(0, "q", 0)], vec![]);
    sim.submit(in_pools(job(1, 0, 2, 8), &["infer", "train"]));
    sim.submit(in_pools(job(2, 0, 2, 8), &["infer", "train"]));
    sim.submit(in_pools(job(3, 0, 1, 1), &["infer"]));
    let d = sim.step();
    let mut runs = started(&d);
    runs.sort_unstable();
    assert_eq!(runs, vec![1, 2], "{d:?}");
    let mut first = nodes_of(&sim, 1);
    first.sort_unstable();
    assert_eq!(first, vec![2, 3], "the preferred pool first");
    let mut second = nodes_of(&sim, 2);
    second.sort_unstable();
    assert_eq!(second, vec![0, 1], "then the next pool, never split over both");
    let why = d.unplaced[&JobId(3)].to_string();
    assert!(why.starts_with("pool infer: task main: 0 of 1 gang members placed"), "{why}");
    assert!(!why.contains("another node pool"), "nodes outside the pool are not counted: {why}");
}

#[test]
fn a_pools_limit_is_never_exceeded_and_sends_the_job_to_its_next_pool() {
    let mut q = queue(0, "q", 0);
    q.limit = pool_gpus("train", 8);
    let mut sim = Sim::new(pooled(2, 2), vec![q], vec![]);
    sim.submit(in_pools(job(1, 0, 1, 8), &["train"]));
    sim.submit(in_pools(job(2, 0, 1, 8), &["train", "infer"]));
    sim.submit(in_pools(job(3, 0, 1, 8), &["train"]));
    let d = sim.step();
    let mut runs = started(&d);
    runs.sort_unstable();
    assert_eq!(runs, vec![1, 2]);
    assert!(nodes_of(&sim, 1)[0] < 2);
    assert!(nodes_of(&sim, 2)[0] >= 2, "train is at its limit: job 2 goes to infer");
    assert_eq!(
        d.unplaced[&JobId(3)],
        Unplaced::QueueLimit { queue: "q".into(), resource: "GPUs of pool train".into() },
        "{}",
        d.unplaced[&JobId(3)]
    );
}

#[test]
fn a_job_naming_no_pool_meeting_a_pools_limit_is_tried_in_the_other_pools() {
    let run = |limited: bool| {
        let mut q = queue(0, "q", 0);
        if limited {
            q.limit = ResourceVector::new().with(ResourceKey::pool("infer"), 1000);
        }
        let mut sim = Sim::new(pooled(1, 1), vec![q, queue(1, "other", 0)], vec![]);
        // Half of the infer node is taken: the tightest fit for 4 GPUs.
        sim.run_on(job(9, 1, 1, 4), 1, 0);
        sim.submit(job(1, 0, 1, 4));
        sim.step();
        nodes_of(&sim, 1)
    };
    assert_eq!(run(false), vec![1], "unlimited, it packs into the infer node");
    assert_eq!(run(true), vec![0], "infer's limit sends it to the train pool");
}

#[test]
fn per_pool_guarantees_decide_what_is_borrowed() {
    let mut q = queue(0, "q", 0);
    q.guarantee = pool_gpus("train", 8);
    let mut sim = Sim::new(pooled(1, 1), vec![q], vec![]);
    sim.submit(in_pools(job(1, 0, 1, 8), &["train"]));
    sim.submit(in_pools(job(2, 0, 1, 8), &["infer"]));
    let d = sim.step();
    let borrowed: BTreeMap<u64, bool> = d
        .decisions
        .iter()
        .filter_map(|x| match x {
            grus_scheduler::cycle::Decision::Start { job, borrowed, .. } => Some((job.0, *borrowed)),
            _ => None,
        })
        .collect();
    assert_eq!(borrowed, BTreeMap::from([(1, false), (2, true)]), "infer is guaranteed nothing");
}

#[test]
fn a_job_reclaims_its_pools_guarantee_only_from_work_in_that_pool() {
    let mut owner = queue(0, "owner", 0);
    owner.guarantee = pool_gpus("train", 8);
    let mut sim = Sim::new(pooled(1, 1), vec![owner, queue(1, "other", 0)], vec![]);
    // The other queue borrows both nodes.
    sim.run_on(job(1, 1, 1, 8), 0, 0);
    sim.run_on(job(2, 1, 1, 8), 1, 0);
    sim.input.now = 600;
    sim.submit(in_pools(job(10, 0, 1, 8), &["train"]));
    let d = sim.step();
    assert_eq!(evicted(&d), vec![(1, 10)], "the borrower on the train node, not the one in infer");
}

#[test]
fn a_job_naming_only_pools_the_cluster_lacks_says_so() {
    let mut sim = Sim::new(pooled(1, 0), vec![queue(0, "q", 0)], vec![]);
    sim.submit(in_pools(job(1, 0, 1, 1), &["gone", "missing"]));
    let d = sim.step();
    assert_eq!(d.unplaced[&JobId(1)], Unplaced::UnknownPool { pools: vec!["gone".into(), "missing".into()] });
    assert!(d.unplaced[&JobId(1)].to_string().contains("gone, missing"));
}

#[test]
fn over_quota_weight_is_per_pool() {
    let run = |weight_b_in_train: Option<u32>| {
        let mut b = queue(1, "b", 0);
        if let Some(w) = weight_b_in_train {
            b.pool_weights.insert("train".into(), w);
        }
        let mut sim = Sim::new(pooled(2, 1), vec![queue(0, "a", 0), b], vec![]);
        for i in 0..20 {
            sim.submit(in_pools(job(100 + i, 0, 1, 1), &["train"]));
            sim.submit(in_pools(job(200 + i, 1, 1, 1), &["train"]));
        }
        let d = sim.step();
        let a = started(&d).iter().filter(|j| **j < 200).count();
        (a, started(&d).len() - a)
    };
    assert_eq!(run(None), (8, 8), "equal weights share the pool equally");
    assert_eq!(run(Some(3)), (4, 12), "weight 3 to 1 in this pool");
}

/// Per queue, its limits in pools train and infer (GPUs).
type PoolLimits = Vec<(u64, u64)>;
/// Per job: queue, replicas, GPUs each, which pool preference (index into the choices).
type PooledJobs = Vec<(u32, u32, u32, u8)>;

/// A world of two pools and queues with per-pool limits, and jobs preferring pools at random.
fn arb_world() -> impl Strategy<Value = (PoolLimits, PooledJobs)> {
    (
        prop::collection::vec((1u64..=16, 1u64..=16), 2..=3),
        prop::collection::vec((0u32..3, 1u32..=3, 1u32..=8, 0u8..5), 1..24),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Pool limits are never exceeded, and every started gang sits whole in one of the pools it
    /// names, whatever the order and mix of jobs.
    #[test]
    fn pool_limits_are_never_exceeded_and_gangs_stay_in_a_named_pool((limits, jobs) in arb_world()) {
        let queues: Vec<Queue> = limits
            .iter()
            .enumerate()
            .map(|(i, &(train, infer))| {
                let mut q = queue(i as u32, &format!("q{i}"), 0);
                q.limit = pool_gpus("train", train).plus(&pool_gpus("infer", infer));
                q
            })
            .collect();
        let mut sim = Sim::new(pooled(2, 2), queues, vec![]);
        let choices: [&[&str]; 5] = [&[], &["train"], &["infer"], &["train", "infer"], &["infer", "train"]];
        for (i, &(q, replicas, gpus_each, pools)) in jobs.iter().enumerate() {
            let q = q % limits.len() as u32;
            sim.submit(in_pools(job(i as u64 + 1, q, replicas, gpus_each), choices[pools as usize]));
        }
        for round in 0..4 {
            sim.input.now = round * 100;
            sim.step();
            if round == 1 {
                if let Some(id) = sim.input.running.first().map(|r| r.job.id.0) {
                    sim.finish(id);
                }
            }
            let mut used: BTreeMap<(u32, String), u64> = BTreeMap::new();
            for r in &sim.input.running {
                let mut pools_of_gang = std::collections::BTreeSet::new();
                for p in &r.replicas {
                    let node = sim.input.cluster.node(p.allocation.node);
                    let pool = sim.input.cluster.pool_name(node.pool.unwrap()).to_string();
                    *used.entry((r.job.queue.0, pool.clone())).or_default() += p.allocation.gpu_milli();
                    pools_of_gang.insert(pool);
                }
                if !r.job.pools.is_empty() {
                    prop_assert_eq!(pools_of_gang.len(), 1, "job {:?} split over pools", r.job.id);
                    prop_assert!(r.job.pools.contains(pools_of_gang.iter().next().unwrap()));
                }
            }
            for ((q, pool), milli) in used {
                let (train, infer) = limits[q as usize];
                let limit = if pool == "train" { train } else { infer } * 1000;
                prop_assert!(milli <= limit, "queue {} uses {} milli of pool {} (limit {})", q, milli, pool, limit);
            }
        }
    }
}
