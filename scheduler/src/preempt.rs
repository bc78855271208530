//! Preemption planning: which running jobs a pending job may evict, in which order, and the
//! smallest set of them that makes room.
//!
//! Job-level only: a victim is a whole job, never a lone replica of a gang. A job may evict
//! - in its own queue, jobs of strictly lower priority;
//! - in its own project, borrowed jobs of strictly lower priority;
//! - anywhere, borrowed jobs of no higher priority, when the preemptor stays within its own
//!   queue's guarantee (reclaim). Guaranteed usage is never taken for a borrower (invariant 5).
//!
//! A job whose tenant may not preempt evicts nothing. Privileged (themselves preempting) and
//! non-preemptible jobs are never victims, nor are jobs
//! younger than their minimum runtime. Candidates are tried lowest priority first, borrowed
//! first, then fewest GPU-seconds disturbed; the greedy set is then pruned so that no victim
//! remains that is not needed. Whether a set makes room is asked of a [`Probe`], which the cycle
//! implements by releasing the victims on a scratch cluster and placing the preemptor there.

use crate::explain::PreemptionFailure;
use crate::job::{JobId, QueueId};
use crate::queue::ProjectId;

/// What the planner knows of the preemptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preemptor {
    pub job: JobId,
    pub queue: QueueId,
    pub project: Option<ProjectId>,
    pub priority: i32,
    /// Its queue's usage plus this job would stay inside the queue's guarantee.
    pub within_guarantee: bool,
    /// Allowed to preempt at all (its tenant's right): when not, it has no victims.
    pub may_preempt: bool,
}

/// What the planner knows of one running job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VictimInfo {
    pub job: JobId,
    pub queue: QueueId,
    pub project: Option<ProjectId>,
    pub priority: i32,
    pub preemptible: bool,
    pub privileged: bool,
    /// Above its queue's guarantee (see `queue::classify_borrowed`).
    pub borrowed: bool,
    pub started_at: u64,
    pub min_runtime_s: u64,
    /// GPU milli the job holds (for GPU-seconds disturbed).
    pub gpu_milli: u64,
}

/// On what grounds a victim may be evicted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ground {
    /// Lower priority in the same queue, or borrowed and lower priority in the same project.
    LowerPriority,
    /// Borrowed usage of another queue, reclaimed by a preemptor inside its guarantee: valid
    /// only if the preemptor's placement stays inside the guarantee.
    Reclaim,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eligible {
    pub job: JobId,
    pub ground: Ground,
    pub priority: i32,
    pub borrowed: bool,
}

impl Eligible {
    /// How much evicting this victim matters: lower priority, then borrowed, matters less.
    fn weight(&self) -> (i32, bool) {
        (self.priority, !self.borrowed)
    }
}

/// How many single victims [`choose_victims`] tries when the greedy set has several.
const SINGLE_VICTIM_TRIES: usize = 128;

/// The eligible victims among `candidates`, in the order they should be tried.
pub fn eligible_victims(
    p: &Preemptor,
    candidates: &[VictimInfo],
    now: u64,
) -> Result<Vec<Eligible>, PreemptionFailure> {
    if !p.may_preempt {
        return Err(PreemptionFailure::NotAllowed);
    }
    let (mut by_priority, mut by_guarantee, mut by_min_runtime, mut privileged) = (0u32, 0u32, 0u32, 0u32);
    let mut eligible: Vec<(&VictimInfo, Ground)> = Vec::new();
    for v in candidates.iter().filter(|v| v.job != p.job) {
        if v.privileged || !v.preemptible {
            privileged += 1;
            continue;
        }
        let same_project = p.project.is_some() && v.project == p.project;
        let ground = if v.queue == p.queue {
            (v.priority < p.priority).then_some(Ground::LowerPriority)
        } else if v.borrowed && same_project && v.priority < p.priority {
            Some(Ground::LowerPriority)
        } else if v.borrowed && p.within_guarantee && v.priority <= p.priority {
            Some(Ground::Reclaim)
        } else {
            None
        };
        let Some(ground) = ground else {
            if v.queue != p.queue && (!v.borrowed || !p.within_guarantee) {
                by_guarantee += 1;
            } else {
                by_priority += 1;
            }
            continue;
        };
        if now.saturating_sub(v.started_at) < v.min_runtime_s {
            by_min_runtime += 1;
            continue;
        }
        eligible.push((v, ground));
    }
    if eligible.is_empty() {
        if by_priority + by_guarantee + by_min_runtime + privileged == 0 {
            return Err(PreemptionFailure::InsufficientEvenIfAllEvicted);
        }
        if by_min_runtime == 0 && privileged == 0 {
            return Err(PreemptionFailure::NotEntitled);
        }
        return Err(PreemptionFailure::AllCandidatesProtected {
            by_priority,
            by_guarantee,
            by_min_runtime,
            privileged,
        });
    }
    eligible.sort_by_key(|(v, _)| {
        let gpu_seconds = v.gpu_milli.saturating_mul(now.saturating_sub(v.started_at));
        (v.priority, !v.borrowed, gpu_seconds, std::cmp::Reverse(v.started_at), v.job)
    });
    Ok(eligible
        .into_iter()
        .map(|(v, ground)| Eligible { job: v.job, ground, priority: v.priority, borrowed: v.borrowed })
        .collect())
}

/// The cycle's view of "would the preemptor fit if these jobs were gone".
pub trait Probe {
    /// Takes a victim's allocations and usage away.
    fn remove(&mut self, victim: JobId);
    /// Gives them back (undoes `remove`).
    fn restore(&mut self, victim: JobId);
    /// Whether the preemptor fits now (placement and quota); `within_guarantee` additionally
    /// requires its queue to stay inside its guarantee. Leaves the state as it found it.
    fn fits(&mut self, within_guarantee: bool) -> bool;
}

/// The victims to evict, from `eligible` in order: greedily until the preemptor fits, then
/// pruned of every victim that is not needed. The probe is left as it was found.
pub fn choose_victims(eligible: &[Eligible], probe: &mut impl Probe) -> Result<Vec<JobId>, PreemptionFailure> {
    let needs_guarantee = |set: &[Eligible]| set.iter().any(|e| e.ground == Ground::Reclaim);
    let mut chosen: Vec<Eligible> = Vec::new();
    let mut fitted = false;
    for e in eligible {
        probe.remove(e.job);
        chosen.push(*e);
        if probe.fits(needs_guarantee(&chosen)) {
            fitted = true;
            break;
        }
    }
    if !fitted {
        for e in chosen.iter().rev() {
            probe.restore(e.job);
        }
        return Err(PreemptionFailure::InsufficientEvenIfAllEvicted);
    }
    // Prune: give each earlier victim back; keep it running if the preemptor still fits.
    let mut i = chosen.len() - 1;
    while i > 0 {
        i -= 1;
        let e = chosen[i];
        probe.restore(e.job);
        let rest: Vec<Eligible> = chosen.iter().copied().filter(|x| x.job != e.job).collect();
        if probe.fits(needs_guarantee(&rest)) {
            chosen = rest;
        } else {
            probe.remove(e.job);
        }
    }
    for e in chosen.iter().rev() {
        probe.restore(e.job);
    }
    // Fewest jobs: one victim that matters no more than the worst of the set may replace it
    // (a single big job instead of many small ones of the same priority).
    if chosen.len() > 1 {
        let worst = chosen.iter().map(Eligible::weight).max().expect("not empty");
        for e in eligible.iter().take(SINGLE_VICTIM_TRIES).filter(|e| e.weight() <= worst) {
            probe.remove(e.job);
            let fits = probe.fits(e.ground == Ground::Reclaim);
            probe.restore(e.job);
            if fits {
                return Ok(vec![e.job]);
            }
        }
    }
    Ok(chosen.into_iter().map(|e| e.job).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn victim(job: u64, queue: u32, priority: i32, borrowed: bool) -> VictimInfo {
        VictimInfo {
            job: JobId(job),
            queue: QueueId(queue),
            project: Some(ProjectId(queue)),
            priority,
            preemptible: true,
            privileged: false,
            borrowed,
            started_at: 0,
            min_runtime_s: 0,
            gpu_milli: 1000,
        }
    }

    fn preemptor(queue: u32, priority: i32, within_guarantee: bool) -> Preemptor {
        Preemptor {
            job: JobId(100),
            queue: QueueId(queue),
            project: Some(ProjectId(queue)),
            priority,
            within_guarantee,
            may_preempt: true,
        }
    }

    #[test]
    fn a_preemptor_without_the_right_has_no_victims() {
        let p = Preemptor { may_preempt: false, ..preemptor(0, 100, true) };
        let candidates = [victim(1, 0, 0, true)];
        assert_eq!(eligible_victims(&p, &candidates, 0), Err(PreemptionFailure::NotAllowed));
        assert!(eligible_victims(&preemptor(0, 100, true), &candidates, 0).is_ok(), "with it, the same victim");
    }

    /// A probe over GPU counts: each job frees its GPUs; the preemptor needs `need` free.
    struct Counting {
        free: u64,
        need: u64,
        gpus: BTreeMap<JobId, u64>,
        removed: BTreeSet<JobId>,
    }

    impl Probe for Counting {
        fn remove(&mut self, v: JobId) {
            assert!(self.removed.insert(v));
            self.free += self.gpus[&v];
        }
        fn restore(&mut self, v: JobId) {
            assert!(self.removed.remove(&v));
            self.free -= self.gpus[&v];
        }
        fn fits(&mut self, _: bool) -> bool {
            self.free >= self.need
        }
    }

    #[test]
    fn same_queue_needs_strictly_lower_priority_and_other_queues_only_lose_borrowed_usage() {
        let cands =
            vec![victim(1, 1, 100, false), victim(2, 1, 50, false), victim(3, 2, 0, false), victim(4, 2, 0, true)];
        let got = eligible_victims(&preemptor(1, 100, true), &cands, 10).unwrap();
        let jobs = |v: &[Eligible]| v.iter().map(|e| (e.job, e.ground)).collect::<Vec<_>>();
        assert_eq!(jobs(&got), vec![(JobId(4), Ground::Reclaim), (JobId(2), Ground::LowerPriority)]);
        // A borrower may not reclaim.
        let got = eligible_victims(&preemptor(1, 100, false), &cands, 10).unwrap();
        assert_eq!(jobs(&got), vec![(JobId(2), Ground::LowerPriority)]);
        // Reclaim never takes a higher-priority victim.
        let err = eligible_victims(&preemptor(3, 0, true), &[victim(5, 2, 10, true)], 10).unwrap_err();
        assert_eq!(err, PreemptionFailure::NotEntitled);
    }

    #[test]
    fn protected_candidates_are_counted_by_reason() {
        let mut young = victim(1, 1, 0, false);
        young.min_runtime_s = 60;
        young.started_at = 30;
        let mut privileged = victim(2, 1, 0, false);
        privileged.privileged = true;
        let mut pinned = victim(3, 1, 0, false);
        pinned.preemptible = false;
        let err = eligible_victims(&preemptor(1, 10, false), &[young, privileged, pinned, victim(4, 2, 0, false)], 60)
            .unwrap_err();
        assert_eq!(
            err,
            PreemptionFailure::AllCandidatesProtected {
                by_priority: 0,
                by_guarantee: 1,
                by_min_runtime: 1,
                privileged: 2
            }
        );
    }

    #[test]
    fn fewest_victims_after_pruning() {
        // Lowest priority first: 1 (1 GPU), 2 (1 GPU), 3 (4 GPUs). Greedy takes all three to get 4;
        // pruning gives 1 and 2 back because 3 alone suffices.
        let mut p = Counting {
            free: 0,
            need: 4,
            gpus: [(JobId(1), 1), (JobId(2), 1), (JobId(3), 4)].into_iter().collect(),
            removed: BTreeSet::new(),
        };
        let order: Vec<Eligible> = [1, 2, 3]
            .iter()
            .map(|&j| Eligible { job: JobId(j), ground: Ground::LowerPriority, priority: 0, borrowed: false })
            .collect();
        assert_eq!(choose_victims(&order, &mut p).unwrap(), vec![JobId(3)]);
        // Needing 5: greedy takes 1, 2, 3; pruning (latest first) gives 2 back, keeps 1 and 3.
        p.need = 5;
        assert_eq!(choose_victims(&order, &mut p).unwrap(), vec![JobId(1), JobId(3)]);
        assert!(p.removed.is_empty() && p.free == 0, "the probe is left as found");
        p.need = 7;
        assert_eq!(choose_victims(&order, &mut p), Err(PreemptionFailure::InsufficientEvenIfAllEvicted));
        assert!(p.removed.is_empty());
    }
}
