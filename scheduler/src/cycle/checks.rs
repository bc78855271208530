//! What every phase of the cycle leaves true, checked after each phase in debug builds (tests,
//! property tests, `grus dev` in debug), skipped in release builds: no device holds more than
//! 1000 milli; every job started in this cycle got at least its whole gang, and no task more
//! than its target; no shrink takes an elastic job below its minimum; and no queue, project or tenant goes above a limit it was within before
//! the cycle (limits lowered below what already runs are not the cycle's doing).

use crate::cycle::{replica_targets, Cycle, Decision};
use crate::queue::{ResourceVector, Usage};
use crate::resources::MILLI_PER_GPU;

/// The phase just finished, named in a failed check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    Evictions,
    Queues,
    Growth,
}

impl Cycle<'_> {
    /// Checks the post-conditions of `phase` (debug builds only).
    pub(super) fn check(&self, phase: Phase) {
        if cfg!(debug_assertions) {
            self.check_devices(phase);
            self.check_gangs(phase);
            self.check_limits(phase);
        }
    }

    fn check_devices(&self, phase: Phase) {
        for node in self.cluster.nodes() {
            for (i, gpu) in node.gpus.iter().enumerate() {
                assert!(
                    gpu.used_milli <= MILLI_PER_GPU,
                    "after {phase:?}: GPU {i} of node {} holds {} milli",
                    node.name,
                    gpu.used_milli
                );
            }
        }
    }

    fn check_gangs(&self, phase: Phase) {
        for d in &self.decisions {
            if let Decision::Shrink { job, replicas, .. } = d {
                let held = &self.held[job];
                let min = held.job.elastic.map_or(u32::MAX, |e| e.min) as usize;
                assert!(
                    held.replicas.len().saturating_sub(replicas.len()) >= min,
                    "after {phase:?}: {job:?} shrunk by {} of {} replicas, below its minimum {min}",
                    replicas.len(),
                    held.replicas.len()
                );
            }
            let Decision::Start { job, replicas, .. } = d else { continue };
            let held = self.held.get(job).unwrap_or_else(|| panic!("after {phase:?}: {job:?} started but not held"));
            for (task, (required, target)) in replica_targets(held.job).into_iter().enumerate() {
                let placed = replicas.iter().filter(|p| p.task == task).count() as u32;
                assert!(
                    (required..=target).contains(&placed),
                    "after {phase:?}: {job:?} task #{task} started with {placed} replicas, gang {required}, target {target}"
                );
            }
        }
    }

    /// Compares what the held jobs use (preemptors' holds are reservations, not usage) with
    /// what the running jobs used when the cycle began.
    fn check_limits(&self, phase: Phase) {
        let queues = &self.input.queues;
        let mut now = Usage::default();
        for h in self.held.values() {
            now.add(h.job.queue, h.job.priority, &h.usage);
        }
        let mut before = Usage::default();
        for r in &self.input.running {
            let usage = ResourceVector::of_allocations(&self.input.cluster, r.replicas.iter().map(|p| &p.allocation));
            before.add(r.job.queue, r.job.priority, &usage);
        }
        let within = |what: &str, limit: &ResourceVector, now: ResourceVector, before: ResourceVector| {
            for (key, max) in limit.iter() {
                let (used, was) = (now.get(key), before.get(key));
                assert!(
                    used <= max.max(was),
                    "after {phase:?}: {what} uses {used} of {key:?}, above its limit {max} (it used {was} before the cycle)"
                );
            }
        };
        for q in queues.queues() {
            within(&format!("queue {}", q.name), &q.limit, now.queue(q.id), before.queue(q.id));
        }
        for p in queues.projects() {
            within(&format!("project {}", p.name), &p.limit, now.project(queues, p.id), before.project(queues, p.id));
        }
        for t in queues.tenants() {
            within(&format!("tenant {}", t.name), &t.limit, now.tenant(queues, t.id), before.tenant(queues, t.id));
        }
    }
}
