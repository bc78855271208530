//! What the backend reports does to the book: a replica's phase, a launch that failed, and,
//! after a restart, the replicas the backend still runs and those it lost (the backend's view
//! wins). Pure: the agent hands in what it observed and carries out the steps, one
//! observation at a time, as they happened.

use std::collections::BTreeSet;

use grus_protocol::wire::{State, Termination};

use super::{Book, Effect, ReplicaId, Step};
use crate::backend::{ObservedReplica, ReplicaKey, ReplicaPhase};

/// What one observation asks of the agent.
#[derive(Debug, Default, PartialEq)]
pub struct Observed {
    pub steps: Vec<Step>,
    /// The record changed: the book must be saved and the cycle run again.
    pub changed: bool,
}

impl Book {
    /// A replica's phase as the backend reports it. A replica of a job the book does not hold
    /// under that epoch, still live, is stopped.
    pub fn observe(&mut self, obs: &ObservedReplica, now_ms: i64) -> Observed {
        let id: ReplicaId = (obs.key.task.clone(), obs.key.replica);
        match self.jobs.get_mut(&obs.key.job) {
            Some(rec) if rec.epoch == obs.epoch => {
                let (transitions, effects) = rec.observe(&id, &obs.phase, now_ms);
                let changed = !transitions.is_empty();
                let mut steps: Vec<Step> =
                    Step::report(obs.key.job, rec.epoch, transitions, now_ms).into_iter().collect();
                steps.extend(Step::effects(obs.key.job, effects));
                Observed { steps, changed }
            }
            _ if !obs.phase.is_terminal() => {
                tracing::info!(replica = %obs.key, epoch = obs.epoch, "stopping a replica of an unknown job or stale epoch");
                Observed { steps: vec![Step::StopUnknown { replica: obs.key.clone() }], changed: false }
            }
            _ => Observed::default(),
        }
    }

    /// The backend could not launch (or relaunch) replica `replica` of `job`: it failed.
    pub fn launch_failed(&mut self, job: u64, replica: &ReplicaId, reason: String, now_ms: i64) -> Vec<Step> {
        let Some(rec) = self.jobs.get_mut(&job) else { return Vec::new() };
        let (transitions, effects) =
            rec.observe(replica, &ReplicaPhase::ended(Termination::CannotStart, reason), now_ms);
        let mut steps: Vec<Step> = Step::report(job, rec.epoch, transitions, now_ms).into_iter().collect();
        steps.extend(Step::effects(job, effects));
        steps
    }

    /// After a restart, one replica the backend runs: adopted when it was launched but is not
    /// yet in the saved book (never launched twice), folded in when the book holds it, stopped
    /// when the book does not. Returns whether the book holds it, and the steps; the agent
    /// carries them out before the next replica, then asks for [`Book::reconcile_missing`].
    pub fn reconcile_observed(&mut self, obs: &ObservedReplica, now_ms: i64) -> (bool, Vec<Step>) {
        let id: ReplicaId = (obs.key.task.clone(), obs.key.replica);
        // The book's own: a live job's replica, or one an ended job is still stopping (its
        // grace runs on; stopping or failing it now would misreport how it ended).
        let known = self.jobs.get(&obs.key.job).is_some_and(|j| {
            j.epoch == obs.epoch && (!j.is_finished() || j.replicas.get(&id).is_some_and(|r| r.holds_capacity()))
        });
        let Some(job) = self.jobs.get_mut(&obs.key.job).filter(|_| known) else {
            if obs.phase.is_terminal() {
                return (false, Vec::new());
            }
            tracing::info!(replica = %obs.key, epoch = obs.epoch, "stopping a replica the book does not hold");
            return (false, vec![Step::StopUnknown { replica: obs.key.clone() }]);
        };
        if !obs.phase.is_terminal() {
            // Launched, so its placement was claimed in time before the restart.
            job.claimed = true;
        }
        let mut transitions = Vec::new();
        if !job.replicas.contains_key(&id) {
            transitions = job.placed(id.clone(), obs.node.clone(), obs.devices.clone(), now_ms);
        }
        let (more, effects) = job.observe(&id, &obs.phase, now_ms);
        transitions.extend(more);
        let mut steps: Vec<Step> = Step::report(obs.key.job, job.epoch, transitions, now_ms).into_iter().collect();
        steps.extend(Step::effects(obs.key.job, effects));
        (true, steps)
    }

    /// After a restart, the replicas the book holds that the backend does not run (`seen`: the
    /// ones it does): placed ones are launched again (the launch may never have reached the
    /// backend) once their job's placement is claimed (`claims`), running ones failed.
    pub fn reconcile_missing(&mut self, seen: &BTreeSet<ReplicaKey>, now_ms: i64) -> Vec<Step> {
        let missing: Vec<(u64, ReplicaId, State)> = self
            .jobs
            .iter()
            .flat_map(|(&j, rec)| {
                rec.replicas.iter().filter(|(_, r)| r.holds_capacity()).map(move |(id, r)| (j, id.clone(), r.state))
            })
            .filter(|(j, id, _)| !seen.contains(&ReplicaKey { job: *j, task: id.0.clone(), replica: id.1 }))
            .collect();
        let mut steps = Vec::new();
        for (job, id, state) in missing {
            if state == State::Placed && !self.jobs.get(&job).is_some_and(|j| j.claimed) {
                // Launched when its claim settles, in time.
                continue;
            }
            if state == State::Placed {
                steps.push(Step::Effects { job, effects: vec![Effect::Relaunch { replica: id }] });
            } else {
                steps.extend(self.launch_failed(job, &id, "lost while the agent was down".into(), now_ms));
            }
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use grus_protocol::wire::JobSpec;

    use super::*;
    use crate::book::record::tests::{spec, started};
    use crate::book::JobRecord;

    fn observed(job: u64, epoch: u64, replica: u32, phase: ReplicaPhase) -> ObservedReplica {
        ObservedReplica {
            key: ReplicaKey { job, task: "main".into(), replica },
            epoch,
            node: "n".into(),
            devices: vec![],
            phase,
        }
    }

    fn book_with(rec: JobRecord) -> Book {
        let mut book = Book::default();
        book.jobs.insert(rec.spec.id, rec);
        book
    }

    #[test]
    fn replicas_of_unknown_jobs_or_fenced_epochs_are_stopped_unless_they_ended() {
        let mut book = book_with(started(JobSpec { id: 1, ..spec(&[("main", 1)], vec![]) }));
        let stale = book.observe(&observed(1, 0, 0, ReplicaPhase::Running), 10);
        assert_eq!(stale.steps, [Step::StopUnknown { replica: observed(1, 0, 0, ReplicaPhase::Running).key }]);
        assert!(!stale.changed);
        assert_eq!(book.observe(&observed(9, 1, 0, ReplicaPhase::Succeeded), 10), Observed::default());
    }

    #[test]
    fn an_observation_of_a_held_replica_changes_the_record() {
        let mut book = book_with(started(JobSpec { id: 1, ..spec(&[("main", 1)], vec![]) }));
        let done = book.observe(&observed(1, 1, 0, ReplicaPhase::Succeeded), 10);
        assert!(done.changed);
        assert_eq!(book.jobs[&1].state, State::Succeeded);
        assert_eq!(book.observe(&observed(1, 1, 0, ReplicaPhase::Succeeded), 11), Observed::default(), "once");
    }

    #[test]
    fn after_a_restart_the_backends_view_wins() {
        // Job 1 had replica 0 running and replica 1 placed; job 2 ran replica 0.
        let mut one = JobRecord::new(JobSpec { id: 1, ..spec(&[("main", 3)], vec![]) }, 1, 0);
        one.placed(("main".into(), 0), "n".into(), vec![], 0);
        one.placed(("main".into(), 1), "n".into(), vec![], 0);
        one.observe(&("main".into(), 0), &ReplicaPhase::Running, 1);
        let mut book = book_with(one);
        book.jobs.insert(2, started(JobSpec { id: 2, ..spec(&[("main", 1)], vec![]) }));
        let mut seen = BTreeSet::new();
        let mut steps = Vec::new();
        for obs in [
            // Launched before the crash, not yet in the saved book: adopted.
            observed(1, 1, 2, ReplicaPhase::Running),
            // A replica of a job the book does not know.
            observed(7, 1, 0, ReplicaPhase::Running),
        ] {
            let (held, more) = book.reconcile_observed(&obs, 50);
            if held {
                seen.insert(obs.key.clone());
            }
            steps.extend(more);
        }
        assert_eq!(seen.len(), 1);
        steps.extend(book.reconcile_missing(&seen, 50));
        assert!(book.jobs[&1].replicas.contains_key(&("main".into(), 2)));
        assert!(steps.contains(&Step::StopUnknown { replica: observed(7, 1, 0, ReplicaPhase::Running).key }));
        assert!(
            steps.contains(&Step::Effects { job: 1, effects: vec![Effect::Relaunch { replica: ("main".into(), 1) }] })
        );
        // Job 1's running replica 0 and job 2's are gone: failed.
        assert_eq!(book.jobs[&2].state, State::Failed);
        assert_eq!(book.jobs[&1].replicas[&("main".into(), 0)].state, State::Failed);
    }
}
