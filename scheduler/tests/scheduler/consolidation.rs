//! Consolidation: a gang that waits only because free GPUs are scattered gets room by moving
//! running jobs that fit again at once, within the disruption budget and the rate limit.

use crate::common::*;
use grus_scheduler::cycle::ConsolidationConfig;
use grus_scheduler::explain::Unplaced;
use grus_scheduler::job::{Job, JobId};
use proptest::prelude::*;

/// 3 nodes x 8 GPUs: job 1 (2 GPUs) on node 0, job 2 (2 GPUs) on node 1, job 3 (`fixed` GPUs,
/// neither preemptible nor checkpointing) on node 2; pending, job 10: two replicas of 8 GPUs.
/// 20 GPUs are free, but no whole node.
fn scattered(fixed: u32, second_queue: u32) -> Sim {
    let mut sim = Sim::new(cluster(3, 8, "A100"), vec![queue(0, "q0", 24), queue(1, "q1", 0)], vec![]);
    sim.run_on(job(1, 0, 1, 2), 0, 0);
    sim.run_on(job(2, second_queue, 1, 2), 1, 0);
    let mut pinned = job(3, 0, 1, fixed);
    pinned.preemptible = false;
    sim.run_on(pinned, 2, 0);
    sim.input.now = 600;
    sim.submit(job(10, 0, 2, 8));
    sim
}

#[test]
fn a_gang_waiting_only_for_scattered_room_starts_after_two_small_jobs_move_and_they_run_again() {
    let mut sim = scattered(4, 0);
    let d = sim.step();
    assert_eq!(moved(&d), vec![(1, 10), (2, 10)], "{d:?}");
    assert!(evicted(&d).is_empty(), "nothing is evicted: the gang is not entitled to preempt");
    assert_eq!(d.unplaced[&JobId(10)], Unplaced::AwaitingMoves { moved: vec![1, 2] });
    assert!(d.unplaced[&JobId(10)].to_string().contains("job 1, job 2 move(s) to other nodes"));
    // While the moved jobs are in their grace period, the gang keeps waiting, nothing else.
    sim.input.now += 10;
    let d = sim.step();
    assert!(d.decisions.is_empty(), "{d:?}");
    assert_eq!(d.unplaced[&JobId(10)], Unplaced::AwaitingMoves { moved: vec![1, 2] });
    // They leave and are requeued: the gang starts, and both fit again at once on node 2.
    sim.complete_evictions();
    sim.input.now += 30;
    let d = sim.step();
    let mut runs = started(&d);
    runs.sort_unstable();
    assert_eq!(runs, vec![1, 2, 10], "{d:?}");
    assert!(d.unplaced.is_empty());
    for id in [1, 2] {
        assert_eq!(sim.running(id).unwrap().replicas[0].allocation.node.0, 2, "job {id} moved beside job 3");
    }
    assert!(sim.step().decisions.is_empty(), "settled");
}

#[test]
fn no_job_is_moved_that_would_not_fit_again_at_once() {
    // Node 2 keeps 2 free GPUs: jobs 1 and 2 (2 GPUs each) would not both fit there again.
    let mut sim = scattered(6, 0);
    let d = sim.step();
    assert!(moved(&d).is_empty() && evicted(&d).is_empty(), "{d:?}");
    assert!(matches!(d.unplaced[&JobId(10)], Unplaced::NoPreemptionPlan { .. }), "{:?}", d.unplaced);
}

#[test]
fn moves_stay_within_each_queues_disruption_budget() {
    let one_per_queue = ConsolidationConfig { max_moves_per_queue: 1, ..ConsolidationConfig::default() };
    let mut sim = scattered(4, 0);
    sim.config.consolidation = one_per_queue;
    assert!(moved(&sim.step()).is_empty(), "both jobs of queue 0 would move");
    // One job of each queue: within the budget.
    let mut sim = scattered(4, 1);
    sim.config.consolidation = one_per_queue;
    assert_eq!(moved(&sim.step()), vec![(1, 10), (2, 10)]);
    // Off.
    let mut sim = scattered(4, 0);
    sim.config.consolidation = ConsolidationConfig::OFF;
    assert!(moved(&sim.step()).is_empty());
}

#[test]
fn moves_stay_within_the_hourly_rate_limit() {
    let mut sim = scattered(4, 0);
    let limit = sim.config.consolidation.max_moves_per_hour;
    sim.input.recent_moves = limit - 1;
    assert!(moved(&sim.step()).is_empty(), "two moves would exceed the limit");
    let mut sim = scattered(4, 0);
    sim.input.recent_moves = limit - 2;
    assert_eq!(moved(&sim.step()).len(), 2);
}

#[test]
fn only_preemptible_or_checkpointing_jobs_no_more_important_than_the_gang_are_moved() {
    let with_job_1 = |f: &dyn Fn(&mut Job)| {
        let mut sim = scattered(4, 0);
        let r = sim.input.running.iter_mut().find(|r| r.job.id == JobId(1)).unwrap();
        f(&mut r.job);
        moved(&sim.step())
    };
    assert!(with_job_1(&|j| j.preemptible = false).is_empty(), "pinned");
    assert_eq!(
        with_job_1(&|j| {
            j.preemptible = false;
            j.checkpoints = true;
        })
        .len(),
        2,
        "a job that checkpoints loses nothing by a move"
    );
    assert!(with_job_1(&|j| j.priority = 1000).is_empty(), "more important than the gang");
    assert!(with_job_1(&|j| j.min_runtime_s = 3600).is_empty(), "within its minimum runtime");
}

/// A random fragmented cluster: nodes of 8 GPUs, small jobs (1 to 4 GPUs, some pinned) spread
/// over them, and one pending gang of whole nodes.
#[derive(Clone, Debug)]
struct Scattered {
    nodes: usize,
    /// (GPUs, node choice, movable, checkpoints, queue)
    small: Vec<(u32, usize, bool, bool, u32)>,
    gang_replicas: u32,
    budget: u32,
}

fn scattered_gen() -> impl Strategy<Value = Scattered> {
    (
        2usize..7,
        proptest::collection::vec((1u32..5, 0usize..7, any::<bool>(), any::<bool>(), 0u32..3), 4..20),
        1u32..3,
        1u32..4,
    )
        .prop_map(|(nodes, small, gang_replicas, budget)| Scattered { nodes, small, gang_replicas, budget })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Consolidation never leaves more gangs unplaceable than before: once the moved jobs have
    /// left, the gang and every moved job start in one cycle. The budget and the limit hold.
    #[test]
    fn moves_never_leave_a_job_without_room(s in scattered_gen()) {
        // Guarantees, so that pinned jobs that checkpoint may run (and move) inside them.
        let queues = (0..3).map(|q| queue(q, &format!("q{q}"), 12)).collect();
        let mut sim = Sim::new(cluster(s.nodes, 8, "A100"), queues, vec![]);
        sim.config.consolidation.max_moves_per_queue = s.budget;
        let mut used = vec![0u32; s.nodes];
        for (i, &(gpus, choice, movable, checkpoints, q)) in s.small.iter().enumerate() {
            let Some(node) = (0..s.nodes).map(|k| (choice + k) % s.nodes).find(|&n| used[n] + gpus <= 8) else {
                continue;
            };
            let mut j = job(i as u64 + 1, q, 1, gpus);
            j.preemptible = movable;
            j.checkpoints = checkpoints;
            sim.run_on(j, node as u32, used[node] as u8);
            used[node] += gpus;
        }
        sim.input.now = 600;
        let gang = job(100, 0, s.gang_replicas, 8);
        sim.submit(gang);
        let d = sim.step();
        let moves = moved(&d);
        // A gang within its queue's guarantee may reclaim borrowed work instead; moves and
        // evictions are never mixed in one plan.
        prop_assert!(moves.is_empty() || evicted(&d).is_empty(), "{d:?}");
        let mut per_queue = [0u32; 3];
        for (j, p) in &moves {
            prop_assert_eq!(*p, 100);
            let q = sim.running(*j).unwrap().job.queue.0 as usize;
            per_queue[q] += 1;
            let r = sim.running(*j).unwrap();
            prop_assert!(r.job.preemptible || r.job.checkpoints);
        }
        prop_assert!(per_queue.iter().all(|&n| n <= s.budget), "{per_queue:?} over {}", s.budget);
        if d.starts().any(|(j, _)| j.0 == 100) {
            prop_assert!(moves.is_empty());
            return Ok(());
        }
        if moves.is_empty() {
            return Ok(());
        }
        sim.complete_evictions();
        sim.input.now += 60;
        let d = sim.step();
        let runs = started(&d);
        prop_assert!(runs.contains(&100), "the gang starts once the moved jobs left: {d:?}");
        for (j, _) in &moves {
            prop_assert!(runs.contains(j), "moved job {j} fits again at once: {d:?}");
        }
        prop_assert!(sim.input.pending.is_empty(), "nothing is left without room: {:?}", d.unplaced);
    }
}

/// Runs `small` jobs (GPUs, preferred node, movable, checkpoints, queue) on `nodes` nodes of 8
/// GPUs, first fit from the preferred node, in queues guaranteed 12 GPUs each; a gang of
/// `gang` x 8 GPUs of q0 arrives; once the jobs it moves have left, each of them starts again
/// in the next cycle.
fn assert_moved_jobs_fit_again(nodes: usize, small: &[(u32, usize, bool, bool, u32)], gang: u32) {
    let queues = (0..3).map(|q| queue(q, &format!("q{q}"), 12)).collect();
    let mut sim = Sim::new(cluster(nodes, 8, "A100"), queues, vec![]);
    sim.config.consolidation.max_moves_per_queue = 2;
    let mut used = vec![0u32; nodes];
    for (i, &(gpus, choice, movable, checkpoints, q)) in small.iter().enumerate() {
        let Some(node) = (0..nodes).map(|k| (choice + k) % nodes).find(|&n| used[n] + gpus <= 8) else { continue };
        let mut j = job(i as u64 + 1, q, 1, gpus);
        j.preemptible = movable;
        j.checkpoints = checkpoints;
        sim.run_on(j, node as u32, used[node] as u8);
        used[node] += gpus;
    }
    sim.input.now = 600;
    sim.submit(job(100, 0, gang, 8));
    let d = sim.step();
    let moves = moved(&d);
    sim.complete_evictions();
    sim.input.now += 60;
    let d = sim.step();
    for (j, _) in &moves {
        assert!(started(&d).contains(j), "moved job {j} fits again at once: {d:?}");
    }
}

#[test]
fn moved_jobs_are_refitted_in_the_order_the_next_cycle_serves_them() {
    // Found by `moves_never_leave_a_job_without_room`: jobs 2 (preemptible) and 8 (may not
    // borrow) of q0 were refitted 8 first, but the next cycle serves 2 first, and 8 then found
    // q0's guarantee of 12 taken by the gang and job 2, and stayed out.
    let small = [
        (3, 3, false, false, 1),
        (2, 4, true, true, 0),
        (1, 3, false, false, 1),
        (4, 3, false, false, 1),
        (2, 5, false, false, 0),
        (1, 6, false, false, 0),
        (2, 2, false, false, 1),
        (1, 3, false, true, 0),
    ];
    assert_moved_jobs_fit_again(5, &small, 1);
}

#[test]
fn moved_jobs_fit_again_whichever_queue_the_next_cycle_serves_first() {
    // Found by `moves_never_leave_a_job_without_room`: moved jobs 6 and 12 of q0 and 10 of q1
    // were refitted by priority and age (6, 10, 12), but the next cycle gave q1 (further below
    // its fair share) its turn first, and job 10 took the last node with room for job 12's 3
    // GPUs. A move is planned only if the jobs fit again in every order the queues' turns may
    // take.
    let pinned = |gpus, choice| (gpus, choice, false, false, 0);
    let movable = |gpus, choice, q| (gpus, choice, true, false, q);
    let small = [
        pinned(3, 3),
        pinned(2, 4),
        pinned(4, 6),
        pinned(4, 3),
        pinned(4, 6),
        movable(2, 0, 0),
        pinned(2, 2),
        pinned(1, 3),
        pinned(1, 3),
        movable(1, 0, 1),
        pinned(2, 2),
        movable(3, 0, 0),
        pinned(3, 3),
    ];
    assert_moved_jobs_fit_again(6, &small, 2);
}

#[test]
fn a_gang_entitled_to_evict_moves_the_jobs_instead_when_they_fit_again() {
    let mut sim = scattered(4, 0);
    sim.input.pending[0].priority = 100;
    let d = sim.step();
    assert_eq!(moved(&d), vec![(1, 10), (2, 10)], "a move loses less than an eviction: {d:?}");
    assert!(evicted(&d).is_empty());
}
