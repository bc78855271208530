//! Phase 1: the evictions decided by earlier cycles. Those whose preemptor still waits are
//! kept, and their preemptors (privileged) are considered first; the rest are cancelled, unless
//! their victim has left already. A shrink in flight names the replicas its victim gives back;
//! they are found among the victim's held replicas.

use std::collections::BTreeMap;

use super::{Cycle, Decision, PlacedReplica};
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
                    if e.moved {
                        self.moving.insert(e.victim);
                    }
                    if e.shrink {
                        let slots = self.slots_of(e.victim, &e.replicas);
                        self.cut.insert(e.victim, slots);
                    }
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
        preemptors.sort_by_key(|j| j.queue_order());
        for p in preemptors {
            let old = waiting.remove(&p.id).unwrap_or_default();
            self.consider(p, old);
        }
    }

    /// The indices among `victim`'s held replicas of `replicas` (each matched once; those it
    /// no longer holds are left out).
    fn slots_of(&self, victim: JobId, replicas: &[PlacedReplica]) -> Vec<u32> {
        let held = &self.held[&victim].replicas;
        let mut slots: Vec<u32> = Vec::new();
        for r in replicas {
            if let Some(i) = (0..held.len() as u32).find(|&i| held[i as usize] == *r && !slots.contains(&i)) {
                slots.push(i);
            }
        }
        slots
    }
}
