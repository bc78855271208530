//! The checkpoint handshake, for a job that declares `checkpoint` (`JobSpec::checkpoint`).
//! Before an eviction (the control plane's, a suspension, a local preemption) or a shrink
//! stops its replicas, they are asked to write a checkpoint; once every replica asked has
//! acknowledged, the checkpoint is reported (a job-level report carrying its reference, which
//! the control plane records and hands to the next run) and they are stopped at once, without
//! waiting out the grace period. A replica that does not answer within the grace is stopped at
//! the deadline like any other, and no checkpoint is reported. Pure.

use serde::{Deserialize, Serialize};

use super::{Book, Effect, JobRecord, ReplicaId, Step, Transition};
use crate::backend::ReplicaKey;

/// One request for a checkpoint and the acknowledgements so far.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointRound {
    /// The replicas asked; each must acknowledge.
    pub replicas: Vec<ReplicaId>,
    pub asked_at_ms: i64,
    /// The references acknowledged so far, by replica.
    pub acked: Vec<(ReplicaId, String)>,
}

impl JobRecord {
    /// The replicas a pending stop will stop, when they should checkpoint first: the job
    /// declares it, a stop is pending (not yet carried out) and nothing was asked for it yet.
    fn checkpoint_due(&self) -> Option<Vec<ReplicaId>> {
        if self.spec.checkpoint.is_none() || self.checkpoint.is_some() {
            return None;
        }
        let live = |id: &ReplicaId| self.replicas.get(id).is_some_and(|r| !r.state.is_terminal());
        let stopping: Vec<ReplicaId> = match (&self.eviction, &self.shrink) {
            (Some(e), _) if !e.stopped => self.live_replicas(),
            (_, Some(s)) if !s.stopped => s.replicas.iter().filter(|id| live(id)).cloned().collect(),
            _ => return None,
        };
        (!stopping.is_empty()).then_some(stopping)
    }

    /// Asks for the checkpoint of a pending stop, if one is due.
    pub fn ask_checkpoint(&mut self, now_ms: i64) -> Vec<Effect> {
        let Some(replicas) = self.checkpoint_due() else { return Vec::new() };
        self.checkpoint = Some(CheckpointRound { replicas: replicas.clone(), asked_at_ms: now_ms, acked: Vec::new() });
        vec![Effect::Checkpoint { replicas }]
    }

    /// Replica `id` acknowledged its checkpoint `reference`. Once every replica asked has, the
    /// checkpoint is reported (the first replica's reference: the lowest task and index) and
    /// the stop is carried out now. Nothing happens for a replica not asked, or once the stop
    /// was carried out (its deadline passed first).
    pub fn checkpoint_written(&mut self, id: &ReplicaId, reference: String) -> (Vec<Transition>, Vec<Effect>) {
        let pending =
            self.eviction.as_ref().is_some_and(|e| !e.stopped) || self.shrink.as_ref().is_some_and(|s| !s.stopped);
        let Some(round) = self.checkpoint.as_mut().filter(|r| pending && r.replicas.contains(id)) else {
            return (Vec::new(), Vec::new());
        };
        round.acked.retain(|(r, _)| r != id);
        round.acked.push((id.clone(), reference));
        if !round.replicas.iter().all(|r| round.acked.iter().any(|(a, _)| a == r)) {
            return (Vec::new(), Vec::new());
        }
        round.acked.sort();
        let reference = round.acked[0].1.clone();
        let written = Transition {
            reason: Some(format!("checkpoint written: {reference}")),
            checkpoint: Some(reference),
            ..Transition::job(self.state, None)
        };
        let (mut transitions, effects) = if self.eviction.as_ref().is_some_and(|e| !e.stopped) {
            self.evict_now()
        } else {
            (Vec::new(), self.shrink_now())
        };
        transitions.insert(0, written);
        (transitions, effects)
    }
}

impl Book {
    /// The backend saw replica `key` (under `epoch`) acknowledge its checkpoint.
    pub fn checkpointed(&mut self, key: &ReplicaKey, epoch: u64, reference: String, now_ms: i64) -> Vec<Step> {
        let Some(rec) = self.jobs.get_mut(&key.job).filter(|r| r.epoch == epoch) else { return Vec::new() };
        let (transitions, effects) = rec.checkpoint_written(&(key.task.clone(), key.replica), reference);
        let mut steps: Vec<Step> = Step::report(key.job, epoch, transitions, now_ms).into_iter().collect();
        steps.extend(Step::effects(key.job, effects));
        steps
    }
}

#[cfg(test)]
mod tests {
    use grus_protocol::wire::{CheckpointSpec, JobSpec, State};

    use super::*;
    use crate::book::record::tests::{spec, started};

    const PLACE: std::time::Duration = std::time::Duration::from_secs(60);

    fn checkpointing(replicas: u32) -> JobRecord {
        let mut s = JobSpec { id: 1, ..spec(&[("main", replicas)], vec![]) };
        s.checkpoint = Some(CheckpointSpec::default());
        started(s)
    }

    fn key(replica: u32) -> ReplicaKey {
        ReplicaKey { job: 1, task: "main".into(), replica }
    }

    fn effects(steps: &[Step]) -> Vec<Effect> {
        steps
            .iter()
            .flat_map(|s| if let Step::Effects { effects, .. } = s { effects.clone() } else { vec![] })
            .collect()
    }

    fn reports(steps: &[Step]) -> Vec<Transition> {
        steps
            .iter()
            .flat_map(|s| if let Step::Report { transitions, .. } = s { transitions.clone() } else { vec![] })
            .collect()
    }

    #[test]
    fn an_eviction_asks_for_a_checkpoint_once_and_stops_as_soon_as_every_replica_acknowledged() {
        let mut book = Book::default();
        let mut rec = checkpointing(2);
        rec.begin_eviction(1_000, 30, None, "evicted".into());
        book.jobs.insert(1, rec);
        let steps = book.deadlines(1_000, PLACE);
        assert_eq!(effects(&steps), [Effect::Checkpoint { replicas: vec![("main".into(), 0), ("main".into(), 1)] }]);
        assert!(book.deadlines(1_100, PLACE).is_empty(), "asked once");

        assert!(book.checkpointed(&key(1), 1, "s3://ckpt/1-b".into(), 2_000).is_empty(), "one of two");
        assert!(book.checkpointed(&key(0), 2, "stale".into(), 2_000).is_empty(), "another epoch");
        let steps = book.checkpointed(&key(0), 1, "s3://ckpt/1-a".into(), 2_500);
        let written = &reports(&steps)[0];
        assert_eq!((written.state, written.checkpoint.as_deref()), (State::Preempting, Some("s3://ckpt/1-a")));
        assert_eq!(written.reason.as_deref(), Some("checkpoint written: s3://ckpt/1-a"));
        assert_eq!(
            effects(&steps),
            [Effect::Stop { replicas: vec![("main".into(), 0), ("main".into(), 1)], grace_ms: 0 }],
            "stopped at once, long before the deadline at 31s"
        );
        assert!(book.deadlines(31_000, PLACE).is_empty(), "stopped once");
    }

    #[test]
    fn a_resumed_run_finds_its_checkpoint_in_its_environment() {
        let mut rec = checkpointing(1);
        assert!(!rec.launch(&("main".into(), 0), "n1".into(), vec![]).task.env.contains_key("GRUS_CHECKPOINT_REF"));
        rec.spec.checkpoint.as_mut().unwrap().resume_from = Some("s3://ckpt/1".into());
        let launch = rec.launch(&("main".into(), 0), "n1".into(), vec![]);
        assert_eq!(launch.task.env.get("GRUS_CHECKPOINT_REF").map(String::as_str), Some("s3://ckpt/1"));
    }

    #[test]
    fn a_replica_that_never_acknowledges_is_stopped_at_the_deadline_without_a_checkpoint() {
        let mut book = Book::default();
        let mut rec = checkpointing(1);
        rec.begin_eviction(0, 10, None, "evicted".into());
        book.jobs.insert(1, rec);
        book.deadlines(0, PLACE);
        let steps = book.deadlines(10_000, PLACE);
        assert_eq!(effects(&steps), [Effect::Stop { replicas: vec![("main".into(), 0)], grace_ms: 0 }]);
        assert!(reports(&steps).iter().all(|t| t.checkpoint.is_none()));
        assert!(book.checkpointed(&key(0), 1, "late".into(), 10_500).is_empty(), "too late: already stopped");
    }

    #[test]
    fn no_checkpoint_is_asked_of_a_job_that_does_not_declare_it_or_when_the_grace_is_zero() {
        let mut book = Book::default();
        let mut plain = started(JobSpec { id: 1, ..spec(&[("main", 1)], vec![]) });
        plain.begin_eviction(0, 30, None, "evicted".into());
        book.jobs.insert(1, plain);
        assert!(book.deadlines(0, PLACE).is_empty());

        let mut rec = checkpointing(1);
        rec.begin_eviction(0, 0, None, "evicted".into());
        book.jobs.insert(1, rec);
        let stopped = book.deadlines(0, PLACE);
        assert!(!stopped.is_empty());
        assert!(book.deadlines(0, PLACE).is_empty(), "stopped before anything was asked");
    }

    #[test]
    fn a_shrink_asks_only_the_replicas_it_gives_back_and_a_cancelled_eviction_forgets_the_request() {
        let mut book = Book::default();
        let mut rec = checkpointing(3);
        rec.begin_shrink(vec![("main".into(), 2)], 0, 30, 9);
        book.jobs.insert(1, rec);
        assert_eq!(effects(&book.deadlines(0, PLACE)), [Effect::Checkpoint { replicas: vec![("main".into(), 2)] }]);
        let steps = book.checkpointed(&key(2), 1, "ref".into(), 100);
        assert_eq!(reports(&steps)[0].state, State::Running, "the job runs on");
        assert_eq!(effects(&steps), [Effect::Stop { replicas: vec![("main".into(), 2)], grace_ms: 0 }]);

        let mut rec = checkpointing(1);
        rec.begin_eviction(0, 30, Some(7), "for 7".into());
        book.jobs.insert(1, rec);
        book.deadlines(0, PLACE);
        book.jobs.get_mut(&1).unwrap().cancel_eviction();
        assert!(book.jobs[&1].checkpoint.is_none());
        assert!(book.checkpointed(&key(0), 1, "ref".into(), 100).is_empty());
    }
}
