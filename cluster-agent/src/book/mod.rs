//! The agent's book of jobs dispatched to this cluster, and the pure core that changes it.
//!
//! Every decision about a job is a function of the book: a command ([`commands`]), the
//! scheduling cycle's decisions ([`cycle`]), what the backend reports ([`observations`]) and
//! the passing of time ([`deadlines`]) and the claim of a placement ([`claims`]) each change the book and return [`Step`]s, the
//! transitions to report and the effects to carry out, in order. One job's rules are its
//! [`record`]. The agent loop only emits, saves, launches and acknowledges.
//!
//! The book is persisted in the state directory by [`journal`] (a snapshot and an append-only
//! journal of what changed since), durably before any command that changed it is acknowledged.
//! Replica phases are not the source of truth there: after a restart the backend's own view wins.

pub mod checkpoints;
pub mod claims;
pub mod commands;
pub mod cycle;
pub mod deadlines;
pub mod history;
pub mod journal;
pub mod observations;
pub mod record;
pub mod tracked;

use grus_protocol::wire::{QueueQuota, ShareHierarchy};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::backend::ReplicaKey;
pub use journal::{BookError, BookStore};
pub use record::{Effect, Eviction, JobRecord, ReplicaId, ReplicaRecord, Transition};
use tracked::Tracked;

/// Message ids remembered for idempotency (older ones are forgotten first).
const SEEN_MESSAGES: usize = 100_000;

/// One thing the agent carries out for a decision of the pure core, in the order given.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Report these transitions of `job` as JobState events under `epoch`, stamped `at` (the
    /// time of the decision, ms since the Unix epoch).
    Report { job: u64, epoch: u64, transitions: Vec<Transition>, at: i64 },
    /// Carry out these effects for `job` (stop replicas, relaunch one).
    Effects { job: u64, effects: Vec<Effect> },
    /// Stop a replica the book does not hold (an unknown job, a fenced-off epoch) at once.
    StopUnknown { replica: ReplicaKey },
    /// Tell the control plane everything (Hello, Inventory, Capacity, a Snapshot of every job).
    Announce,
    /// Read a replica's output and answer on the request's key (`Command::ReadLogs`).
    ReadLogs { request: String, job: u64, query: grus_protocol::logs::LogQuery },
}

impl Step {
    /// A report, or nothing when there is no transition.
    fn report(job: u64, epoch: u64, transitions: Vec<Transition>, at: i64) -> Option<Step> {
        (!transitions.is_empty()).then_some(Step::Report { job, epoch, transitions, at })
    }

    /// Effects, or nothing when there are none.
    fn effects(job: u64, effects: Vec<Effect>) -> Option<Step> {
        (!effects.is_empty()).then_some(Step::Effects { job, effects })
    }
}

/// Everything the agent must not lose across a restart.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Book {
    pub jobs: Tracked<JobRecord>,
    /// Highest epoch seen per job, including jobs already forgotten (fencing survives them).
    pub epochs: Tracked<u64>,
    seen: VecDeque<String>,
    #[serde(skip)]
    seen_set: BTreeSet<String>,
    /// How many of the newest `seen` ids were remembered since the last save.
    #[serde(skip)]
    seen_unsaved: usize,
    /// The book was replaced whole ([`Book::repin`]): the next save rewrites it.
    #[serde(skip)]
    replaced: bool,
    /// The journal generation this snapshot starts ([`journal`]).
    #[serde(default)]
    journal_generation: u64,
    /// Local preemptions in flight: victim -> (preemptor, decided at ms). Kept after the victim
    /// is gone until the preemptor starts, so the scheduler keeps the preemptor first in line.
    #[serde(default)]
    pub evictions: BTreeMap<u64, (u64, i64)>,
    /// Moves decided (consolidation) in the last hour, (victim, decided at ms): the rate limit
    /// counts them, and an eviction in flight is a move when its victim and time are here.
    #[serde(default)]
    pub moves: Vec<(u64, i64)>,
    /// Nodes the control plane cordoned (`CordonNodes`): nothing new is placed there.
    #[serde(default)]
    pub cordoned_nodes: BTreeSet<String>,
    pub queue_weights: BTreeMap<String, f64>,
    pub queue_quotas: BTreeMap<String, QueueQuota>,
    /// Per queue, its over-quota weight in node pools where it differs (SetQueues).
    #[serde(default)]
    pub queue_pool_weights: BTreeMap<String, BTreeMap<String, f64>>,
    /// Tenants and projects above the queues (SetQueues); none: the queues are one level.
    #[serde(default)]
    pub queue_hierarchy: Option<ShareHierarchy>,
    /// Each queue's decayed past usage, by queue key ([`history`]); empty unless the agent
    /// counts history in fair share.
    #[serde(default)]
    pub usage_history: BTreeMap<String, history::QueueHistory>,
    /// Events emitted but perhaps not yet published when the book was saved, encoded: they are
    /// published again after a restart (at least once; the ids are kept, so the api drops
    /// copies). Without them a crash between saving and publishing would lose, for instance,
    /// the end of a job the book has already forgotten.
    #[serde(default)]
    pub unpublished: Vec<String>,
    /// The control plane this agent serves (its incarnation): pinned by the first command that
    /// names one, or by the operator (`--control-plane`). Commands of another are refused.
    #[serde(default)]
    pub control_plane: Option<String>,
    /// Capacity kept for jobs the control plane evicted work here for (`Evict { hold }`), by
    /// the job it is kept for: until that job starts here or the hold expires.
    #[serde(default)]
    pub holds: BTreeMap<u64, NodeHold>,
    /// When each ended job was first found ended, ms: it stays in the book, and in Snapshots,
    /// for [`ENDED_KEPT_MS`] (the newest [`ENDED_KEPT`] at most), so that the Snapshot sent
    /// after Redis lost events the agent had already published (a restart without
    /// persistence) still tells how the job ended, instead of not listing it (which fails it).
    #[serde(default)]
    pub ended: BTreeMap<u64, i64>,
}

/// How long an ended job stays in the book ([`Book::ended`]).
pub const ENDED_KEPT_MS: i64 = 60_000;
/// The most ended jobs the book keeps (the oldest are forgotten first).
pub const ENDED_KEPT: usize = 512;

/// Nodes kept for a job that is on its way ([`Book::holds`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeHold {
    pub nodes: BTreeSet<String>,
    /// Ms since the Unix epoch.
    pub until_ms: i64,
}

/// The window of consolidation's rate limit ([`Book::moves`]).
pub const MOVES_WINDOW_MS: i64 = 3_600_000;

/// The longest an eviction's hold lasts, whatever the command asks.
pub const MAX_HOLD_MS: i64 = 3_600_000;

/// What changed in the book since the last save ([`Book::take_changes`]).
#[derive(Debug, Default)]
pub struct BookChanges {
    /// Jobs inserted, changed or forgotten.
    pub jobs: BTreeSet<u64>,
    pub epochs: BTreeSet<u64>,
    /// Message ids remembered, oldest first.
    pub seen: Vec<String>,
    /// The book was replaced whole: only a full rewrite records it.
    pub replaced: bool,
}

impl Book {
    /// Whether a command from control plane `from` may be applied: one that names none
    /// (an older api) may; the first that names one pins the book to it; another is refused,
    /// with the reason. Job ids and epochs mean nothing across control planes (a replaced
    /// database numbers its jobs from 1 again), so this agent serves one.
    pub fn admit_sender(&mut self, from: Option<&str>) -> Result<(), String> {
        match (from, self.control_plane.as_deref()) {
            (None, _) => Ok(()),
            (Some(from), Some(ours)) if from == ours => Ok(()),
            (Some(from), None) => {
                self.control_plane = Some(from.to_owned());
                Ok(())
            }
            (Some(from), Some(ours)) => Err(format!(
                "command from control plane {from}; this agent serves {ours} (re-pin it with --control-plane {from} \
                 if that control plane replaced the old one)"
            )),
        }
    }

    /// The operator pins this agent to another control plane: what the old one dispatched is
    /// forgotten (its replicas, no longer in the book, are stopped by the rebuild that follows)
    /// and nothing of it is reported to the new one.
    pub fn repin(&mut self, incarnation: &str) {
        if self.control_plane.as_deref() == Some(incarnation) {
            return;
        }
        tracing::warn!(from = ?self.control_plane, to = incarnation, "re-pinned to another control plane; its predecessor's jobs are dropped");
        let journal_generation = self.journal_generation;
        *self =
            Book { control_plane: Some(incarnation.to_owned()), replaced: true, journal_generation, ..Book::default() };
    }

    /// True if this message id was already applied; otherwise remembers it.
    pub fn seen_before(&mut self, id: &str) -> bool {
        if self.seen_set.contains(id) {
            return true;
        }
        self.remember(id.to_owned());
        self.seen_unsaved = (self.seen_unsaved + 1).min(SEEN_MESSAGES);
        false
    }

    fn remember(&mut self, id: String) {
        if !self.seen_set.insert(id.clone()) {
            return;
        }
        self.seen.push_back(id);
        while self.seen.len() > SEEN_MESSAGES {
            if let Some(old) = self.seen.pop_front() {
                self.seen_set.remove(&old);
            }
        }
    }

    /// What changed since the last call (or since the book was read): what a save records.
    pub fn take_changes(&mut self) -> BookChanges {
        let seen_unsaved = std::mem::take(&mut self.seen_unsaved).min(self.seen.len());
        BookChanges {
            jobs: self.jobs.take_changed(),
            epochs: self.epochs.take_changed(),
            seen: self.seen.iter().skip(self.seen.len() - seen_unsaved).cloned().collect(),
            replaced: std::mem::take(&mut self.replaced),
        }
    }

    /// Is `epoch` older than what this agent already holds for `job`?
    pub fn is_stale(&self, job: u64, epoch: u64) -> bool {
        self.epochs.get(&job).is_some_and(|&known| epoch < known)
    }

    /// Jobs that ended and hold nothing any more, kept for [`ENDED_KEPT_MS`] since they were
    /// first found ended (or beyond the newest [`ENDED_KEPT`]): the book may forget them.
    pub fn finished_jobs(&mut self, now_ms: i64) -> Vec<u64> {
        let ended: Vec<u64> = self
            .jobs
            .iter()
            .filter(|(_, j)| {
                (j.is_finished() || j.state == grus_protocol::wire::State::Rejected)
                    && j.replicas.values().all(|r| !r.holds_capacity())
            })
            .map(|(&id, _)| id)
            .collect();
        let mut by_age: Vec<(i64, u64)> =
            ended.iter().map(|&id| (*self.ended.entry(id).or_insert(now_ms), id)).collect();
        by_age.sort_unstable();
        let excess = by_age.len().saturating_sub(ENDED_KEPT);
        let forget = by_age.iter().enumerate().filter(|(i, (at, _))| *i < excess || now_ms - *at >= ENDED_KEPT_MS);
        forget.map(|(_, (_, id))| *id).collect()
    }

    /// Forgets a job (its epoch stays, for fencing).
    pub fn forget(&mut self, job: u64) {
        self.jobs.remove(&job);
        self.ended.remove(&job);
    }

    /// Jobs not placed yet.
    pub fn pending_jobs(&self) -> usize {
        self.jobs.values().filter(|j| j.is_pending()).count()
    }

    /// The scheduler's queues, as the last SetQueues described them.
    pub fn queue_map(&self) -> Result<crate::convert::QueueMap, grus_scheduler::queue::QueueError> {
        crate::convert::queues_of(
            &self.queue_weights,
            &self.queue_quotas,
            &self.queue_pool_weights,
            self.queue_hierarchy.as_ref(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::record::tests::{spec, started};
    use grus_protocol::wire::State;

    #[test]
    fn an_ended_job_stays_in_the_book_and_its_snapshot_for_a_while() {
        // The soak's long run: Redis, killed, lost the events of jobs that had just ended; the
        // agent had forgotten them, so its Snapshot could not say how they ended.
        let mut b = Book::default();
        let mut ended = started(spec(&[("main", 1)], vec![]));
        ended.state = State::Succeeded;
        ended.replicas.values_mut().for_each(|r| r.state = State::Succeeded);
        b.jobs.insert(1, ended.clone());
        assert!(b.finished_jobs(1_000).is_empty(), "kept");
        assert_eq!(b.jobs[&1].snapshot().state, State::Succeeded);
        assert!(b.finished_jobs(1_000 + ENDED_KEPT_MS - 1).is_empty());
        assert_eq!(b.finished_jobs(1_000 + ENDED_KEPT_MS), [1]);
        b.forget(1);
        assert!(b.ended.is_empty());
        // Never more than ENDED_KEPT: the oldest go first.
        for id in 0..(ENDED_KEPT as u64 + 2) {
            b.jobs.insert(id, ended.clone());
            b.finished_jobs(id as i64);
        }
        assert_eq!(b.finished_jobs(100), [0, 1]);
    }

    #[test]
    fn the_first_control_plane_pins_the_book_and_others_are_refused() {
        let mut b = Book::default();
        assert_eq!(b.admit_sender(None), Ok(()), "an older api names none");
        assert_eq!(b.control_plane, None);
        assert_eq!(b.admit_sender(Some("cp-a")), Ok(()));
        assert_eq!(b.control_plane.as_deref(), Some("cp-a"));
        assert_eq!(b.admit_sender(Some("cp-a")), Ok(()));
        let refused = b.admit_sender(Some("cp-b")).unwrap_err();
        assert!(refused.contains("cp-b") && refused.contains("serves cp-a"), "{refused}");
        assert_eq!(b.control_plane.as_deref(), Some("cp-a"), "a refusal changes nothing");
    }

    #[test]
    fn a_repin_forgets_the_old_control_planes_jobs_and_fences() {
        let mut b = Book { control_plane: Some("cp-a".into()), ..Book::default() };
        b.jobs.insert(7, started(spec(&[("main", 1)], vec![])));
        b.epochs.insert(7, 3);
        assert!(!b.seen_before("dispatch-7-3"));
        b.repin("cp-a");
        assert!(b.jobs.contains_key(&7), "the same control plane: nothing changes");
        b.repin("cp-b");
        assert!(b.jobs.is_empty() && b.epochs.is_empty());
        assert!(!b.seen_before("dispatch-7-3"), "the new life's job 7 epoch 3 is a new dispatch");
        assert_eq!(b.control_plane.as_deref(), Some("cp-b"));
    }
}
