//! Consolidation: a gang that waits only because the free capacity is scattered over nodes gets
//! room by moving running jobs that fit again at once elsewhere in the cluster (KAI's
//! consolidation). A move is an eviction the job loses little by: it is preemptible or it
//! checkpoints, it is not more important than the gang, it has run its minimum runtime, and it
//! is placed again beside the gang before the plan is accepted (so a move never leaves a job
//! that had room without it). Moves are bounded by a disruption budget (jobs of one queue being
//! moved at once) and a rate limit (moves per hour in the cluster); the gang then waits for
//! them as a preemptor waits for its victims, with its nodes held.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use super::gang::resolve;
use super::preemption::{allowed_pools, holds_room_for, CycleProbe};
use super::{replica_targets, Cycle, Held, Hold};
use crate::cluster::Cluster;
use crate::demand::Demand;
use crate::job::{Job, JobId, QueueId};
use crate::place::demand_models;
use crate::preempt::{Piece, Probe};
use crate::queue::ResourceKey;

impl<'a> Cycle<'a> {
    /// The fewest moves (whole jobs) that make room for `job`, which did not fit for capacity,
    /// with the nodes it would use; `None` when the room is not merely scattered, when no set
    /// of movable jobs frees it with every one of them fitting again, or when the budget or the
    /// rate limit would be exceeded.
    pub(super) fn plan_moves(&mut self, job: &'a Job) -> Option<(Vec<Piece>, Hold)> {
        let limits = self.cfg.consolidation;
        let allowance =
            limits.max_moves_per_hour.saturating_sub(self.input.recent_moves.saturating_add(self.moves_now));
        if limits.max_moves_per_queue == 0 || allowance == 0 {
            return None;
        }
        let demands = resolve(job, self.cluster.models(), self.cfg.sharing_busy_limit_pct).ok()?;
        if !scattered_room_suffices(&self.cluster, &demands, &replica_targets(job)) {
            return None;
        }
        let mut moving: BTreeMap<QueueId, u32> = BTreeMap::new();
        for v in &self.moving {
            if let Some(h) = self.held.get(v) {
                *moving.entry(h.job.queue).or_default() += 1;
            }
        }
        let now = self.input.now;
        let pools = allowed_pools(&self.cluster, job);
        let mut movable: Vec<(&JobId, &Held<'_>)> = self
            .held
            .iter()
            .filter(|(id, h)| {
                **id != job.id
                    && !h.new
                    && !h.privileged
                    && !self.evicting.contains_key(id)
                    && (h.job.preemptible || h.job.checkpoints)
                    && h.job.priority <= job.priority
                    && now.saturating_sub(h.started_at) >= h.job.min_runtime_s
                    && moving.get(&h.job.queue).copied().unwrap_or(0) < limits.max_moves_per_queue
                    && holds_room_for(&self.cluster, h, &pools, &demands)
            })
            .collect();
        // The cheapest moves first: work that checkpoints loses nothing, then the least
        // important, then the fewest GPU-seconds a restart repeats.
        movable.sort_by_key(|(id, h)| {
            let gpu_seconds = h.usage.get(&ResourceKey::Gpus).saturating_mul(now.saturating_sub(h.started_at));
            (!h.job.checkpoints, h.job.priority, gpu_seconds, Reverse(h.started_at), **id)
        });
        let order: Vec<JobId> = movable.into_iter().map(|(id, _)| *id).collect();
        let (pieces, hold) =
            self.with_probe(job, order.iter().copied(), |probe| choose_moves(&order, probe)).flatten()?;
        if pieces.len() as u32 > allowance {
            return None;
        }
        for p in &pieces {
            let n = moving.entry(self.held[&p.job()].job.queue).or_default();
            *n += 1;
            if *n > limits.max_moves_per_queue {
                return None;
            }
        }
        Some((pieces, hold))
    }
}

/// The search on the probe (left as found): jobs in `order` leave one after the other until the
/// gang fits; those away from the nodes it would use come back; then every one left must fit
/// again beside the gang, and each is given back in turn (the dearest first) where the gang
/// and the other moved jobs still fit without moving it.
fn choose_moves(order: &[JobId], probe: &mut CycleProbe<'_>) -> Option<(Vec<Piece>, Hold)> {
    probe.room_is_nodes = true;
    let mut chosen: Vec<Piece> = Vec::new();
    let mut fitted = false;
    for &j in order {
        probe.remove(Piece::Whole(j));
        chosen.push(Piece::Whole(j));
        // Once no node held it after a removal, only the room the next removal frees can
        // change that (the first is tried in full: nothing is assumed about the state before).
        if probe.may_fit_after_last_removal() && probe.fits(false) {
            fitted = true;
            break;
        }
    }
    if !fitted {
        return None;
    }
    let untouched = probe.untouched(&chosen);
    for p in untouched.iter().rev() {
        probe.restore(*p);
    }
    let untouched: BTreeSet<Piece> = untouched.into_iter().collect();
    chosen.retain(|p| !untouched.contains(p));
    probe.refit = true;
    if chosen.is_empty() || !probe.fits(false) {
        return None;
    }
    for p in chosen.clone().into_iter().rev() {
        probe.restore(p);
        if probe.fits(false) {
            chosen.retain(|c| *c != p);
        } else {
            probe.remove(p);
        }
    }
    if chosen.is_empty() {
        return None;
    }
    Some((chosen, probe.hold().clone()))
}

/// Whether the free capacity would hold the gang if it were not scattered: for every whole-GPU
/// task, the free whole GPUs of its models in the cluster. A cheap bound before the search
/// (fractional, MIG and CPU-only tasks are left to the search).
fn scattered_room_suffices(cluster: &Cluster, demands: &[Demand], req: &[(u32, u32)]) -> bool {
    let index = cluster.index();
    demands.iter().zip(req).all(|(d, &(required, _))| {
        if required == 0 || d.gpus == 0 || d.is_fractional() || d.mig.is_some() {
            return true;
        }
        let models = demand_models(cluster, d);
        let free: u64 = models.iter().flat_map(|&m| index.nodes_with_whole(m, 1)).map(|(n, _)| n as u64).sum();
        free >= required as u64 * d.gpus as u64
    })
}
