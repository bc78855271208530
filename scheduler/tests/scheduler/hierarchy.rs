//! Hierarchical fair share in the cycle: turns go by tenant, then project, then queue deficit,
//! and a queue below its fair share takes back borrowed capacity from one above its own, whole
//! gangs only, never past the victim queue's fair share.

use grus_scheduler::queue::{Project, Queue, Queues, Tenant};

use crate::common::*;

/// Tenants 0 and 1, projects 0..4 (0 and 2 in tenant 0, 1 and 3 in tenant 1), and queues
/// `(id, project)`.
fn hierarchy(queues: &[(u32, u32)]) -> Queues {
    let tenants = vec![Tenant::new(0, "t0"), Tenant::new(1, "t1")];
    let projects = (0..4).map(|p| Project::new(p, p % 2, &format!("p{p}"))).collect();
    let queues = queues.iter().map(|&(id, p)| Queue::new(id, p, &format!("q{id}"))).collect();
    Queues::new(tenants, projects, queues).unwrap()
}

fn held_by(sim: &Sim, queues: &[u32]) -> u64 {
    sim.input
        .running
        .iter()
        .filter(|r| queues.contains(&r.job.queue.0))
        .map(|r| r.replicas.iter().map(|p| p.allocation.gpu_milli()).sum::<u64>())
        .sum::<u64>()
        / 1000
}

#[test]
fn tenants_take_turns_by_their_own_deficit_not_by_their_number_of_queues() {
    // Tenant 0 has three queues, tenant 1 one; every queue wants 8 one-GPU jobs on 8 GPUs.
    let mut jobs = Vec::new();
    for q in 0..4u32 {
        for i in 0..8u64 {
            jobs.push(job(q as u64 * 100 + i, q, 1, 1));
        }
    }
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![], jobs);
    sim.input.queues = hierarchy(&[(0, 0), (1, 0), (2, 2), (3, 1)]);
    sim.step();
    assert_eq!(held_by(&sim, &[0, 1, 2]), 4, "tenant 0 gets half");
    assert_eq!(held_by(&sim, &[3]), 4, "tenant 1's one queue gets the other half");
    // Inside tenant 0, projects 0 and 2 share its half: project 0's two queues together get 2.
    assert_eq!(held_by(&sim, &[0, 1]), 2);
    assert_eq!(held_by(&sim, &[2]), 2);
}

#[test]
fn a_queue_below_its_fair_share_reclaims_whole_gangs_from_one_above_it_and_no_further() {
    // Queue 0 (tenant 0) runs two 4-GPU gangs on 8 GPUs, all borrowed (no guarantees). Queue 1
    // (tenant 1) submits a 4-GPU gang: the fair share is half each, so one gang of queue 0 is
    // evicted whole, and queue 1's gang starts once it has left.
    let mut sim = Sim::new(cluster(2, 4, "A100"), vec![], vec![job(1, 0, 1, 4), job(2, 0, 1, 4)]);
    sim.input.queues = hierarchy(&[(0, 0), (1, 1)]);
    sim.step();
    assert_eq!(held_by(&sim, &[0]), 8);
    sim.input.now = 100;
    sim.submit(job(3, 1, 1, 4));
    let d = sim.step();
    let victims = evicted(&d);
    assert_eq!(victims.len(), 1, "one gang is enough: {:?} {:?}", d.decisions, d.unplaced);
    assert_eq!(victims[0].1, 3, "evicted for job 3");
    sim.complete_evictions();
    sim.step();
    assert!(sim.is_running(3));
    assert_eq!(held_by(&sim, &[0]), 4);
    // The evicted gang, requeued, would take queue 0 above its fair share: it waits, and
    // nothing swings back.
    for t in 1..4 {
        sim.input.now = 100 + t * 100;
        let d = sim.step();
        assert!(evicted(&d).is_empty(), "no eviction back: {:?}", d.decisions);
    }
    assert!(sim.is_running(3));
}

#[test]
fn reclaim_to_fair_share_never_takes_the_victim_queue_below_its_fair_share() {
    // Queue 0 holds six 1-GPU jobs of 8 GPUs, queue 1 asks for a gang of 6: fair shares are 4
    // and 4, so queue 1's gang would take it above its own and it evicts nothing; a gang of 4
    // fits in the 2 free GPUs and 2 taken from queue 0, which keeps its fair share.
    let jobs: Vec<_> = (0..6).map(|i| job(i, 0, 1, 1)).collect();
    let mut sim = Sim::new(cluster(1, 8, "A100"), vec![], jobs);
    sim.input.queues = hierarchy(&[(0, 0), (1, 1)]);
    sim.step();
    sim.input.now = 100;
    sim.submit(job(10, 1, 6, 1));
    let d = sim.step();
    assert!(evicted(&d).is_empty(), "{:?}", d.decisions);
    sim.cancel(10);
    sim.submit(job(11, 1, 4, 1));
    let d = sim.step();
    assert_eq!(evicted(&d).len(), 2, "{:?}", d.decisions);
    sim.complete_evictions();
    sim.step();
    assert!(sim.is_running(11));
    assert_eq!(held_by(&sim, &[0]), 4);
}
