//! Phase 1: the evictions decided by earlier cycles. Those whose preemptor still waits are
//! kept, and their preemptors (privileged) are considered first; the rest are cancelled, unless
//! their victim has left already.

use std::collections::BTreeMap;

use super::{Cycle, Decision};
use crate::job::{Job, JobId};

impl<'a> Cycle<'a> {
    pub(super) fn settle_evictions(&mut self, pending: &BTreeMap<JobId, &'a Job>) {
        let input = self.input;
        let mut waiting: BTreeMap<JobId, Vec<JobId>> = BTreeMap::new();
        let mut evictions = input.evictions.clone();
        evictions.sort_by_key(|e| (e.preemptor, e.victim, e.since));
        for e in &evictions {
            let victim_holds = self.held.contains_key(&e.victim);
            if pending.contains_key(&e.preemptor) {
                let victims = waiting.entry(e.preemptor).or_default();
                if victim_holds && !victims.contains(&e.victim) {
                    victims.push(e.victim);
                    self.evicting.insert(e.victim, e.preemptor);
                }
            } else if victim_holds && !e.victim_left {
                self.decisions.push(Decision::CancelEviction { job: e.victim, preemptor: e.preemptor });
            }
        }
        // The input's order must not matter.
        for victims in waiting.values_mut() {
            victims.sort_unstable();
        }
        let mut preemptors: Vec<&Job> = waiting.keys().map(|id| pending[id]).collect();
        preemptors.sort_by_key(|j| (std::cmp::Reverse(j.priority), j.submitted_at, j.id));
        for p in preemptors {
            let old = waiting.remove(&p.id).unwrap_or_default();
            self.consider(p, old);
        }
    }
}
