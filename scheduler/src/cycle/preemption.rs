//! Preemption for a job that does not fit: the victims (see `crate::preempt`: whole jobs, or
//! spare replicas of elastic ones) and what the preemptor will use once they are gone, found with a probe on the cycle's own cluster and
//! usage that is undone before it returns; the preemptor's nodes and quota are held meanwhile.

use std::collections::BTreeMap;

use super::gang::{
    force_allocate, lower_bound, may_fit, place_admitted, pool_attempts, release_all, resolve, single_replica_may_fit,
};
use super::{Cycle, Explain, Fail, Held, Hold, PlacedReplica, Reservation, ReservationKind};
use crate::cluster::{Cluster, PoolId};
use crate::demand::Demand;
use crate::explain::PreemptionFailure;
use crate::fairshare::dominant_share;
use crate::job::{Job, JobId, QueueId};
use crate::place::Placer;
use crate::preempt::{choose_victims, eligible_victims, Eligible, Ground, Piece, Preemptor, Probe, VictimInfo};
use crate::queue::{classify_borrowed, Queues, ResourceKey, ResourceVector, Usage};

use super::replica_targets;

impl<'a> Cycle<'a> {
    /// Holds what a waiting preemptor will use once its victims are gone: its nodes (no other
    /// job may use them) and its quota (counted in its queue's usage now, so that a smaller job
    /// of the same queue cannot take the room the evictions make and be evicted in turn).
    pub(super) fn hold_for_preemptor(&mut self, job: &Job, hold: Hold) {
        self.usage.add(job.queue, job.priority, &hold.usage);
        self.add_reservation(Reservation { job: job.id, nodes: hold.nodes, kind: ReservationKind::Preemption });
    }

    /// Runs `f` with a probe on the cycle's own cluster and usage (reserved nodes masked).
    /// Everything the probe changes is undone before this returns, so no copy is needed.
    pub(super) fn with_probe<R>(
        &mut self,
        job: &'a Job,
        candidates: impl Iterator<Item = JobId>,
        f: impl FnOnce(&mut CycleProbe<'_>) -> R,
    ) -> Option<R> {
        let demands = resolve(job, self.cluster.models(), self.cfg.sharing_busy_limit_pct).ok()?;
        let held = &self.held;
        let victims = candidates.map(|id| (id, &held[&id])).collect();
        let mut probe = CycleProbe {
            placer: &self.placer,
            queues: &self.input.queues,
            cluster: &mut self.cluster,
            usage: &mut self.usage,
            job,
            req: replica_targets(job),
            demands,
            victims,
            removed: Vec::new(),
            hold: Hold::default(),
            room_is_nodes: false,
            refit: false,
            last_failed_on_nodes: false,
        };
        let result = f(&mut probe);
        while let Some((piece, _)) = probe.removed.last() {
            probe.restore(*piece);
        }
        Some(result)
    }

    /// What an eviction in flight takes from `victim`: the replicas its shrink gives back, or
    /// the whole job.
    pub(super) fn pieces_of(&self, victim: JobId) -> Vec<Piece> {
        match self.cut.get(&victim) {
            Some(slots) => slots.iter().map(|s| Piece::Replica(victim, *s)).collect(),
            None => vec![Piece::Whole(victim)],
        }
    }

    /// The nodes the job would use if `victims` (whole, or the replicas their shrinks give
    /// back) were gone, if it fits then.
    pub(super) fn fits_without(&mut self, job: &'a Job, victims: &[JobId]) -> Option<Hold> {
        let pieces: Vec<Piece> = victims.iter().flat_map(|v| self.pieces_of(*v)).collect();
        self.with_probe(job, victims.iter().copied(), |probe| {
            for p in pieces {
                probe.remove(p);
            }
            probe.fits(false).then(|| probe.hold.clone())
        })
        .flatten()
    }

    /// Plans a preemption for a job that did not fit: what to take (spare replicas of elastic
    /// jobs first, then whole jobs) and the nodes it would use.
    pub(super) fn plan(&mut self, job: &'a Job, fail: &Fail) -> Result<(Vec<Piece>, Hold), PreemptionFailure> {
        let queues = &self.input.queues;
        let now = self.input.now;
        let Ok(demands) = resolve(job, self.cluster.models(), self.cfg.sharing_busy_limit_pct) else {
            return Err(PreemptionFailure::InsufficientEvenIfAllEvicted);
        };
        let quota_failure = matches!(fail, Fail::Quota(_));
        let project = queues.project_of(job.queue);
        let guarantee = queues.queue(job.queue).map(|q| q.guarantee.clone()).unwrap_or_default();
        let within_guarantee =
            self.usage.queue(job.queue).plus(&lower_bound(job, &replica_targets(job))).within_guarantee(&guarantee);
        if self.borrowed.is_none() {
            self.borrowed = Some(classify_borrowed(queues, &self.held_usage()));
        }
        let view = self.share_view_for(job);
        let fair = |q| view.tree.queues.get(&q).map_or(0.0, |s| s.fair);
        let share_of = |usage: &ResourceVector| dominant_share(usage, &view.capacity);
        let lb = lower_bound(job, &replica_targets(job));
        let below_fair_share = share_of(&self.usage.queue(job.queue).plus(&lb)) <= fair(job.queue) + 1e-9;
        let preemptor = Preemptor {
            job: job.id,
            queue: job.queue,
            project,
            priority: job.priority,
            within_guarantee,
            below_fair_share,
            may_preempt: job.may_preempt,
        };
        let mut above_fair: BTreeMap<QueueId, f64> = BTreeMap::new();
        let borrowed = self.borrowed.as_ref().expect("computed above");
        let pools = allowed_pools(&self.cluster, job);
        let relevant = |h: &Held<'_>| -> bool {
            if quota_failure {
                return queues.project_of(h.job.queue) == project;
            }
            holds_room_for(&self.cluster, h, &pools, &demands)
        };
        let candidates: Vec<VictimInfo> = self
            .held
            .iter()
            .filter(|(id, h)| !h.new && !self.evicting.contains_key(id) && **id != job.id && relevant(h))
            .map(|(id, h)| VictimInfo {
                job: *id,
                queue: h.job.queue,
                project: queues.project_of(h.job.queue),
                priority: h.job.priority,
                preemptible: h.job.preemptible,
                privileged: h.privileged,
                borrowed: borrowed.contains(id),
                // Read only on the fair-share ground, which needs a preemptor below its share.
                share: if below_fair_share { share_of(&h.usage) } else { 0.0 },
                queue_above_fair: if below_fair_share {
                    *above_fair
                        .entry(h.job.queue)
                        .or_insert_with(|| share_of(&self.usage.queue(h.job.queue)) - fair(h.job.queue))
                } else {
                    0.0
                },
                started_at: h.started_at,
                min_runtime_s: h.job.min_runtime_s,
                gpu_milli: h.usage.get(&ResourceKey::Gpus),
                spare: spare_slots(h),
            })
            .collect();
        let planned = self.choose_for(job, quota_failure, eligible_victims(&preemptor, &candidates, now)?);
        // "Within its guarantee" is judged before a GPU model is chosen; when no placement stays
        // inside the guarantee, a queue below its fair share may still reclaim on that ground.
        if planned.is_err() && preemptor.within_guarantee && preemptor.below_fair_share {
            let by_fair_share = Preemptor { within_guarantee: false, ..preemptor };
            if let Ok(eligible) = eligible_victims(&by_fair_share, &candidates, now) {
                return self.choose_for(job, quota_failure, eligible);
            }
        }
        planned
    }

    /// The pieces of `eligible` that make room for `job`, and what it would then use.
    fn choose_for(
        &mut self,
        job: &'a Job,
        quota_failure: bool,
        eligible: Vec<Eligible>,
    ) -> Result<(Vec<Piece>, Hold), PreemptionFailure> {
        let reclaim = |pieces: &[Piece]| {
            pieces.iter().any(|p| eligible.iter().any(|e| e.job == p.job() && e.ground == Ground::Reclaim))
        };
        self.with_probe(job, eligible.iter().map(|e| e.job), |probe| {
            // Short of capacity, not quota: victims away from its nodes do not help it.
            probe.room_is_nodes = !quota_failure;
            let pieces = choose_victims(&eligible, probe)?;
            for p in &pieces {
                probe.remove(*p);
            }
            if !probe.fits(reclaim(&pieces)) {
                return Err(PreemptionFailure::InsufficientEvenIfAllEvicted);
            }
            Ok((pieces, probe.hold.clone()))
        })
        .unwrap_or(Err(PreemptionFailure::InsufficientEvenIfAllEvicted))
    }
}

/// Whether `h` holds capacity a job of `demands` could use: GPUs of a model one of its GPU
/// demands allows, or, for a job without GPUs, CPU or memory.
/// The pools a job's room may be in (see [`holds_room_for`]): empty for any node.
pub(super) fn allowed_pools(cluster: &Cluster, job: &Job) -> Vec<PoolId> {
    pool_attempts(cluster, job).into_iter().flatten().collect()
}

pub(super) fn holds_room_for(cluster: &Cluster, h: &Held<'_>, pools: &[PoolId], demands: &[Demand]) -> bool {
    let gpu_demands: Vec<&Demand> = demands.iter().filter(|d| d.gpus > 0).collect();
    h.replicas.iter().any(|p| {
        let node = cluster.node(p.allocation.node);
        if !pools.is_empty() && !node.pool.is_some_and(|n| pools.contains(&n)) {
            return false;
        }
        if gpu_demands.is_empty() {
            p.allocation.cpu_milli > 0 || p.allocation.memory_mib > 0
        } else {
            p.allocation
                .devices
                .iter()
                .any(|d| gpu_demands.iter().any(|g| g.models.allows(node.gpus[d.gpu as usize].model)))
        }
    })
}

/// The replicas (indices into its held replicas) an elastic job may give back without going
/// below its minimum, the latest first; none for any other job.
pub(super) fn spare_slots(h: &Held<'_>) -> Vec<u32> {
    match h.job.elastic {
        Some(e) => (e.min..h.replicas.len() as u32).rev().collect(),
        None => Vec::new(),
    }
}

/// The preemption probe: victims' pieces are released on the cycle's cluster and usage, the
/// preemptor is placed and rolled back; `with_probe` gives back whatever is still removed at
/// the end.
pub(super) struct CycleProbe<'c> {
    placer: &'c Placer<'c>,
    queues: &'c Queues,
    cluster: &'c mut Cluster,
    usage: &'c mut Usage,
    job: &'c Job,
    demands: Vec<Demand>,
    req: Vec<(u32, u32)>,
    victims: BTreeMap<JobId, &'c Held<'c>>,
    /// Each piece removed, with the replicas (indices into the victim's) it took.
    removed: Vec<(Piece, Vec<usize>)>,
    /// What the last placement that fitted used.
    hold: Hold,
    /// The preemptor lacks capacity, not quota: a piece on none of the nodes it would use is
    /// not needed ([`Probe::untouched`]).
    pub(super) room_is_nodes: bool,
    /// Moves, not evictions (consolidation): the preemptor fits only if every job taken whole
    /// fits again at once beside it.
    pub(super) refit: bool,
    /// The last [`Probe::fits`] failed because no node held the job (not a quota, not a
    /// refit): only room freed on nodes can change that.
    last_failed_on_nodes: bool,
}

impl<'c> CycleProbe<'c> {
    /// What the last placement that fitted used.
    pub(super) fn hold(&self) -> &Hold {
        &self.hold
    }

    /// Whether the job may fit now that the last piece removed left, given that the probe's
    /// last [`Probe::fits`] found no node for it with every piece removed before this one
    /// ([`single_replica_may_fit`] on the piece's nodes; a larger gang, or a job the quota
    /// refused, always may). Spares the greedy search a whole placement per removal when the
    /// movable jobs number in the thousands.
    pub(super) fn may_fit_after_last_removal(&self) -> bool {
        if !self.last_failed_on_nodes {
            return true;
        }
        let Some((piece, slots)) = self.removed.last() else { return true };
        let h = self.victims[&piece.job()];
        let nodes = slots.iter().map(|&i| h.replicas[i].allocation.node);
        single_replica_may_fit(self.cluster, self.job, &self.demands, &self.req, nodes).unwrap_or(true)
    }

    /// Whether every job taken whole fits again (its gang, within quota) around the
    /// preemptor's `placed` gang of `usage`, in every order the next cycle may serve them
    /// ([`serving_orders`]); undoes it all before returning.
    fn all_refit(&mut self, usage: &ResourceVector) -> bool {
        self.usage.add(self.job.queue, self.job.priority, usage);
        let mut moved: Vec<&Held<'_>> = self
            .removed
            .iter()
            .filter(|(p, _)| matches!(p, Piece::Whole(_)))
            .map(|(p, _)| self.victims[&p.job()])
            .collect();
        moved.sort_by_key(|h| h.job.queue_order());
        let queues: Vec<QueueId> = moved.iter().map(|h| h.job.queue).collect();
        let all = serving_orders(&queues).iter().all(|order| self.refit_in(order.iter().map(|&i| moved[i])));
        self.usage.sub(self.job.queue, self.job.priority, usage);
        all
    }

    /// Places the jobs one after the other; whether all fit. Undoes it all before returning.
    fn refit_in<'h>(&mut self, order: impl Iterator<Item = &'h Held<'h>>) -> bool
    where
        'c: 'h,
    {
        let mut again: Vec<(&Held<'_>, Vec<PlacedReplica>, ResourceVector)> = Vec::new();
        let mut all = true;
        for h in order {
            // A job moved elsewhere brings its load along: the measured busy % of its old device
            // says nothing of the new one, so the sharing limit does not judge a move.
            let Ok(demands) = resolve(h.job, self.cluster.models(), None) else {
                all = false;
                break;
            };
            let req = replica_targets(h.job);
            let placed = place_admitted(
                self.placer,
                self.cluster,
                self.usage,
                self.queues,
                h.job,
                &demands,
                &req,
                false,
                Explain::No,
            );
            match placed {
                Ok((placed, delta, _)) => {
                    self.usage.add(h.job.queue, h.job.priority, &delta);
                    again.push((h, placed, delta));
                }
                Err(_) => {
                    all = false;
                    break;
                }
            }
        }
        for (h, placed, delta) in again.into_iter().rev() {
            release_all(self.cluster, &placed);
            self.usage.sub(h.job.queue, h.job.priority, &delta);
        }
        all
    }
}

/// How many orders [`serving_orders`] lists at most.
const MAX_REFIT_ORDERS: usize = 32;

/// The orders (indices into `queues`, which is sorted by priority then age) in which a cycle
/// may serve jobs of these queues: each queue's jobs in their order, the queues' turns
/// interleaved in every way (which queue comes first depends on fair share at that moment).
/// Past [`MAX_REFIT_ORDERS`], the priority-then-age order alone.
fn serving_orders(queues: &[QueueId]) -> Vec<Vec<usize>> {
    let mut per_queue: BTreeMap<QueueId, Vec<usize>> = BTreeMap::new();
    for (i, q) in queues.iter().enumerate() {
        per_queue.entry(*q).or_default().push(i);
    }
    let lanes: Vec<Vec<usize>> = per_queue.into_values().collect();
    let mut out = Vec::new();
    let mut next = vec![0usize; lanes.len()];
    let mut order = Vec::with_capacity(queues.len());
    fn walk(lanes: &[Vec<usize>], next: &mut [usize], order: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) -> bool {
        if out.len() > MAX_REFIT_ORDERS {
            return false;
        }
        if order.len() == lanes.iter().map(Vec::len).sum::<usize>() {
            out.push(order.clone());
            return true;
        }
        for l in 0..lanes.len() {
            if next[l] < lanes[l].len() {
                order.push(lanes[l][next[l]]);
                next[l] += 1;
                let more = walk(lanes, next, order, out);
                next[l] -= 1;
                order.pop();
                if !more {
                    return false;
                }
            }
        }
        true
    }
    if walk(&lanes, &mut next, &mut order, &mut out) {
        out
    } else {
        vec![(0..queues.len()).collect()]
    }
}

impl Probe for CycleProbe<'_> {
    fn untouched(&self, removed: &[Piece]) -> Vec<Piece> {
        if !self.room_is_nodes {
            return Vec::new();
        }
        let asked: std::collections::BTreeSet<Piece> = removed.iter().copied().collect();
        self.removed
            .iter()
            .filter(|(piece, slots)| {
                asked.contains(piece) && {
                    let h = self.victims[&piece.job()];
                    slots.iter().all(|&i| !self.hold.nodes.contains(&h.replicas[i].allocation.node))
                }
            })
            .map(|(piece, _)| *piece)
            .collect()
    }

    fn remove(&mut self, piece: Piece) {
        let h = self.victims[&piece.job()];
        let slots: Vec<usize> = match piece {
            // Only an elastic job has replicas removed apart: any other is taken all at once,
            // without a scan of what the probe removed so far (thousands in a greedy pass).
            Piece::Whole(_) if h.job.elastic.is_none() => (0..h.replicas.len()).collect(),
            Piece::Whole(job) => {
                let taken: Vec<usize> =
                    self.removed.iter().filter(|(p, _)| p.job() == job).flat_map(|(_, s)| s.iter().copied()).collect();
                (0..h.replicas.len()).filter(|i| !taken.contains(i)).collect()
            }
            Piece::Replica(_, slot) => vec![slot as usize],
        };
        let usage = if slots.len() == h.replicas.len() {
            h.usage.clone()
        } else {
            ResourceVector::of_allocations(self.cluster, slots.iter().map(|&i| &h.replicas[i].allocation))
        };
        for &i in &slots {
            self.cluster.release(&h.replicas[i].allocation).expect("a victim's allocation is on the cluster");
        }
        self.usage.sub(h.job.queue, h.job.priority, &usage);
        self.removed.push((piece, slots));
    }

    fn restore(&mut self, piece: Piece) {
        let h = self.victims[&piece.job()];
        let at = self.removed.iter().rposition(|(p, _)| *p == piece).expect("restored after removal");
        let (_, slots) = self.removed.remove(at);
        for &i in &slots {
            force_allocate(self.cluster, &h.replicas[i].allocation);
        }
        let usage = ResourceVector::of_allocations(self.cluster, slots.iter().map(|&i| &h.replicas[i].allocation));
        self.usage.add(h.job.queue, h.job.priority, &usage);
    }

    fn fits(&mut self, within_guarantee: bool) -> bool {
        // The cheap bound counts free GPUs on nodes: failing it is a lack of room too.
        self.last_failed_on_nodes = !may_fit(self.cluster, &self.demands, &self.req);
        if self.last_failed_on_nodes {
            return false;
        }
        match place_admitted(
            self.placer,
            self.cluster,
            self.usage,
            self.queues,
            self.job,
            &self.demands,
            &self.req,
            within_guarantee,
            Explain::No,
        ) {
            Ok((placed, usage, _)) => {
                let fits = !self.refit || self.all_refit(&usage);
                if fits {
                    self.hold = Hold { nodes: placed.iter().map(|p| p.allocation.node).collect(), usage };
                }
                release_all(self.cluster, &placed);
                fits
            }
            Err(fail) => {
                self.last_failed_on_nodes = matches!(fail, Fail::Capacity(_));
                false
            }
        }
    }
}
