//! Preemption planning: which running jobs a pending job may evict, in which order, and the
//! smallest set of them that makes room.
//!
//! A victim is a whole job, never a lone replica of a gang, with one exception: an elastic job
//! gives back replicas above its minimum (a shrink, [`Piece::Replica`]) before any job is
//! evicted whole, the cheapest preemption there is. A job may evict
//! - in its own queue, jobs of strictly lower priority;
//! - in its own project, borrowed jobs of strictly lower priority;
//! - anywhere, borrowed jobs of no higher priority, when the preemptor stays within its own
//!   queue's guarantee (reclaim). Guaranteed usage is never taken for a borrower (invariant 5).
//! - anywhere, borrowed jobs of no higher priority of a queue above its fair share, when the
//!   preemptor's queue stays at or below its own (reclaim to fair share, as KAI's): only as
//!   much as leaves the victim's queue at or above its fair share, so that the capacity does
//!   not swing back and forth between the two queues.
//!
//! A job whose tenant may not preempt evicts nothing. Privileged (themselves preempting) and
//! non-preemptible jobs are never victims, nor are jobs
//! younger than their minimum runtime. Candidates are tried lowest priority first, borrowed
//! first, then fewest GPU-seconds disturbed; the greedy set is then pruned so that no victim
//! remains that is not needed. Whether a set makes room is asked of a [`Probe`], which the cycle
//! implements by releasing the victims on a scratch cluster and placing the preemptor there.

use std::collections::{BTreeMap, BTreeSet};

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
    /// Its queue's dominant share with this job would stay at or below its fair share.
    pub below_fair_share: bool,
    /// Allowed to preempt at all (its tenant's right): when not, it has no victims.
    pub may_preempt: bool,
}

/// What the planner knows of one running job.
#[derive(Clone, Debug, PartialEq)]
pub struct VictimInfo {
    pub job: JobId,
    pub queue: QueueId,
    pub project: Option<ProjectId>,
    pub priority: i32,
    pub preemptible: bool,
    pub privileged: bool,
    /// Above its queue's guarantee (see `queue::classify_borrowed`).
    pub borrowed: bool,
    /// Its own dominant share, and how far its queue's share is above the queue's fair share
    /// (zero or less: not above): reclaim to fair share takes at most that much of a queue.
    pub share: f64,
    pub queue_above_fair: f64,
    pub started_at: u64,
    pub min_runtime_s: u64,
    /// GPU milli the job holds (for GPU-seconds disturbed).
    pub gpu_milli: u64,
    /// Replicas an elastic job may give back without going below its minimum, in the order it
    /// should give them (the caller's numbering); empty for any other job.
    pub spare: Vec<u32>,
}

/// What a preemption takes from one victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Piece {
    /// The whole job (whatever of it the other pieces left).
    Whole(JobId),
    /// One spare replica of an elastic job (the victim's `spare` numbering).
    Replica(JobId, u32),
}

impl Piece {
    pub fn job(&self) -> JobId {
        match self {
            Piece::Whole(j) | Piece::Replica(j, _) => *j,
        }
    }
}

/// On what grounds a victim may be evicted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ground {
    /// Lower priority in the same queue, or borrowed and lower priority in the same project.
    LowerPriority,
    /// Borrowed usage of another queue, reclaimed by a preemptor inside its guarantee: valid
    /// only if the preemptor's placement stays inside the guarantee.
    Reclaim,
    /// Borrowed usage of a queue above its fair share, taken back for a queue below its own.
    FairShare,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Eligible {
    pub job: JobId,
    pub ground: Ground,
    pub priority: i32,
    pub borrowed: bool,
    /// Its spare replicas (see [`VictimInfo::spare`]).
    pub spare: Vec<u32>,
}

impl Eligible {
    /// How much evicting this victim matters: lower priority, then borrowed, matters less.
    fn weight(&self) -> (i32, bool) {
        (self.priority, !self.borrowed)
    }
}

/// A piece taken, and on what ground.
type Taken = (Piece, Ground);

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
        } else if v.borrowed && p.below_fair_share && v.priority <= p.priority && v.queue_above_fair > 0.0 {
            Some(Ground::FairShare)
        } else {
            None
        };
        let Some(ground) = ground else {
            if v.queue != p.queue && (!v.borrowed || !(p.within_guarantee || p.below_fair_share)) {
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
    eligible.sort_by_key(|(v, _)| {
        let gpu_seconds = v.gpu_milli.saturating_mul(now.saturating_sub(v.started_at));
        (v.priority, !v.borrowed, gpu_seconds, std::cmp::Reverse(v.started_at), v.job)
    });
    // Reclaim to fair share takes, queue by queue and in this order, only what keeps the
    // queue at or above its fair share: any subset of what is left obeys that too. Dominant
    // shares do not add up exactly; their sum bounds the share of the sum, so this errs safe.
    let mut taken: BTreeMap<QueueId, f64> = BTreeMap::new();
    eligible.retain(|(v, ground)| {
        if *ground != Ground::FairShare {
            return true;
        }
        let spent = taken.entry(v.queue).or_default();
        if *spent + v.share <= v.queue_above_fair + 1e-12 {
            *spent += v.share;
            true
        } else {
            by_guarantee += 1;
            false
        }
    });
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
    Ok(eligible
        .into_iter()
        .map(|(v, ground)| Eligible {
            job: v.job,
            ground,
            priority: v.priority,
            borrowed: v.borrowed,
            spare: v.spare.clone(),
        })
        .collect())
}

/// The cycle's view of "would the preemptor fit if these jobs were gone".
pub trait Probe {
    /// Takes a piece's allocations and usage away ([`Piece::Whole`]: whatever of the job the
    /// pieces removed before left).
    fn remove(&mut self, piece: Piece);
    /// Gives back what `remove(piece)` took.
    fn restore(&mut self, piece: Piece);
    /// Whether the preemptor fits now (placement and quota); `within_guarantee` additionally
    /// requires its queue to stay inside its guarantee. Leaves the state as it found it.
    fn fits(&mut self, within_guarantee: bool) -> bool;
    /// Of the `removed` pieces, those whose room the last placement that fitted does not use
    /// at all: given back together before pruning piece by piece (a greedy set of thousands
    /// of small victims is mostly elsewhere). None by default; the cut is verified.
    fn untouched(&self, _removed: &[Piece]) -> Vec<Piece> {
        Vec::new()
    }
}

/// What to take, from `eligible` in order: first the spare replicas of elastic victims (one
/// victim's at a time), then whole jobs, greedily until the preemptor fits; then pruned of every
/// piece that is not needed, and where only whole jobs are taken, replaced by a single job if
/// one suffices. A job taken whole has none of its replicas listed apart. The probe is left as
/// it was found.
pub fn choose_victims(eligible: &[Eligible], probe: &mut impl Probe) -> Result<Vec<Piece>, PreemptionFailure> {
    let needs_guarantee = |set: &[(Piece, Ground)]| set.iter().any(|(_, g)| *g == Ground::Reclaim);
    let shrinks = eligible
        .iter()
        .filter(|e| !e.spare.is_empty())
        .map(|e| e.spare.iter().map(|s| (Piece::Replica(e.job, *s), e.ground)).collect::<Vec<_>>());
    let wholes = eligible.iter().map(|e| vec![(Piece::Whole(e.job), e.ground)]);
    let mut chosen: Vec<(Piece, Ground)> = Vec::new();
    let mut fitted = false;
    let mut reclaims = 0usize;
    for step in shrinks.chain(wholes) {
        for (piece, ground) in step {
            probe.remove(piece);
            chosen.push((piece, ground));
            reclaims += usize::from(ground == Ground::Reclaim);
        }
        if probe.fits(reclaims > 0) {
            fitted = true;
            break;
        }
    }
    if !fitted {
        for (piece, _) in chosen.iter().rev() {
            probe.restore(*piece);
        }
        return Err(PreemptionFailure::InsufficientEvenIfAllEvicted);
    }
    // First cut: give back at once what the placement does not use, if it still fits then.
    let untouched: BTreeSet<Piece> =
        probe.untouched(&chosen.iter().map(|(p, _)| *p).collect::<Vec<_>>()).into_iter().collect();
    if !untouched.is_empty() {
        let (cut, rest): (Vec<Taken>, Vec<Taken>) = chosen.iter().copied().partition(|(p, _)| untouched.contains(p));
        for (piece, _) in cut.iter().rev() {
            probe.restore(*piece);
        }
        if !rest.is_empty() && probe.fits(needs_guarantee(&rest)) {
            chosen = rest;
        } else {
            for (piece, _) in &cut {
                probe.remove(*piece);
            }
        }
    }
    // Prune: give each earlier piece back; keep it if the preemptor still fits.
    let mut i = chosen.len() - 1;
    while i > 0 {
        i -= 1;
        let (piece, _) = chosen[i];
        probe.restore(piece);
        let rest: Vec<(Piece, Ground)> = chosen.iter().copied().filter(|(p, _)| *p != piece).collect();
        if probe.fits(needs_guarantee(&rest)) {
            chosen = rest;
        } else {
            probe.remove(piece);
        }
    }
    for (piece, _) in chosen.iter().rev() {
        probe.restore(*piece);
    }
    let whole_only = chosen.iter().all(|(p, _)| matches!(p, Piece::Whole(_)));
    // Fewest jobs: one victim that matters no more than the worst of the set may replace it
    // (a single big job instead of many small ones of the same priority).
    if whole_only && chosen.len() > 1 {
        let jobs: BTreeSet<JobId> = chosen.iter().map(|(p, _)| p.job()).collect();
        let worst = eligible.iter().filter(|e| jobs.contains(&e.job)).map(Eligible::weight).max().expect("not empty");
        for e in eligible.iter().take(SINGLE_VICTIM_TRIES).filter(|e| e.weight() <= worst) {
            let piece = Piece::Whole(e.job);
            probe.remove(piece);
            let fits = probe.fits(e.ground == Ground::Reclaim);
            probe.restore(piece);
            if fits {
                return Ok(vec![piece]);
            }
        }
    }
    let whole: Vec<JobId> = chosen
        .iter()
        .filter_map(|(p, _)| match p {
            Piece::Whole(j) => Some(*j),
            Piece::Replica(..) => None,
        })
        .collect();
    Ok(chosen
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| matches!(p, Piece::Whole(_)) || !whole.contains(&p.job()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn victim(job: u64, queue: u32, priority: i32, borrowed: bool) -> VictimInfo {
        VictimInfo {
            job: JobId(job),
            queue: QueueId(queue),
            project: Some(ProjectId(queue)),
            priority,
            preemptible: true,
            privileged: false,
            borrowed,
            share: 0.1,
            queue_above_fair: 0.0,
            started_at: 0,
            min_runtime_s: 0,
            gpu_milli: 1000,
            spare: Vec::new(),
        }
    }

    fn preemptor(queue: u32, priority: i32, within_guarantee: bool) -> Preemptor {
        Preemptor {
            job: JobId(100),
            queue: QueueId(queue),
            project: Some(ProjectId(queue)),
            priority,
            within_guarantee,
            below_fair_share: false,
            may_preempt: true,
        }
    }

    #[test]
    fn reclaim_to_fair_share_takes_only_what_leaves_the_victims_queue_at_its_fair_share() {
        // The preemptor's queue is above its guarantee but below its fair share; queue 1 is 0.25
        // above its fair share, its borrowed jobs 0.1 each: two may go, not three. Queue 2 is
        // not above its fair share: nothing of it.
        let p = Preemptor { below_fair_share: true, ..preemptor(0, 0, false) };
        let above = |job| VictimInfo { queue_above_fair: 0.25, started_at: job, ..victim(job, 1, 0, true) };
        let candidates = [above(1), above(2), above(3), victim(4, 2, 0, true)];
        let e = eligible_victims(&p, &candidates, 100).unwrap();
        assert_eq!(
            e.iter().map(|e| (e.job.0, e.ground)).collect::<Vec<_>>(),
            [(3, Ground::FairShare), (2, Ground::FairShare)]
        );
        // A preemptor at or above its fair share (and outside its guarantee) takes nothing.
        assert!(matches!(
            eligible_victims(&preemptor(0, 0, false), &candidates, 100),
            Err(PreemptionFailure::NotEntitled | PreemptionFailure::AllCandidatesProtected { .. })
        ));
        // Nor does it take a higher-priority job or guaranteed usage.
        let guarded = [VictimInfo { priority: 5, ..above(1) }, VictimInfo { borrowed: false, ..above(2) }];
        assert!(eligible_victims(&p, &guarded, 100).is_err());
    }

    #[test]
    fn a_preemptor_without_the_right_has_no_victims() {
        let p = Preemptor { may_preempt: false, ..preemptor(0, 100, true) };
        let candidates = [victim(1, 0, 0, true)];
        assert_eq!(eligible_victims(&p, &candidates, 0), Err(PreemptionFailure::NotAllowed));
        assert!(eligible_victims(&preemptor(0, 100, true), &candidates, 0).is_ok(), "with it, the same victim");
    }

    /// A probe over GPU counts: a whole job frees what of its GPUs is still held, a spare
    /// replica one GPU; the preemptor needs `need` free.
    struct Counting {
        free: u64,
        need: u64,
        gpus: BTreeMap<JobId, u64>,
        removed: BTreeMap<Piece, u64>,
    }

    impl Counting {
        fn new(need: u64, gpus: &[(u64, u64)]) -> Counting {
            Counting {
                free: 0,
                need,
                gpus: gpus.iter().map(|&(j, g)| (JobId(j), g)).collect(),
                removed: BTreeMap::new(),
            }
        }
    }

    impl Probe for Counting {
        fn remove(&mut self, piece: Piece) {
            let taken: u64 = self.removed.iter().filter(|(p, _)| p.job() == piece.job()).map(|(_, g)| g).sum();
            let freed = match piece {
                Piece::Whole(j) => self.gpus[&j] - taken,
                Piece::Replica(..) => 1,
            };
            assert!(self.removed.insert(piece, freed).is_none(), "{piece:?} removed twice");
            self.free += freed;
        }
        fn restore(&mut self, piece: Piece) {
            self.free -= self.removed.remove(&piece).expect("restored after removal");
        }
        fn fits(&mut self, _: bool) -> bool {
            self.free >= self.need
        }
    }

    fn in_order(jobs: &[u64]) -> Vec<Eligible> {
        jobs.iter()
            .map(|&j| Eligible {
                job: JobId(j),
                ground: Ground::LowerPriority,
                priority: 0,
                borrowed: false,
                spare: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn elastic_victims_give_back_spare_replicas_before_any_job_is_evicted_whole() {
        // Job 1 (4 GPUs) is first in line; job 2 runs 6 replicas of 1 GPU with a minimum of 3.
        let mut order = in_order(&[1, 2]);
        order[1].spare = vec![5, 4, 3];
        let mut p = Counting::new(2, &[(1, 4), (2, 6)]);
        // Pruning gives back what is not needed, except the piece that made it fit.
        assert_eq!(
            choose_victims(&order, &mut p).unwrap(),
            vec![Piece::Replica(JobId(2), 5), Piece::Replica(JobId(2), 3)]
        );
        assert!(p.removed.is_empty() && p.free == 0, "the probe is left as found");
        // More than its spare replicas give: they are kept back and a whole job goes instead.
        p.need = 4;
        assert_eq!(choose_victims(&order, &mut p).unwrap(), vec![Piece::Whole(JobId(1))]);
        // Spare replicas and a whole job together; a job taken whole lists no replica apart.
        p.need = 7;
        let got = choose_victims(&order, &mut p).unwrap();
        assert_eq!(
            got,
            vec![
                Piece::Replica(JobId(2), 5),
                Piece::Replica(JobId(2), 4),
                Piece::Replica(JobId(2), 3),
                Piece::Whole(JobId(1))
            ]
        );
        p.need = 10;
        assert_eq!(choose_victims(&order, &mut p).unwrap(), vec![Piece::Whole(JobId(1)), Piece::Whole(JobId(2))]);
        assert!(p.removed.is_empty() && p.free == 0);
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
        let mut p = Counting::new(4, &[(1, 1), (2, 1), (3, 4)]);
        let order = in_order(&[1, 2, 3]);
        let whole = |jobs: &[u64]| jobs.iter().map(|&j| Piece::Whole(JobId(j))).collect::<Vec<_>>();
        assert_eq!(choose_victims(&order, &mut p).unwrap(), whole(&[3]));
        // Needing 5: greedy takes 1, 2, 3; pruning (latest first) gives 2 back, keeps 1 and 3.
        p.need = 5;
        assert_eq!(choose_victims(&order, &mut p).unwrap(), whole(&[1, 3]));
        assert!(p.removed.is_empty() && p.free == 0, "the probe is left as found");
        p.need = 7;
        assert_eq!(choose_victims(&order, &mut p), Err(PreemptionFailure::InsufficientEvenIfAllEvicted));
        assert!(p.removed.is_empty());
    }
}
