//! The claim of a dispatch: nothing of a job is launched until the control plane is known to
//! hold its placement as in time (DESIGN.md invariant 2). The control plane gives a dispatch up
//! at its answer deadline (`Command::Dispatch::answer_by_ms`) unless the job-level `Scheduled`
//! report of its placement was appended to the event stream before; Redis stamps that report
//! with its entry id, and both sides judge it by that same time (the api in its ingestion
//! rules, `Decision::Late`). In time, the placed replicas launch; late, the control plane has
//! given the job away (or will, the moment it reads the report), so it is given back here
//! unlaunched. A paused or partitioned agent therefore never starts a job twice.

use grus_protocol::wire::State;

use super::{Book, Effect, Step};

/// How long past the answer deadline (the agent's clock) a placement may still wait for its
/// report to be appended (Redis away) before it is given back: by then the report, whenever it
/// is appended, is late on Redis's clock too.
pub const CLAIM_GRACE_MS: i64 = 30_000;

impl Book {
    /// The claim of `job` under `epoch` (its job-level `Scheduled` report) was appended at
    /// `appended_ms`, Redis's clock: in time, its placed replicas launch; late, the job is given
    /// back. Nothing for a job not awaiting a claim under that epoch.
    pub fn settle_claim(&mut self, job: u64, epoch: u64, appended_ms: i64, now_ms: i64) -> Vec<Step> {
        let Some(rec) = self.jobs.get_mut(&job) else { return Vec::new() };
        if rec.epoch != epoch || rec.claimed || rec.state != State::Scheduled {
            return Vec::new();
        }
        match rec.answer_by_ms {
            Some(by) if appended_ms >= by => {
                let late = appended_ms - by;
                let why = format!("placed {late} ms after the dispatch's answer deadline; given back unlaunched");
                tracing::warn!(job, epoch, late_ms = late, "a placement missed its answer deadline");
                Step::report(job, epoch, rec.give_back(why), now_ms).into_iter().collect()
            }
            _ => {
                rec.claimed = true;
                let placed = rec.replicas.iter().filter(|(_, r)| r.state == State::Placed);
                let launches = placed.map(|(id, _)| Effect::Relaunch { replica: id.clone() }).collect();
                Step::effects(job, launches).into_iter().collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use grus_protocol::wire::JobSpec;

    use super::*;
    use crate::book::record::tests::spec;
    use crate::book::{JobRecord, Transition};

    const BY: i64 = 50_000;

    /// A book holding job 1 (two replicas) dispatched under epoch 3 with the answer deadline
    /// `BY`, placed but not claimed.
    fn placed() -> Book {
        let mut book = Book::default();
        let mut rec = JobRecord::new(JobSpec { id: 1, ..spec(&[("main", 2)], vec![]) }, 3, 0).answer_by(Some(BY));
        for node in ["n1", "n2"] {
            rec.place(0, node.into(), vec![], 10);
        }
        assert_eq!(rec.state, State::Scheduled);
        book.jobs.insert(1, rec);
        book
    }

    #[test]
    fn a_placement_claimed_in_time_launches_its_replicas_once() {
        let mut book = placed();
        assert!(!book.jobs[&1].claimed && book.jobs[&1].snapshot().state == State::Dispatched);
        let steps = book.settle_claim(1, 3, BY - 1, BY);
        let relaunch = |i| Effect::Relaunch { replica: ("main".into(), i) };
        assert_eq!(steps, [Step::Effects { job: 1, effects: vec![relaunch(0), relaunch(1)] }]);
        assert!(book.jobs[&1].claimed);
        assert_eq!(book.jobs[&1].snapshot().state, State::Scheduled);
        assert!(book.settle_claim(1, 3, BY - 1, BY).is_empty(), "settled once");
    }

    #[test]
    fn a_job_given_away_while_its_agent_was_paused_is_given_back_unlaunched() {
        // The chaos soak's seed 1795642560713114230: the agent, paused with a dispatch in hand,
        // placed it on waking after the control plane had timed it out, and launched it.
        let mut book = placed();
        let steps = book.settle_claim(1, 3, BY, BY + 20_000);
        let Step::Report { transitions, epoch: 3, .. } = &steps[0] else { panic!("{steps:?}") };
        assert_eq!(transitions.len(), 1);
        let Transition { state, reason, .. } = &transitions[0];
        assert_eq!(*state, State::Rejected);
        assert!(reason.as_deref().is_some_and(|r| r.contains("answer deadline")), "{reason:?}");
        assert!(!steps.iter().any(|s| matches!(s, Step::Effects { .. })), "nothing launched: {steps:?}");
        assert!(book.jobs[&1].replicas.values().all(|r| !r.holds_capacity()), "its nodes are free again");
        assert!(book.jobs[&1].state == State::Rejected && book.jobs[&1].replicas.is_empty());
    }

    #[test]
    fn claims_of_other_epochs_or_claimed_jobs_change_nothing() {
        let mut book = placed();
        assert!(book.settle_claim(1, 2, 0, 0).is_empty());
        assert!(book.settle_claim(9, 3, 0, 0).is_empty());
        book.jobs.get_mut(&1).unwrap().claimed = true;
        assert!(book.settle_claim(1, 3, BY + 1, BY + 1).is_empty());
    }
}
