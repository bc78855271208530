//! `grus-schedbench --preemption-gangs N`: the cost of a full scheduling cycle in which
//! high-priority gangs find a fleet full of lower-priority work and each plans a preemption.
//!
//! The fleet is filled by the scheduler itself: one cycle over a backlog of low-priority work
//! of three kinds in turn (elastic jobs of 1-GPU replicas, minimum 2 and maximum 8; whole
//! 8-GPU jobs; 4 x 1-GPU jobs, all of any model), its starts applied as running jobs. Then `N`
//! gangs of 2 x 8 GPUs at a higher priority of the same queue arrive, and the measured cycle
//! plans their preemptions (elastic jobs give back spare replicas before any job is evicted
//! whole). Only the public cycle API is used, so the same file measures older versions.

use std::collections::BTreeMap;
use std::time::Instant;

use grus_scheduler::cluster::Cluster;
use grus_scheduler::cycle::{SchedulerConfig, SchedulerInput};
use grus_scheduler::job::{Elastic, Job, Resources};

use super::fill;
use grus_scheduler::queue::{Queue, Queues};

/// What one measured cycle decided and how long it took (median of `repeat`).
pub struct PreemptionCycle {
    pub running_jobs: usize,
    pub running_gpus: f64,
    pub fill_ms: f64,
    pub cycle_ms: Vec<f64>,
    pub evictions: usize,
    pub shrinks: usize,
    pub awaiting: usize,
}

fn low_priority_job(id: u64) -> Job {
    match id % 3 {
        0 => {
            let mut j = Job::single(id, 0, 2, Resources::whole_gpus(1, 1000, 1024));
            j.elastic = Some(Elastic { min: 2, max: 8 });
            j
        }
        1 => Job::single(id, 0, 1, Resources::whole_gpus(8, 1000, 1024)),
        _ => Job::single(id, 0, 4, Resources::whole_gpus(1, 1000, 1024)),
    }
}

/// Fills `cluster` with low-priority work, then times the cycle in which `gangs` high-priority
/// gangs arrive.
pub fn measure(cluster: &Cluster, gangs: usize, repeat: u32) -> PreemptionCycle {
    let queues = Queues::flat(vec![Queue::new(0, 0, "q")]).expect("one queue");
    let config = SchedulerConfig::default();
    let gpus = cluster.nodes().iter().map(|n| n.gpus.len()).sum::<usize>() as u64;
    // One job per 6 GPUs: at their minimum about 80 % of the fleet, and the elastic jobs grow
    // into the rest, so that there are spare replicas to give back.
    let backlog: Vec<Job> = (1..=gpus / 6).map(low_priority_job).collect();
    let filling = Instant::now();
    let mut input = SchedulerInput {
        cluster: cluster.clone(),
        queues,
        running: Vec::new(),
        pending: backlog,
        evictions: Vec::new(),
        holds: Vec::new(),
        past_usage: BTreeMap::new(),
        recent_moves: 0,
        now: 0,
    };
    let next = fill::start_pending(&mut input, &config);
    let fill_ms = filling.elapsed().as_secs_f64() * 1000.0;
    input.pending = (0..gangs as u64)
        .map(|i| {
            let mut j = Job::single(next + i, 0, 2, Resources::whole_gpus(8, 1000, 1024));
            j.priority = 100;
            j.submitted_at = 1_000 + i;
            j
        })
        .collect();
    input.now = 3_600;
    let (cycle_ms, d) = fill::timed_cycles(&input, &config, repeat);
    let kind = |name: &str| d.decisions.iter().filter(|x| format!("{x:?}").starts_with(name)).count();
    PreemptionCycle {
        running_jobs: input.running.len(),
        running_gpus: input.cluster.gpu_used_milli() as f64 / 1000.0,
        fill_ms,
        cycle_ms,
        evictions: kind("Evict"),
        shrinks: kind("Shrink"),
        awaiting: d.unplaced.values().filter(|u| format!("{u:?}").starts_with("AwaitingEviction")).count(),
    }
}
