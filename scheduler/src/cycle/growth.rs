//! Phase 3: running jobs below their target (elastic up to max, replicas beyond
//! `min_members`) grow on the capacity the pending jobs left.

use super::gang::{constraints, domain_of, expect_share_load, resolve};
use super::{replica_targets, Cycle, Decision, PlacedReplica};
use crate::cluster::{Cluster, ReplicaAllocation};
use crate::demand::Demand;
use crate::job::Job;
use crate::job::JobId;
use crate::place::Placer;
use crate::queue::{Queues, ResourceVector, Usage};

impl<'a> Cycle<'a> {
    /// Grows running jobs below their target (elastic up to max, replicas beyond `min_members`)
    /// on the capacity the pending jobs left, highest priority first. Jobs started in this cycle
    /// get their extra replicas here too, inside their `Start`.
    pub(super) fn grow(&mut self) {
        let mut ids: Vec<(std::cmp::Reverse<i32>, u64, JobId)> = self
            .held
            .iter()
            .filter(|(id, h)| {
                !self.evicting.contains_key(id) && {
                    let targets = replica_targets(h.job);
                    targets
                        .iter()
                        .enumerate()
                        .any(|(i, &(_, t))| (h.replicas.iter().filter(|p| p.task == i).count() as u32) < t)
                }
            })
            .map(|(id, h)| (std::cmp::Reverse(h.job.priority), h.started_at, *id))
            .collect();
        ids.sort_unstable();
        for (_, _, id) in ids {
            let job = self.held[&id].job;
            let Ok(demands) = resolve(job, self.cluster.models(), self.cfg.sharing_busy_limit_pct) else { continue };
            let targets = replica_targets(job);
            let have = self.held[&id].replicas.clone();
            let added = place_extras(
                &self.placer,
                &mut self.cluster,
                &mut self.usage,
                &self.input.queues,
                job,
                &demands,
                &have,
                &targets,
            );
            if !added.is_empty() {
                expect_share_load(&mut self.cluster, &added);
                let delta = ResourceVector::of_allocations(&self.cluster, added.iter().map(|p| &p.allocation));
                let h = self.held.get_mut(&id).expect("listed above");
                h.usage.add(&delta);
                h.replicas.extend(added.iter().cloned());
                self.borrowed = None;
                let start = self.decisions.iter_mut().find_map(|d| match d {
                    Decision::Start { job, replicas, .. } if *job == id => Some(replicas),
                    _ => None,
                });
                match start {
                    // Started in this cycle: one decision with every replica.
                    Some(replicas) => replicas.extend(added),
                    None => self.decisions.push(Decision::Grow { job: id, replicas: added }),
                }
            }
        }
    }
}

/// Adds replicas toward each task's target, one at a time, inside the task's scope, while
/// they fit and the quotas admit them. Applies them to `cluster` and `usage`.
#[allow(clippy::too_many_arguments)]
fn place_extras(
    placer: &Placer<'_>,
    cluster: &mut Cluster,
    usage: &mut Usage,
    queues: &Queues,
    job: &Job,
    demands: &[Demand],
    have: &[PlacedReplica],
    targets: &[(u32, u32)],
) -> Vec<PlacedReplica> {
    // A job that names pools grows in the pool its gang went to.
    let pool =
        if job.pools.is_empty() { None } else { have.first().and_then(|p| cluster.node(p.allocation.node).pool) };
    let cons = constraints(job, pool);
    let mut added: Vec<PlacedReplica> = Vec::new();
    for (i, (task, &(_, target))) in job.tasks.iter().zip(targets).enumerate() {
        loop {
            let gang: Vec<ReplicaAllocation> =
                have.iter().chain(&added).filter(|p| p.task == i).map(|p| p.allocation.clone()).collect();
            if gang.len() as u32 >= target {
                break;
            }
            let alloc = match gang.first() {
                None => placer
                    .place_gang(cluster, std::slice::from_ref(&demands[i]), task.topology, &cons)
                    .ok()
                    .and_then(|mut v| v.pop()),
                Some(first) => {
                    let domain = domain_of(cluster, task.topology, first);
                    placer.best_allocation(cluster, &demands[i], &cons, domain, &gang).map(|(a, _)| {
                        cluster.allocate(&a).expect("the filter admitted this allocation");
                        a
                    })
                }
            };
            let Some(a) = alloc else { break };
            let delta = ResourceVector::of_allocations(cluster, [&a]);
            if usage.admit(queues, job.queue, job.priority, &delta, job.preemptible).is_err() {
                cluster.release(&a).expect("releasing an allocation made a moment ago");
                break;
            }
            usage.add(job.queue, job.priority, &delta);
            added.push(PlacedReplica { task: i, allocation: a });
        }
    }
    added
}
