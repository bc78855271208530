//! Cross-cluster reclaim: when a queue within its guaranteed quota has a job waiting and no
//! cluster fits it, evict borrowed (preemptible) work so that it fits in one cluster; and, with
//! the fleet's fair shares ([`plan_reclaim_fair`]), when a queue below its fair share has one,
//! evict borrowed work of queues above theirs, never taking a queue below its own.
//!
//! Invariant 5 of DESIGN.md: only running jobs that are borrowed and preemptible are ever
//! chosen, never one of higher priority than the waiting job, never a privileged job (one
//! that is itself preempting others), never before its minimum runtime. Freed capacity is
//! counted conservatively (see `fit::ModelFree::give_back`), so an eviction is planned only
//! when the summary shows the waiting job would then fit. Tenant rights narrow it further: a
//! job whose tenant may not preempt plans no eviction, and one whose tenant may reclaim only from
//! some tenants chooses victims among those ([`ReclaimRights`]).

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use crate::domain::TenantRights;

use super::fair::gpu_milli_of;
use super::fit::{demand_of, fewest_that_fit, Fit, FreeView};
use super::{
    choose_in, excluded, in_serving_order, may_take, sorted_clusters, Choice, ClusterView, FleetShares, GpuTake,
    PendingJob, Reservation,
};

/// A job running in some cluster, as reclaim needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningJob {
    pub id: u64,
    /// Its project's slug (tenant rights are checked through it) and its queue's name.
    pub project: String,
    pub queue: String,
    pub cluster: String,
    /// The epoch of its current dispatch (the Evict command carries it).
    pub epoch: u64,
    pub priority: i32,
    /// Runs on capacity borrowed above its queue's guarantee.
    pub borrowed: bool,
    pub preemptible: bool,
    /// Is itself preempting others (DESIGN.md: cannot be chosen as a victim).
    pub privileged: bool,
    pub started_at: DateTime<Utc>,
    pub min_runtime_s: u64,
    /// What it holds in its cluster.
    pub gpus: Vec<GpuTake>,
    pub cpu_milli: u64,
    pub memory_mib: u64,
}

impl RunningJob {
    fn gpu_milli(&self) -> u64 {
        self.gpus.iter().map(GpuTake::milli).sum()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReclaimConfig {
    /// Grace period sent with each Evict.
    pub grace_s: u64,
    /// How long, after the grace period, the freed capacity stays held for the job it was
    /// freed for (the victims must stop and the cluster report the room).
    pub hold_s: u64,
}

impl Default for ReclaimConfig {
    fn default() -> Self {
        ReclaimConfig { grace_s: 30, hold_s: 120 }
    }
}

/// Tenant rights by project, as reclaim checks them. A project it does not know has the
/// default rights; empty, everyone may reclaim from everyone (reclaim before tenant rights).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReclaimRights {
    pub tenants: BTreeMap<u64, TenantRights>,
    /// Project slug -> tenant id.
    pub project_tenants: BTreeMap<String, u64>,
}

impl ReclaimRights {
    fn of(&self, project: &str) -> Option<(u64, &TenantRights)> {
        let tenant = *self.project_tenants.get(project)?;
        Some((tenant, self.tenants.get(&tenant)?))
    }

    /// Whether some tenant's jobs may not preempt at all (else [`Self::may_preempt`] is true
    /// for every project).
    pub fn anyone_barred(&self) -> bool {
        self.tenants.values().any(|r| !r.may_preempt)
    }

    /// Whether jobs of `project` may have others' work evicted at all.
    pub fn may_preempt(&self, project: &str) -> bool {
        self.of(project).is_none_or(|(_, r)| r.may_preempt)
    }

    /// Whether a job of `project` may have borrowed work of `victim_project` evicted.
    pub fn may_reclaim(&self, project: &str, victim_project: &str) -> bool {
        let Some((own, rights)) = self.of(project) else { return true };
        let victim = self.project_tenants.get(victim_project).copied();
        // A victim of an unknown project is nobody's listed tenant.
        rights.may_reclaim_from(own, victim.unwrap_or(u64::MAX))
    }
}

/// Evict `job` (running in `cluster` under `epoch`) to make room for `for_job`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evict {
    pub job: u64,
    pub cluster: String,
    pub epoch: u64,
    pub grace_s: u64,
    pub for_job: u64,
    /// What `for_job` will take in `cluster`: held for it there (`ClusterView::holds`) until
    /// it is dispatched or the hold expires.
    pub hold: Reservation,
    /// On what ground `for_job` reclaims.
    pub ground: ReclaimGround,
}

/// Why a waiting job may have borrowed work evicted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReclaimGround {
    /// Its queue, with it, stays within its guarantee.
    Guarantee,
    /// Its queue, with it, stays at or below its fair share of the fleet, and the victims'
    /// queues at or above theirs.
    FairShare,
}

impl ReclaimGround {
    /// The end of "to make room for job N ...".
    pub fn describe(self) -> &'static str {
        match self {
            ReclaimGround::Guarantee => "within its queue's guarantee",
            ReclaimGround::FairShare => "below its queue's fair share (the victim's queue is above its own)",
        }
    }
}

/// A candidate plan in one cluster, compared lowest first: the highest victim priority,
/// then GPUs disturbed, then victims, then cluster order.
type PlanKey = (i32, u64, usize, usize);

/// Plans evictions for `waiting` jobs (each within its queue's guarantee), served in
/// priority then age order. A waiting job that already fits somewhere gets no plan (the
/// round dispatches it). Each victim is used for at most one waiting job, and the capacity
/// freed for one waiting job is not counted again for the next.
pub fn plan_reclaim(
    waiting: &[PendingJob],
    running: &[RunningJob],
    clusters: &[ClusterView],
    now: DateTime<Utc>,
    cfg: &ReclaimConfig,
) -> Vec<Evict> {
    plan_reclaim_with_evictions(waiting, running, &[], clusters, now, cfg, &ReclaimRights::default())
}

/// [`plan_reclaim`] while `evicting` jobs (evictions decided in earlier rounds, not yet
/// finished) are still counted in the summaries: their capacity is counted as freed, so a
/// waiting job that their eviction already makes room for gets no further victims. This is
/// what makes reclaim idempotent across rounds.
pub fn plan_reclaim_with_evictions(
    waiting: &[PendingJob],
    running: &[RunningJob],
    evicting: &[RunningJob],
    clusters: &[ClusterView],
    now: DateTime<Utc>,
    cfg: &ReclaimConfig,
    rights: &ReclaimRights,
) -> Vec<Evict> {
    plan(waiting, running, evicting, clusters, now, cfg, rights, None)
}

/// [`plan_reclaim_with_evictions`] with reclaim to fair share too (KAI's): `waiting` may hold
/// borrowed jobs; one whose queue, with it, stays at or below its fair share of the fleet
/// (`shares`) may evict borrowed work of other queues that are above theirs, each such queue
/// only as far as it stays at or above its fair share, so that capacity does not swing back.
/// A job within its guarantee reclaims as [`plan_reclaim_with_evictions`] does.
#[allow(clippy::too_many_arguments)]
pub fn plan_reclaim_fair(
    shares: &FleetShares,
    waiting: &[PendingJob],
    running: &[RunningJob],
    evicting: &[RunningJob],
    clusters: &[ClusterView],
    now: DateTime<Utc>,
    cfg: &ReclaimConfig,
    rights: &ReclaimRights,
) -> Vec<Evict> {
    plan(waiting, running, evicting, clusters, now, cfg, rights, Some(shares))
}

/// GPU milli each queue holds, as reclaim to fair share moves it between queues.
struct QueueHeld<'s> {
    shares: &'s FleetShares,
    /// (project, queue) -> held milli, once changed from what `shares` says.
    held: BTreeMap<(String, String), u64>,
}

impl QueueHeld<'_> {
    /// (fair, held) of a queue; `None` for a queue the tree does not know.
    fn of(&self, project: &str, queue: &str) -> Option<(u64, u64)> {
        let (fair, held) = self.shares.of_queue(project, queue)?;
        Some((fair, self.held.get(&(project.to_owned(), queue.to_owned())).copied().unwrap_or(held)))
    }

    fn set(&mut self, project: &str, queue: &str, held: u64) {
        self.held.insert((project.to_owned(), queue.to_owned()), held);
    }
}

#[allow(clippy::too_many_arguments)]
fn plan(
    waiting: &[PendingJob],
    running: &[RunningJob],
    evicting: &[RunningJob],
    clusters: &[ClusterView],
    now: DateTime<Utc>,
    cfg: &ReclaimConfig,
    rights: &ReclaimRights,
    shares: Option<&FleetShares>,
) -> Vec<Evict> {
    let mut held = shares.map(|shares| QueueHeld { shares, held: BTreeMap::new() });
    let cs = sorted_clusters(clusters);
    let mut views: Vec<FreeView> = cs.iter().map(|c| c.free(now)).collect();
    for e in evicting {
        if let Some(i) = cs.iter().position(|c| c.id == e.cluster) {
            give_back(&mut views[i], e);
        }
    }
    let base: Vec<FreeView> = cs.iter().map(|c| FreeView::of(&c.capacity)).collect();
    let mut taken = vec![false; running.len()];
    let order = in_serving_order(waiting);
    let mut out = Vec::new();
    for job in order {
        let groups = demand_of(&job.spec);
        let excluded = excluded(job, &cs);
        let eligible = |c: &ClusterView| may_take(c, job, &excluded);
        // A job that fits as things are needs no eviction: the round dispatches it, so its
        // take is deducted here too, exactly as the round would choose.
        if let (Choice::Cluster { gpus, cpu_milli, memory_mib, .. }, i) =
            choose_in(job, (&groups, &excluded), &cs, &views, &base, None)
        {
            views[i].deduct(&gpus, cpu_milli, memory_mib);
            continue;
        }
        if !rights.may_preempt(&job.spec.project) {
            continue;
        }
        // On what ground it reclaims: its guarantee (without shares, every waiting job is
        // taken to be within its guarantee: the caller chose them), or its fair share.
        let (project, queue) = (job.spec.project.as_str(), job.spec.queue.as_str());
        let wants = gpu_milli_of(job);
        let by_fair_share = match (&held, job.borrowed) {
            (None, _) | (Some(_), false) => false,
            (Some(h), true) => match h.of(project, queue) {
                Some((fair, now_held)) if now_held + wants <= fair => true,
                _ => continue,
            },
        };
        // Per victim queue, how much of it reclaim to fair share may still take.
        let mut room: BTreeMap<(&str, &str), u64> = BTreeMap::new();
        let mut best: Option<(PlanKey, usize, Vec<usize>, FreeView, Fit)> = None;
        for (ci, c) in cs.iter().enumerate() {
            if !eligible(c) {
                continue;
            }
            // Candidates: lowest priority first, then smallest, then the most recently
            // started (least work lost), then id.
            let mut cand: Vec<usize> = (0..running.len())
                .filter(|&r| {
                    let v = &running[r];
                    !taken[r]
                        && v.cluster == c.id
                        && v.borrowed
                        && v.preemptible
                        && !v.privileged
                        && v.priority <= job.spec.priority
                        && min_runtime_over(v, now)
                        && rights.may_reclaim(&job.spec.project, &v.project)
                        && (!by_fair_share || (v.project != project || v.queue != queue))
                })
                .collect();
            cand.sort_by_key(|&r| {
                let v = &running[r];
                (v.priority, v.gpu_milli(), std::cmp::Reverse(v.started_at), v.id)
            });
            if by_fair_share {
                // In this order, each victim queue gives only what keeps it at or above its
                // fair share: any subset of what is left obeys that too.
                let h = held.as_ref().expect("fair-share ground needs shares");
                cand.retain(|&r| {
                    let v = &running[r];
                    let Some((fair, now_held)) = h.of(&v.project, &v.queue) else { return false };
                    let left =
                        room.entry((v.project.as_str(), v.queue.as_str())).or_insert(now_held.saturating_sub(fair));
                    if v.gpu_milli() <= *left {
                        *left -= v.gpu_milli();
                        true
                    } else {
                        false
                    }
                });
                room.clear();
            }
            let with = |victims: &[usize]| {
                let mut v = views[ci].clone();
                for &r in victims {
                    give_back(&mut v, &running[r]);
                }
                v
            };
            // Victims that turn out unnecessary are dropped, the most costly first.
            let Some((chosen, after, take)) = fewest_that_fit(&cand, &groups, with) else { continue };
            let key = (
                chosen.iter().map(|&r| running[r].priority).max().unwrap_or(i32::MIN),
                chosen.iter().map(|&r| running[r].gpu_milli()).sum(),
                chosen.len(),
                ci,
            );
            if best.as_ref().is_none_or(|(k, ..)| key < *k) {
                best = Some((key, ci, chosen, after, take));
            }
        }
        if let Some((_, ci, mut chosen, after, take)) = best {
            views[ci] = after;
            chosen.sort_by_key(|&r| running[r].id);
            let hold = Reservation {
                job: job.id(),
                gpus: take.takes,
                cpu_milli: take.cpu_milli,
                memory_mib: take.memory_mib,
                expires_at: now + Duration::seconds((cfg.grace_s + cfg.hold_s) as i64),
            };
            if let Some(h) = held.as_mut() {
                for &r in &chosen {
                    let v = &running[r];
                    if let Some((_, was)) = h.of(&v.project, &v.queue) {
                        h.set(&v.project, &v.queue, was.saturating_sub(v.gpu_milli()));
                    }
                }
                if let Some((_, was)) = h.of(project, queue) {
                    h.set(project, queue, was + wants);
                }
            }
            for r in chosen {
                taken[r] = true;
                out.push(Evict {
                    job: running[r].id,
                    cluster: running[r].cluster.clone(),
                    epoch: running[r].epoch,
                    grace_s: cfg.grace_s,
                    for_job: job.id(),
                    hold: hold.clone(),
                    ground: if by_fair_share { ReclaimGround::FairShare } else { ReclaimGround::Guarantee },
                });
            }
        }
    }
    out
}

/// A job is not evicted before it has run `min_runtime_s`; an end beyond the calendar
/// means never.
fn min_runtime_over(v: &RunningJob, now: DateTime<Utc>) -> bool {
    runtime_over(v.started_at, v.min_runtime_s, now)
}

/// Whether a job started at `started_at` has run `min_runtime_s` by `now`.
pub(super) fn runtime_over(started_at: DateTime<Utc>, min_runtime_s: u64, now: DateTime<Utc>) -> bool {
    i64::try_from(min_runtime_s)
        .ok()
        .and_then(Duration::try_seconds)
        .and_then(|d| started_at.checked_add_signed(d))
        .is_some_and(|end| now >= end)
}

fn give_back(view: &mut FreeView, job: &RunningJob) {
    view.give_back(&job.gpus, job.cpu_milli, job.memory_mib);
}
