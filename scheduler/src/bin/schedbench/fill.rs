//! What the cycle benches share: one cycle over the input's pending jobs, its starts applied
//! as running jobs (the fleet filled by the scheduler itself). Public cycle API only, so that
//! the benches build against older versions.

use std::collections::BTreeMap;

use grus_scheduler::cycle::{schedule, Decision, RunningJob, SchedulerConfig, SchedulerInput};
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
