//! `grus-schedbench --fair-share-queues Q [--tenants T]`: the cost of a scheduling cycle in
//! which many queues compete, so that fair share (the fill, and the ranking of every turn)
//! decides the order.
//!
//! `Q` queues share the fleet; half of it is already held by running work of every queue (a
//! cycle over a first backlog, its starts applied), then a backlog of 4 jobs per GPU left
//! arrives in `Q` queues, 1-GPU, 2-GPU and 8-GPU jobs in turn, and the measured cycle serves
//! it. With `--tenants T` the queues are spread over `T` tenants of 4 projects each
//! ([`hierarchy`]); without, they are all in one project (the flat case, which older versions
//! build too).

use std::collections::BTreeMap;

use grus_scheduler::cluster::Cluster;
use grus_scheduler::cycle::{Decision, SchedulerConfig, SchedulerInput};
use grus_scheduler::job::{Job, Resources};
use grus_scheduler::queue::Queues;

use super::fill;

#[path = "hierarchy.rs"]
mod hierarchy;

/// What the measured cycle decided and how long it took (each pass).
pub struct FairShareCycle {
    pub running_jobs: usize,
    pub pending_jobs: usize,
    pub started: usize,
    pub cycle_ms: Vec<f64>,
}

fn job(id: u64, queues: u32) -> Job {
    let queue = (id % u64::from(queues)) as u32;
    let gpus = [1, 2, 8][(id / u64::from(queues) % 3) as usize];
    let mut j = Job::single(id, queue, 1, Resources::whole_gpus(gpus, 1000, 1024));
    j.submitted_at = id;
    j
}

pub fn measure(cluster: &Cluster, queues: u32, tenants: u32, repeat: u32) -> FairShareCycle {
    let tree: Queues = hierarchy::queues(queues, tenants);
    let config = SchedulerConfig::default();
    let gpus = cluster.nodes().iter().map(|n| n.gpus.len()).sum::<usize>() as u64;
    // About half the fleet: jobs average 11/3 GPUs.
    let first: Vec<Job> = (1..=gpus * 3 / 22).map(|id| job(id, queues)).collect();
    let mut input = SchedulerInput {
        cluster: cluster.clone(),
        queues: tree,
        running: Vec::new(),
        pending: first,
        evictions: Vec::new(),
        holds: Vec::new(),
        past_usage: BTreeMap::new(),
        recent_moves: 0,
        now: 0,
    };
    let next = fill::start_pending(&mut input, &config);
    let free = gpus - input.cluster.gpu_used_milli() / 1000;
    input.pending = (next..next + free * 4).map(|id| job(id, queues)).collect();
    input.now = 3_600;
    let (cycle_ms, d) = fill::timed_cycles(&input, &config, repeat);
    FairShareCycle {
        running_jobs: input.running.len(),
        pending_jobs: input.pending.len(),
        started: d.decisions.iter().filter(|x| matches!(x, Decision::Start { .. })).count(),
        cycle_ms,
    }
}
