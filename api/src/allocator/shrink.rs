//! Room that elastic jobs give back: a waiting job that fits on no cluster as things are, but
//! would fit on one if elastic jobs there that it may preempt gave back their replicas above
//! their minimum, is dispatched there at once. The agent's scheduler then shrinks those jobs
//! (the cheapest preemption: no job is evicted whole, see grus-scheduler's `preempt`) and
//! places the job when their grace period ends; nothing waits for capacity to show in the
//! summary first, since none will until the job is there to ask for it.
//!
//! Who may take whose spare replicas follows the agent's own rules, so that what is planned
//! here is what the agent will do: a job of the same queue (project and queue name) and
//! strictly lower priority, or borrowed work of no higher priority when the waiting job is
//! itself within its guarantee (reclaim); never a non-preemptible job, never one younger than
//! its minimum runtime; and never for a job whose tenant may not preempt, nor from a tenant
//! its rights do not reach ([`ReclaimRights`]). Freed capacity is counted conservatively
//! (each spare replica its own node entry), so a plan errs towards "does not fit".

use chrono::{DateTime, Duration, Utc};

use super::fit::{demand_of, fewest_that_fit, FreeView};
use super::reclaim::runtime_over;
use super::{
    excluded, in_serving_order, may_take, sorted_clusters, ClusterView, GpuTake, PendingJob, ReclaimRights, Reservation,
};

/// A running elastic job above its minimum, as this plan needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElasticJob {
    pub id: u64,
    /// Its project's slug and its queue's name: a queue is known by both.
    pub project: String,
    pub queue: String,
    pub cluster: String,
    pub priority: i32,
    pub preemptible: bool,
    /// Runs on capacity borrowed above its queue's guarantee.
    pub borrowed: bool,
    pub started_at: DateTime<Utc>,
    pub min_runtime_s: u64,
    /// What its replicas above its minimum hold.
    pub spare: Vec<GpuTake>,
    pub spare_cpu_milli: u64,
    pub spare_memory_mib: u64,
}

impl ElasticJob {
    fn spare_milli(&self) -> u64 {
        self.spare.iter().map(GpuTake::milli).sum()
    }

    /// Whether `job` may have this job's spare replicas given back for it.
    fn gives_way_to(&self, job: &PendingJob, rights: &ReclaimRights, now: DateTime<Utc>) -> bool {
        let spec = &job.spec;
        let same_queue = self.project == spec.project && self.queue == spec.queue;
        let entitled = if same_queue {
            self.priority < spec.priority
        } else {
            self.borrowed
                && !job.borrowed
                && self.priority <= spec.priority
                && rights.may_reclaim(&spec.project, &self.project)
        };
        entitled && (self.preemptible || self.borrowed) && runtime_over(self.started_at, self.min_runtime_s, now)
    }
}

/// Dispatch `job` to `cluster`: it fits there once `shrinking` jobs give back replicas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShrinkRoom {
    pub job: u64,
    pub cluster: String,
    /// The job's next epoch.
    pub epoch: u64,
    /// What the job will take there.
    pub reservation: Reservation,
    /// The elastic jobs whose spare replicas make the room, by id.
    pub shrinking: Vec<u64>,
}

/// A candidate plan in one cluster, compared lowest first: the highest priority shrunk, then
/// GPU milli given back, then jobs shrunk, then cluster order.
type PlanKey = (i32, u64, usize, usize);

/// Plans dispatches into room that elastic jobs give back, for `waiting` jobs (any order: they
/// are served by priority, then age), on the clusters' free views less every reservation and
/// hold. Each elastic job makes room for one waiting job at most, and what one dispatch takes
/// is not offered to the next. `reservation_ttl`: how long each dispatch's reservation holds.
pub fn plan_shrink_room(
    waiting: &[PendingJob],
    elastic: &[ElasticJob],
    clusters: &[ClusterView],
    now: DateTime<Utc>,
    reservation_ttl: Duration,
    rights: &ReclaimRights,
) -> Vec<ShrinkRoom> {
    if elastic.is_empty() || waiting.is_empty() {
        return Vec::new();
    }
    let cs = sorted_clusters(clusters);
    let mut views: Vec<FreeView> = cs.iter().map(|c| c.free_for(now, None)).collect();
    let mut taken = vec![false; elastic.len()];
    let order = in_serving_order(waiting);
    let mut out = Vec::new();
    for job in order {
        if !rights.may_preempt(&job.spec.project) {
            continue;
        }
        let groups = demand_of(&job.spec);
        let excluded = excluded(job, &cs);
        let mut best: Option<(PlanKey, usize, Vec<usize>, FreeView, super::fit::Fit)> = None;
        for (ci, c) in cs.iter().enumerate() {
            if !may_take(c, job, &excluded) {
                continue;
            }
            let mut cand: Vec<usize> = (0..elastic.len())
                .filter(|&e| !taken[e] && elastic[e].cluster == c.id && elastic[e].gives_way_to(job, rights, now))
                .collect();
            if cand.is_empty() {
                continue;
            }
            cand.sort_by_key(|&e| {
                let v = &elastic[e];
                (v.priority, v.spare_milli(), std::cmp::Reverse(v.started_at), v.id)
            });
            let with = |chosen: &[usize]| {
                let mut v = views[ci].clone();
                for &e in chosen {
                    v.give_back(&elastic[e].spare, elastic[e].spare_cpu_milli, elastic[e].spare_memory_mib);
                }
                v
            };
            let Some((chosen, after, take)) = fewest_that_fit(&cand, &groups, with) else { continue };
            let key = (
                chosen.iter().map(|&e| elastic[e].priority).max().unwrap_or(i32::MIN),
                chosen.iter().map(|&e| elastic[e].spare_milli()).sum(),
                chosen.len(),
                ci,
            );
            if best.as_ref().is_none_or(|(k, ..)| key < *k) {
                best = Some((key, ci, chosen, after, take));
            }
        }
        let Some((_, ci, chosen, after, take)) = best else { continue };
        views[ci] = after;
        for &e in &chosen {
            taken[e] = true;
        }
        let mut shrinking: Vec<u64> = chosen.iter().map(|&e| elastic[e].id).collect();
        shrinking.sort_unstable();
        out.push(ShrinkRoom {
            job: job.id(),
            cluster: cs[ci].id.clone(),
            epoch: job.epoch + 1,
            reservation: Reservation {
                job: job.id(),
                gpus: take.takes,
                cpu_milli: take.cpu_milli,
                memory_mib: take.memory_mib,
                expires_at: now + reservation_ttl,
            },
            shrinking,
        });
    }
    out
}
