//! Reservations for blocked gangs: the nodes a gang would use once enough running jobs end are
//! masked for the rest of the cycle; a later job may use them only if it ends before the gang
//! could start.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use super::gang::{place_required, resolve, single_replica_may_fit, single_replica_task};
use super::{replica_targets, Cycle, Explain, Reservation, ReservationKind};
use crate::cluster::NodeId;
use crate::job::{Job, JobId};

impl<'a> Cycle<'a> {
    /// Makes a reservation's nodes unschedulable for the rest of the cycle. Masks stay on (a
    /// job that may backfill lifts them for its own attempt only), so that a cycle with many
    /// reservations does not toggle every reserved node for every job.
    pub(super) fn add_reservation(&mut self, r: Reservation) {
        for &n in &r.nodes {
            if self.cluster.node(n).healthy {
                self.cluster.set_node_health(n, false);
                self.masked.insert(n);
            }
        }
        self.reservations.push(r);
    }

    /// The input's capacity holds, as reservations no other job may use (a hold of a job that
    /// runs already is over). Holds never overlap: a node two holds name is the one of the
    /// lower job id (first served), or each would mask it from the other for good.
    pub(super) fn keep_holds(&mut self) {
        let mut holds: Vec<_> = self.input.holds.iter().filter(|h| !self.held.contains_key(&h.job)).collect();
        holds.sort_by_key(|h| h.job);
        let mut taken = BTreeSet::new();
        for h in holds {
            let nodes: BTreeSet<NodeId> = h.nodes.difference(&taken).copied().collect();
            taken.extend(nodes.iter().copied());
            if !nodes.is_empty() {
                self.add_reservation(Reservation { job: h.job, nodes, kind: ReservationKind::Preemption });
            }
        }
    }

    /// Masked nodes the job may use for its own attempt: those of backfill reservations and
    /// of its own reservations (a capacity hold kept for it), less those another reservation
    /// holds; with `ends_at`, only backfill reservations the job leaves in time (`None`: every
    /// backfill reservation).
    pub(super) fn backfill_nodes(&self, job: JobId, ends_at: Option<u64>) -> Vec<NodeId> {
        let mut open = BTreeSet::new();
        let mut held = BTreeSet::new();
        for r in &self.reservations {
            if r.job == job {
                open.extend(r.nodes.iter().copied());
                continue;
            }
            match (r.kind, ends_at) {
                (ReservationKind::Backfill { earliest_start }, Some(end)) if end <= earliest_start => {
                    open.extend(r.nodes.iter().copied())
                }
                (ReservationKind::Backfill { .. }, None) => open.extend(r.nodes.iter().copied()),
                _ => held.extend(r.nodes.iter().copied()),
            }
        }
        open.difference(&held).copied().filter(|n| self.masked.contains(n)).collect()
    }

    /// Reserves, for a blocked gang, the nodes it would use once enough running jobs end (those
    /// with the earliest known end first); the reservation may start no earlier than the last
    /// of those ends.
    pub(super) fn reserve(&mut self, job: &'a Job) {
        let bf = self.cfg.backfill;
        let backfills = self.reservations.iter().filter(|r| matches!(r.kind, ReservationKind::Backfill { .. })).count();
        if backfills >= bf.max_reservations || job.priority < bf.min_priority {
            return;
        }
        let Ok(demands) = resolve(job, self.cluster.models(), self.cfg.sharing_busy_limit_pct) else { return };
        let req = replica_targets(job);
        let now = self.input.now;
        let grace = self.cfg.eviction_grace_s;
        // Known ends first, earliest first. Among jobs whose end nobody knows, the youngest
        // first: run times on GPU clusters are heavy-tailed, so the longer a job has run, the
        // longer it is likely to go on, and a reservation on the nodes of the oldest jobs
        // (their ids come first) may wait for days.
        let mut ending: Vec<(u64, Reverse<u64>, JobId, Option<u64>)> = self
            .held
            .iter()
            .map(|(id, h)| {
                let end = if self.evicting.contains_key(id) {
                    Some(self.evicting_since.get(id).copied().unwrap_or(now).saturating_add(grace))
                } else {
                    h.job.expected_runtime_s().map(|m| h.started_at.saturating_add(m))
                };
                (end.unwrap_or(u64::MAX), Reverse(h.started_at), *id, end)
            })
            .collect();
        ending.sort_unstable();
        // Reserved nodes are masked on the cycle's cluster: reservations never overlap.
        let base = self.cluster.clone();
        let try_after = |k: usize| -> Option<BTreeSet<NodeId>> {
            let mut c = base.clone();
            for (_, _, id, _) in &ending[..k] {
                for p in &self.held[id].replicas {
                    c.release(&p.allocation).expect("a held allocation is on the cluster");
                }
            }
            let placed = place_required(&self.placer, &mut c, job, &demands, &req, Explain::No).ok()?;
            Some(placed.iter().map(|p| p.allocation.node).collect())
        };
        let n = ending.len();
        // A job of one replica that does not fit now can first fit only on the nodes of the
        // job whose end frees the room: one pass over the ending jobs, filtering their nodes,
        // gives the prefix a full placement then confirms (or, with pools or NVLink groups
        // that the filter does not see, a search above it finds).
        let mut lo = 0;
        if try_after(0).is_none() {
            lo = 1;
            if single_replica_task(&req).is_some() {
                let mut c = base.clone();
                let first = ending.iter().position(|(_, _, id, _)| {
                    let replicas = &self.held[id].replicas;
                    for p in replicas {
                        c.release(&p.allocation).expect("a held allocation is on the cluster");
                    }
                    let nodes = replicas.iter().map(|p| p.allocation.node);
                    single_replica_may_fit(&c, job, &demands, &req, nodes) == Some(true)
                });
                // It fits on none of the nodes even after every end: no reservation helps.
                let Some(k) = first else { return };
                lo = k + 1;
            }
        }
        // Smallest prefix of ending jobs after which the gang fits (more released never hurts).
        let hi = if lo <= n && try_after(lo).is_some() {
            lo
        } else {
            if try_after(n).is_none() {
                return;
            }
            let (mut lo, mut hi) = (lo + 1, n);
            while lo < hi {
                let mid = (lo + hi) / 2;
                if try_after(mid).is_some() {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            hi
        };
        let Some(nodes) = try_after(hi) else { return };
        let earliest_start = ending[..hi].iter().filter_map(|(_, _, _, end)| *end).fold(now, u64::max);
        self.add_reservation(Reservation { job: job.id, nodes, kind: ReservationKind::Backfill { earliest_start } });
    }
}
