//! What the cycle benches share: one cycle over the input's pending jobs, its starts applied
//! as running jobs (the fleet filled by the scheduler itself), and the timed cycles. Public cycle API only, so that
//! the benches build against older versions.

use std::collections::BTreeMap;
use std::time::Instant;

use grus_scheduler::cycle::{schedule, Decision, Decisions, RunningJob, SchedulerConfig, SchedulerInput};
use grus_scheduler::job::JobId;

/// Schedules `input`'s pending jobs and moves those that started to `input.running`; the
/// pending list is left empty. Returns the next free job id.
pub fn start_pending(input: &mut SchedulerInput, config: &SchedulerConfig) -> u64 {
    let started = schedule(input, config);
    let by_id: BTreeMap<JobId, _> = input.pending.drain(..).map(|j| (j.id, j)).collect();
    for d in &started.decisions {
        if let Decision::Start { job, replicas, .. } = d {
            for r in replicas {
                input.cluster.allocate(&r.allocation).expect("a started replica fits");
            }
            input.running.push(RunningJob {
                job: by_id[job].clone(),
                replicas: replicas.clone(),
                started_at: 0,
                privileged: false,
            });
        }
    }
    by_id.keys().last().map_or(1, |j| j.0 + 1)
}

/// Runs `repeat` cycles over `input`: their times in milliseconds, fastest first, and the
/// decisions of the last (every pass decides the same).
pub fn timed_cycles(input: &SchedulerInput, config: &SchedulerConfig, repeat: u32) -> (Vec<f64>, Decisions) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        last = Some(schedule(input, config));
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    (times, last.expect("at least one pass"))
}
