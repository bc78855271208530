//! Preemption for a job that does not fit: the victims (see `crate::preempt`) and what the
//! preemptor will use once they are gone, found with a probe on the cycle's own cluster and
//! usage that is undone before it returns; the preemptor's nodes and quota are held meanwhile.

use std::collections::BTreeMap;

use super::gang::{force_allocate, lower_bound, may_fit, place_admitted, release_all, resolve};
use super::{Cycle, Explain, Fail, Held, Hold, Reservation, ReservationKind};
use crate::cluster::Cluster;
use crate::demand::Demand;
use crate::explain::PreemptionFailure;
use crate::job::{Job, JobId};
use crate::place::Placer;
use crate::preempt::{choose_victims, eligible_victims, Preemptor, Probe, VictimInfo};
use crate::queue::{classify_borrowed, Queues, ResourceKey, Usage};

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
    fn with_probe<R>(
        &mut self,
        job: &'a Job,
        candidates: impl Iterator<Item = JobId>,
        f: impl FnOnce(&mut CycleProbe<'_>) -> R,
    ) -> Option<R> {
        let demands = resolve(job, self.cluster.models()).ok()?;
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
        };
        let result = f(&mut probe);
        while let Some(v) = probe.removed.last().copied() {
            probe.restore(v);
        }
        Some(result)
    }

    /// The nodes the job would use if `victims` were gone, if it fits then.
    pub(super) fn fits_without(&mut self, job: &'a Job, victims: &[JobId]) -> Option<Hold> {
        self.with_probe(job, victims.iter().copied(), |probe| {
            for v in victims {
                probe.remove(*v);
            }
            probe.fits(false).then(|| probe.hold.clone())
        })
        .flatten()
    }

    /// Plans a preemption for a job that did not fit: the victims and the nodes it would use.
    pub(super) fn plan(&mut self, job: &'a Job, fail: &Fail) -> Result<(Vec<JobId>, Hold), PreemptionFailure> {
        let queues = &self.input.queues;
        let now = self.input.now;
        let Ok(demands) = resolve(job, self.cluster.models()) else {
            return Err(PreemptionFailure::InsufficientEvenIfAllEvicted);
        };
        let quota_failure = matches!(fail, Fail::Quota(_));
        let project = queues.project_of(job.queue);
        let guarantee = queues.queue(job.queue).map(|q| q.guarantee.clone()).unwrap_or_default();
        let within_guarantee =
            self.usage.queue(job.queue).plus(&lower_bound(job, &replica_targets(job))).within_guarantee(&guarantee);
        let preemptor = Preemptor {
            job: job.id,
            queue: job.queue,
            project,
            priority: job.priority,
            within_guarantee,
            may_preempt: job.may_preempt,
        };
        if self.borrowed.is_none() {
            self.borrowed = Some(classify_borrowed(queues, &self.held_usage()));
        }
        let borrowed = self.borrowed.as_ref().expect("computed above");
        let gpu_demands: Vec<&Demand> = demands.iter().filter(|d| d.gpus > 0).collect();
        let relevant = |h: &Held<'_>| -> bool {
            if quota_failure {
                return queues.project_of(h.job.queue) == project;
            }
            h.replicas.iter().any(|p| {
                let node = self.cluster.node(p.allocation.node);
                if gpu_demands.is_empty() {
                    p.allocation.cpu_milli > 0 || p.allocation.memory_mib > 0
                } else {
                    p.allocation
                        .devices
                        .iter()
                        .any(|d| gpu_demands.iter().any(|g| g.models.allows(node.gpus[d.gpu as usize].model)))
                }
            })
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
                started_at: h.started_at,
                min_runtime_s: h.job.min_runtime_s,
                gpu_milli: h.usage.get(&ResourceKey::Gpus),
            })
            .collect();
        let eligible = eligible_victims(&preemptor, &candidates, now)?;
        let reclaim = |victims: &[JobId]| {
            victims.iter().any(|v| eligible.iter().any(|e| e.job == *v && e.ground == crate::preempt::Ground::Reclaim))
        };
        self.with_probe(job, eligible.iter().map(|e| e.job), |probe| {
            let victims = choose_victims(&eligible, probe)?;
            for v in &victims {
                probe.remove(*v);
            }
            if !probe.fits(reclaim(&victims)) {
                return Err(PreemptionFailure::InsufficientEvenIfAllEvicted);
            }
            Ok((victims, probe.hold.clone()))
        })
        .unwrap_or(Err(PreemptionFailure::InsufficientEvenIfAllEvicted))
    }
}

/// The preemption probe: victims are released on the cycle's cluster and usage, the preemptor
/// is placed and rolled back; `with_probe` gives back whatever is still removed at the end.
struct CycleProbe<'c> {
    placer: &'c Placer<'c>,
    queues: &'c Queues,
    cluster: &'c mut Cluster,
    usage: &'c mut Usage,
    job: &'c Job,
    demands: Vec<Demand>,
    req: Vec<(u32, u32)>,
    victims: BTreeMap<JobId, &'c Held<'c>>,
    removed: Vec<JobId>,
    /// What the last placement that fitted used.
    hold: Hold,
}

impl Probe for CycleProbe<'_> {
    fn remove(&mut self, victim: JobId) {
        let h = self.victims[&victim];
        for p in &h.replicas {
            self.cluster.release(&p.allocation).expect("a victim's allocation is on the cluster");
        }
        self.usage.sub(h.job.queue, h.job.priority, &h.usage);
        self.removed.push(victim);
    }

    fn restore(&mut self, victim: JobId) {
        let h = self.victims[&victim];
        for p in &h.replicas {
            force_allocate(self.cluster, &p.allocation);
        }
        self.usage.add(h.job.queue, h.job.priority, &h.usage);
        self.removed.retain(|v| *v != victim);
    }

    fn fits(&mut self, within_guarantee: bool) -> bool {
        if !may_fit(self.cluster, &self.demands, &self.req) {
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
                self.hold = Hold { nodes: placed.iter().map(|p| p.allocation.node).collect(), usage };
                release_all(self.cluster, &placed);
                true
            }
            Err(_) => false,
        }
    }
}
