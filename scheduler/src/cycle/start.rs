//! One pending job's turn: placed, or a preemption planned for it, or a reservation made, and
//! in every case why it waits recorded.

use super::gang::{expect_share_load, lower_bound, place_admitted, release_all, resolve, set_health};
use super::replica_targets;
use super::{Cycle, Decision, Explain, Fail, Held, PlacedReplica};
use crate::cluster::NodeId;
use crate::demand::Demand;
use crate::explain::{FilterReason, Unplaced};
use crate::job::{Job, JobId, Spread};
use crate::preempt::Piece;
use crate::queue::{Admission, QuotaViolation, ResourceVector};

/// How a plan's whole victims are stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Disruption {
    /// Evicted (preemption): requeued, they wait their turn.
    Evict,
    /// Moved (consolidation): requeued, they fit again at once.
    Move,
}

impl<'a> Cycle<'a> {
    /// Counts masked nodes as reserved, not unhealthy, in an explanation.
    pub(super) fn relabel(&self, u: Unplaced) -> Unplaced {
        match u {
            Unplaced::NoFit { task, placed, needed, mut nodes } => {
                let unhealthy = nodes.counts.get(&FilterReason::NodeUnhealthy).copied().unwrap_or(0);
                let reserved = unhealthy.min(self.masked.len() as u32);
                if reserved > 0 {
                    if unhealthy == reserved {
                        nodes.counts.remove(&FilterReason::NodeUnhealthy);
                    } else {
                        nodes.counts.insert(FilterReason::NodeUnhealthy, unhealthy - reserved);
                    }
                    nodes.counts.insert(FilterReason::Reserved, reserved);
                }
                Unplaced::NoFit { task, placed, needed, nodes }
            }
            Unplaced::InPools { pools } => {
                Unplaced::InPools { pools: pools.into_iter().map(|(p, u)| (p, Box::new(self.relabel(*u)))).collect() }
            }
            other => other,
        }
    }

    /// One pending job: place it, or plan a preemption, or reserve, and record why it waits.
    /// `old_victims` are evictions already in flight for it.
    pub(super) fn consider(&mut self, job: &'a Job, old_victims: Vec<JobId>) {
        if let Err(e) = job.validate() {
            self.cancel(job.id, &old_victims);
            self.unplaced.insert(job.id, Unplaced::Invalid { reason: e.to_string() });
            return;
        }
        let shape = format!(
            "{:?}",
            (
                job.queue,
                job.priority,
                job.preemptible,
                job.max_runtime_s,
                &job.tasks,
                job.gang_size(),
                job.elastic,
                &job.node_selector,
                &job.tolerations,
                &job.pools
            )
        );
        if old_victims.is_empty() {
            if let Some(u) = self.failed_shapes.get(&shape) {
                self.unplaced.insert(job.id, u.clone());
                return;
            }
        }
        let fail = match self.try_place(job) {
            Ok(()) => {
                self.cancel(job.id, &old_victims);
                return;
            }
            Err(f) => f,
        };
        if let Fail::Reserved(behind) = fail {
            self.cancel(job.id, &old_victims);
            let unplaced = Unplaced::Reserved { behind: behind.0 };
            if old_victims.is_empty() {
                self.failed_shapes.insert(shape, unplaced.clone());
            }
            self.unplaced.insert(job.id, unplaced);
            return;
        }
        // Still waiting for victims, and they are still enough: keep waiting.
        if !old_victims.is_empty() {
            if let Some(hold) = self.fits_without(job, &old_victims) {
                self.hold_for_preemptor(job, hold);
                let unplaced = self.awaiting(&old_victims);
                self.unplaced.insert(job.id, unplaced);
                return;
            }
            for v in &old_victims {
                self.evicting.remove(v);
            }
            // The replicas a shrink in flight gives back stay on record: a new plan that shrinks
            // the same job the same way is not decided again.
        }
        let preemptable = match &fail {
            // Room by the books on a device too busy to share: others are not disturbed for it.
            Fail::Capacity(u) if u.waits_for_calm() => false,
            Fail::Capacity(u) if u.is_no_fit() => true,
            Fail::Quota(QuotaViolation::UnknownQueue(_)) => false,
            Fail::Quota(_) => true,
            _ => false,
        };
        let plan = if self.cfg.preemption && preemptable { Some(self.plan(job, &fail)) } else { None };
        // Room that is only scattered: moving jobs that fit again elsewhere disturbs less than
        // evicting any, though more than shrinks alone (their jobs keep running).
        let only_shrinks =
            matches!(&plan, Some(Ok((pieces, _))) if pieces.iter().all(|p| matches!(p, Piece::Replica(..))));
        if matches!(&fail, Fail::Capacity(u) if u.is_no_fit() && !u.waits_for_calm())
            && !only_shrinks
            && !self.no_moves.contains(&shape)
        {
            match self.plan_moves(job) {
                Some((pieces, hold)) => {
                    let victims = self.begin_preemption(job.id, &old_victims, &pieces, Disruption::Move);
                    self.hold_for_preemptor(job, hold);
                    let unplaced = self.awaiting(&victims);
                    self.unplaced.insert(job.id, unplaced);
                    return;
                }
                // Capacity only shrinks during a cycle: the same shape finds no moves either.
                None => {
                    self.no_moves.insert(shape.clone());
                }
            }
        }
        match plan {
            Some(Ok((pieces, hold))) => {
                let victims = self.begin_preemption(job.id, &old_victims, &pieces, Disruption::Evict);
                self.hold_for_preemptor(job, hold);
                let unplaced = self.awaiting(&victims);
                self.unplaced.insert(job.id, unplaced);
            }
            plan => {
                self.cancel(job.id, &old_victims);
                let unplaced = match (fail, plan) {
                    (Fail::Capacity(fit), Some(Err(why))) => Unplaced::NoPreemptionPlan { fit: Box::new(fit), why },
                    (Fail::Capacity(fit), _) => fit,
                    (Fail::Quota(v), _) => {
                        let (queue, resource) = v.describe();
                        Unplaced::QueueLimit { queue, resource }
                    }
                    (Fail::Reserved(b), _) => Unplaced::Reserved { behind: b.0 },
                };
                if unplaced.is_no_fit() || matches!(unplaced, Unplaced::NoPreemptionPlan { .. }) {
                    self.reserve(job);
                }
                // Capacity and quota only shrink during a cycle: the same shape fails the same way.
                if old_victims.is_empty() {
                    self.failed_shapes.insert(shape, unplaced.clone());
                }
                self.unplaced.insert(job.id, unplaced);
            }
        }
    }

    /// Why a preemptor waits for `victims`: moves when every one of them is moved.
    fn awaiting(&self, victims: &[JobId]) -> Unplaced {
        let ids = victims.iter().map(|v| v.0).collect();
        if !victims.is_empty() && victims.iter().all(|v| self.moving.contains(v)) {
            Unplaced::AwaitingMoves { moved: ids }
        } else {
            Unplaced::AwaitingEviction { victims: ids }
        }
    }

    /// Turns a plan into decisions: each victim taken whole is evicted (or moved), each elastic
    /// job that only gives back spare replicas is shrunk; what was in flight for `preemptor` and
    /// is no longer needed is called off, and what is in flight and unchanged is not decided
    /// again. Returns the victims.
    fn begin_preemption(
        &mut self,
        preemptor: JobId,
        old_victims: &[JobId],
        pieces: &[Piece],
        how: Disruption,
    ) -> Vec<JobId> {
        let mut victims: Vec<JobId> = Vec::new();
        for p in pieces {
            if !victims.contains(&p.job()) {
                victims.push(p.job());
            }
        }
        for v in old_victims.iter().filter(|v| !victims.contains(v) && !self.left.contains(v)) {
            self.cut.remove(v);
            self.moving.remove(v);
            self.decisions.push(Decision::CancelEviction { job: *v, preemptor });
        }
        let grace_s = self.cfg.eviction_grace_s;
        for &v in &victims {
            self.evicting.insert(v, preemptor);
            let whole = pieces.contains(&Piece::Whole(v));
            let was = old_victims.contains(&v).then(|| self.cut.get(&v).cloned());
            if whole {
                // New, or a shrink in flight that no longer suffices.
                if was.is_none() || was.is_some_and(|cut| cut.is_some()) {
                    self.cut.remove(&v);
                    self.decisions.push(match how {
                        Disruption::Evict => Decision::Evict { job: v, preemptor, grace_s },
                        Disruption::Move => {
                            self.moving.insert(v);
                            self.moves_now += 1;
                            Decision::Move { job: v, preemptor, grace_s }
                        }
                    });
                }
                continue;
            }
            let slots: Vec<u32> = pieces
                .iter()
                .filter_map(|p| match p {
                    Piece::Replica(j, s) if *j == v => Some(*s),
                    _ => None,
                })
                .collect();
            if was.is_some_and(|cut| cut.as_ref() == Some(&slots)) {
                continue;
            }
            let held = &self.held[&v].replicas;
            let replicas = slots.iter().map(|&s| held[s as usize].clone()).collect();
            self.cut.insert(v, slots);
            self.decisions.push(Decision::Shrink { job: v, replicas, preemptor, grace_s });
        }
        victims
    }

    pub(super) fn cancel(&mut self, preemptor: JobId, victims: &[JobId]) {
        for v in victims {
            self.evicting.remove(v);
            self.cut.remove(v);
            self.moving.remove(v);
            if !self.left.contains(v) {
                self.decisions.push(Decision::CancelEviction { job: *v, preemptor });
            }
        }
    }

    /// Places a job on the cycle's cluster (outside reservations it may not use) and records
    /// the start. On failure nothing changes.
    pub(super) fn try_place(&mut self, job: &'a Job) -> Result<(), Fail> {
        let demands = resolve(job, self.cluster.models(), self.cfg.sharing_busy_limit_pct).map_err(Fail::Capacity)?;
        let req = replica_targets(job);
        let queues = &self.input.queues;
        // Cheap check first: the model-independent part of the quota.
        self.usage
            .admit(queues, job.queue, job.priority, &lower_bound(job, &req), job.preemptible)
            .map_err(Fail::Quota)?;
        let lifted = self.backfill_nodes(job.id, job.expected_runtime_s().map(|m| self.input.now.saturating_add(m)));
        let result = self.place_gang_on(&lifted, job, &demands, &req, Explain::Yes);
        // Only the gang now: extra replicas (elastic or beyond `min_members`) are best effort and
        // come in the growth step, after every pending job had its turn, folded into the Start.
        let result = result.map(|(placed, delta, _)| {
            self.usage.add(job.queue, job.priority, &delta);
            placed
        });
        match result {
            Ok(placed) => {
                expect_share_load(&mut self.cluster, &placed);
                let usage = ResourceVector::of_allocations(&self.cluster, placed.iter().map(|p| &p.allocation));
                // As `classify_borrowed` will see it: the queue's work of at least this priority,
                // this job included, goes past the guarantee.
                let borrowed = queues
                    .queue(job.queue)
                    .is_some_and(|q| !self.usage.at_or_above(job.queue, job.priority).within_guarantee(&q.guarantee));
                self.decisions.push(Decision::Start { job: job.id, replicas: placed.clone(), borrowed });
                self.borrowed = None;
                self.held.insert(
                    job.id,
                    Held { job, replicas: placed, started_at: self.input.now, privileged: false, usage, new: true },
                );
                Ok(())
            }
            Err(Fail::Capacity(u)) => {
                // Would it fit without the backfill reservations? Then it waits behind one.
                let reserved = self.backfill_nodes(job.id, None);
                if !reserved.is_empty() {
                    let trial = self.place_gang_on(&reserved, job, &demands, &req, Explain::No);
                    let behind = trial.ok().map(|(placed, _, _)| {
                        release_all(&mut self.cluster, &placed);
                        self.reservations
                            .iter()
                            .filter(|r| r.job != job.id)
                            .find(|r| placed.iter().any(|p| r.nodes.contains(&p.allocation.node)))
                            .map_or(job.id, |r| r.job)
                    });
                    if let Some(behind) = behind {
                        return Err(Fail::Reserved(behind));
                    }
                }
                Err(Fail::Capacity(self.relabel(u)))
            }
            Err(e) => Err(e),
        }
    }

    /// The gang placed and admitted (see `gang::place_admitted`) with the masks of `lifted`
    /// reserved nodes lifted for this attempt only.
    fn place_gang_on(
        &mut self,
        lifted: &[NodeId],
        job: &Job,
        demands: &[Demand],
        req: &[(u32, u32)],
        explain: Explain,
    ) -> Result<(Vec<PlacedReplica>, ResourceVector, Admission), Fail> {
        // Members of its spread group placed earlier in this cycle count as siblings too.
        let widened;
        let job = match job.spread.as_ref().and_then(|s| Some((s, self.spread_placed.get(&s.group)?))) {
            Some((spread, now)) => {
                let mut j = job.clone();
                j.spread = Some(Spread { group: spread.group.clone(), from: [&spread.from[..], now].concat() });
                widened = j;
                &widened
            }
            None => job,
        };
        set_health(&mut self.cluster, lifted, true);
        let queues = &self.input.queues;
        let result =
            place_admitted(&self.placer, &mut self.cluster, &self.usage, queues, job, demands, req, false, explain);
        set_health(&mut self.cluster, lifted, false);
        if let (Ok((placed, ..)), Some(spread)) = (&result, &job.spread) {
            let nodes = placed.iter().map(|p| self.cluster.node(p.allocation.node).name.clone());
            self.spread_placed.entry(spread.group.clone()).or_default().extend(nodes);
        }
        result
    }
}
