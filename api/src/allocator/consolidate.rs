//! Room that consolidation makes: a waiting gang that fits on no cluster as things are, but
//! would fit on one if jobs there that the agent may move (running, preemptible or
//! checkpointing, of no higher priority) gave up their nodes, is dispatched there. The agent's
//! scheduler then moves them (grus-scheduler's `consolidation`: only jobs that fit again at once
//! elsewhere in the cluster, within its disruption budget and rate limit) and places the gang
//! once they have left; nothing waits for room to show in the summary first, since none will.
//!
//! The agent reports, per model, each node where movable jobs hold whole GPUs: its free whole
//! GPUs, those GPUs and the highest priority among the jobs ([`MovableRoom`]). Here such a
//! node counts as holding both, for a gang of at least that priority, and the GPUs the gang
//! would need moved must fit in the whole GPUs left free elsewhere. That is coarser than the
//! agent's check (which places each moved job again), so the agent may still refuse: the job
//! then comes back when its answer deadline passes, like any rejected dispatch.

use chrono::{DateTime, Duration, Utc};
use grus_protocol::wire::MovableRoom;
use grus_scheduler::resources::MILLI_PER_GPU;

use super::fit::{demand_of, fit, MemberGroup};
use super::{excluded, in_serving_order, may_take, sorted_clusters, ClusterView, PendingJob, Reservation};

/// Dispatch `job` to `cluster`: it fits there once jobs move off `moved_gpus` whole GPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsolidationRoom {
    pub job: u64,
    pub cluster: String,
    /// The job's next epoch.
    pub epoch: u64,
    /// What the job will take there.
    pub reservation: Reservation,
    /// Whole GPUs of running jobs that must move elsewhere in the cluster.
    pub moved_gpus: u32,
}

/// Plans dispatches into room that consolidation makes, for `waiting` jobs (any order: they are
/// served by priority, then age) of whole GPUs, on the clusters' free views less every
/// reservation and hold. At most one such dispatch per cluster in a round: the moves of one
/// are not offered to the next. `reservation_ttl`: how long each dispatch's reservation holds.
pub fn plan_consolidation_room(
    waiting: &[PendingJob],
    clusters: &[ClusterView],
    now: DateTime<Utc>,
    reservation_ttl: Duration,
) -> Vec<ConsolidationRoom> {
    let cs = sorted_clusters(clusters);
    let mut used = vec![false; cs.len()];
    let order = in_serving_order(waiting);
    let mut out = Vec::new();
    for job in order {
        let groups = demand_of(&job.spec);
        let whole_gpus = groups.iter().any(|g| g.gpus > 0 && g.milli >= MILLI_PER_GPU);
        let shares = groups.iter().any(|g| g.gpus > 0 && g.milli < MILLI_PER_GPU);
        if !whole_gpus || shares {
            continue;
        }
        let excluded = excluded(job, &cs);
        let mut best: Option<((u32, usize), Reservation, u32)> = None;
        for (ci, c) in cs.iter().enumerate() {
            if used[ci] || !may_take(c, job, &excluded) {
                continue;
            }
            let Some((moved, take)) = room_after_moves(c, job, &groups, now) else { continue };
            let key = (moved, ci);
            if best.as_ref().is_none_or(|(k, ..)| key < *k) {
                let reservation = Reservation {
                    job: job.id(),
                    gpus: take.takes,
                    cpu_milli: take.cpu_milli,
                    memory_mib: take.memory_mib,
                    expires_at: now + reservation_ttl,
                };
                best = Some((key, reservation, moved));
            }
        }
        let Some(((_, ci), reservation, moved_gpus)) = best else { continue };
        used[ci] = true;
        out.push(ConsolidationRoom {
            job: job.id(),
            cluster: cs[ci].id.clone(),
            epoch: job.epoch + 1,
            reservation,
            moved_gpus,
        });
    }
    out
}

/// Whether `job`'s gang fits on `c` once its movable jobs of no higher priority give up their
/// nodes, and the GPUs that would move fit in what is left free: the GPUs moved and the take.
fn room_after_moves(
    c: &ClusterView,
    job: &PendingJob,
    groups: &[MemberGroup],
    now: DateTime<Utc>,
) -> Option<(u32, super::fit::Fit)> {
    let mut view = c.free_for(now, Some(job.id()));
    // Per model index: (index in its `whole` of the merged node, its room). Within a model every
    // entry is taken out before any merged one is pushed, so the pushed indices hold.
    let mut merged: Vec<(usize, usize, MovableRoom)> = Vec::new();
    for m in &c.capacity.models {
        let Some(mi) = view.models.iter().position(|v| v.model == m.model) else { continue };
        let free = &mut view.models[mi];
        let mut rooms = Vec::new();
        for room in m.movable_per_node.iter().filter(|r| r.max_priority <= job.spec.priority && r.movable > 0) {
            if room.free > 0 {
                // The node's free GPUs are among the anonymous entries: take them out, or pass
                // on the node if a reservation already claimed them.
                let Some(at) = free.whole.iter().position(|&w| w == room.free) else { continue };
                free.whole.remove(at);
            }
            rooms.push(room.clone());
        }
        for room in rooms {
            let total = room.free + room.movable;
            free.whole.push(total);
            for key in ["node", "rack"] {
                if let Some(v) = free.largest.get_mut(key) {
                    *v = (*v).max(total);
                }
            }
            merged.push((mi, free.whole.len() - 1, room));
        }
    }
    if merged.is_empty() {
        return None;
    }
    let before = view.clone();
    let mut after = view;
    let take = fit(&mut after, groups).ok()?;
    let (mut moved, mut left) = (0u32, 0u64);
    for (mi, m) in after.models.iter().enumerate() {
        for (i, &w) in m.whole.iter().enumerate() {
            let room = merged.iter().find(|(rm, ri, _)| *rm == mi && *ri == i).map(|(_, _, r)| r);
            let consumed = before.models[mi].whole[i] - w;
            match room {
                Some(r) if consumed > r.free => {
                    moved += (consumed - r.free).min(r.movable);
                }
                // Its movable jobs stay: only its free GPUs are left to others.
                Some(r) => left += u64::from(r.free - consumed),
                None => left += u64::from(w),
            }
        }
    }
    (moved > 0 && u64::from(moved) <= left).then_some((moved, take))
}
