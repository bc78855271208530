//! What the passing of time does to the book: an eviction's or a shrink's grace runs out, a job runs past
//! its max runtime, a job waits past the place deadline or its dispatch's answer deadline, a
//! placement cannot be claimed in time; and a pending stop of a job that checkpoints asks for its
//! checkpoint (`checkpoints.rs`) while its grace runs. Pure, given `now`.

use std::time::Duration;

use grus_protocol::wire::State;

use super::claims::CLAIM_GRACE_MS;
use super::{Book, Step};

impl Book {
    /// Every deadline passed at `now_ms`: the steps to carry out, job by job. Each passed
    /// deadline changes the book (and gives a step unless there is nothing left to stop);
    /// none passed, nothing changes.
    /// `place_deadline`: how long a job may wait to be placed here before it is rejected.
    pub fn deadlines(&mut self, now_ms: i64, place_deadline: Duration) -> Vec<Step> {
        let mut steps = Vec::new();
        self.jobs.update_each(|id, rec| {
            let (transitions, effects) = if rec.eviction.as_ref().is_some_and(|e| e.deadline_ms <= now_ms && !e.stopped)
            {
                rec.evict_now()
            } else if rec.shrink.as_ref().is_some_and(|s| s.deadline_ms <= now_ms && !s.stopped) {
                (Vec::new(), rec.shrink_now())
            } else if rec.state == State::Running
                && rec.spec.max_runtime_s.zip(rec.started_at_ms).is_some_and(|(max, t)| now_ms - t >= max as i64 * 1000)
            {
                rec.timed_out()
            } else if rec.is_pending() && rec.answer_by_ms.is_some_and(|by| now_ms >= by) {
                // The control plane gives the dispatch up now, preemptor or not.
                let why = rec.unplaced_reason.clone().unwrap_or_else(|| "no room".into());
                (rec.give_back(format!("not placed before the dispatch's answer deadline: {why}")), Vec::new())
            } else if rec.is_pending()
                && now_ms - rec.received_at_ms >= place_deadline.as_millis() as i64
                && !rec.privileged
            {
                (rec.reject_unplaced(place_deadline), Vec::new())
            } else if !rec.claimed
                && rec.state == State::Scheduled
                && rec.answer_by_ms.is_some_and(|by| now_ms >= by.saturating_add(CLAIM_GRACE_MS))
            {
                let why = "its placement could not be reported before the dispatch's answer deadline".to_owned();
                (rec.give_back(why), Vec::new())
            } else {
                // No deadline passed: a stop still in its grace asks for its checkpoint once.
                let asked = rec.ask_checkpoint(now_ms);
                let changed = !asked.is_empty();
                steps.extend(Step::effects(id, asked));
                return changed;
            };
            steps.extend(Step::report(id, rec.epoch, transitions, now_ms));
            steps.extend(Step::effects(id, effects));
            true
        });
        steps
    }
}

#[cfg(test)]
mod tests {
    use grus_protocol::wire::{JobSpec, ReplicaExit, Termination};

    use super::*;
    use crate::backend::ReplicaPhase;
    use crate::book::record::tests::{spec, started};
    use crate::book::{Effect, JobRecord};

    const PLACE: Duration = Duration::from_secs(60);

    fn states(steps: &[Step]) -> Vec<(State, Option<String>)> {
        steps
            .iter()
            .flat_map(|s| match s {
                Step::Report { transitions, .. } => transitions.iter().map(|t| (t.state, t.reason.clone())).collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    #[test]
    fn a_job_not_placed_in_time_is_rejected_with_why_it_waited_unless_it_preempts() {
        let mut book = Book::default();
        let mut rec = JobRecord::new(JobSpec { id: 1, ..spec(&[("main", 1)], vec![]) }, 1, 0);
        rec.note_unplaced("no node has 8 free GPUs".into());
        book.jobs.insert(1, rec.clone());
        assert!(book.deadlines(59_999, PLACE).is_empty());
        let steps = book.deadlines(60_000, PLACE);
        assert_eq!(states(&steps), [(State::Rejected, Some("not placed within 60s: no node has 8 free GPUs".into()))]);
        rec.privileged = true;
        book.jobs.insert(1, rec);
        assert!(book.deadlines(60_000, PLACE).is_empty(), "a waiting preemptor is exempt");
    }

    #[test]
    fn a_dispatch_past_its_answer_deadline_is_given_back_unplaced_or_unclaimed() {
        let mut book = Book::default();
        let rec = JobRecord::new(JobSpec { id: 1, ..spec(&[("main", 1)], vec![]) }, 1, 0).answer_by(Some(5_000));
        book.jobs.insert(1, JobRecord { privileged: true, ..rec.clone() });
        assert!(book.deadlines(4_999, PLACE).is_empty());
        let given_back = states(&book.deadlines(5_000, PLACE));
        assert_eq!(given_back.len(), 1);
        assert_eq!(given_back[0].0, State::Rejected, "even a waiting preemptor: the control plane gives it up");

        // Placed, its report not appended (Redis away): given back once the grace has passed too.
        let mut placed = rec;
        placed.place(0, "n1".into(), vec![], 10);
        book.jobs.insert(1, placed);
        assert!(book.deadlines(5_000 + CLAIM_GRACE_MS - 1, PLACE).is_empty());
        assert_eq!(states(&book.deadlines(5_000 + CLAIM_GRACE_MS, PLACE))[0].0, State::Rejected);
        assert!(book.jobs[&1].replicas.is_empty(), "never launched, so nothing to stop");
    }

    #[test]
    fn an_eviction_stops_the_replicas_at_its_deadline_and_ends_preempted_when_they_are_gone() {
        let mut book = Book::default();
        let mut rec = started(JobSpec { id: 1, ..spec(&[("main", 1)], vec![]) });
        rec.begin_eviction(1_000, 2, None, "evicted".into());
        book.jobs.insert(1, rec);
        assert!(book.deadlines(2_999, PLACE).is_empty());
        let steps = book.deadlines(3_000, PLACE);
        assert_eq!(
            steps[0],
            Step::Effects { job: 1, effects: vec![Effect::Stop { replicas: vec![("main".into(), 0)], grace_ms: 0 }] }
        );
        assert!(book.deadlines(3_001, PLACE).is_empty(), "stopped once");
        let (ts, _) = book.jobs.get_mut(&1).unwrap().observe(&("main".into(), 0), &ReplicaPhase::Stopped, 3_100);
        assert_eq!(ts.last().map(|t| t.state), Some(State::Preempted));
    }

    #[test]
    fn a_job_past_its_max_runtime_is_aborted() {
        let mut book = Book::default();
        let mut rec = started(JobSpec { id: 1, max_runtime_s: Some(10), ..spec(&[("main", 1)], vec![]) });
        rec.started_at_ms = Some(5_000);
        book.jobs.insert(1, rec);
        assert!(book.deadlines(14_999, PLACE).is_empty());
        assert_eq!(states(&book.deadlines(15_000, PLACE)), [(State::Failed, Some("max runtime exceeded".into()))]);
        let (ts, _) = book.jobs.get_mut(&1).unwrap().observe(&("main".into(), 0), &ReplicaPhase::Stopped, 15_100);
        let exit = ts.iter().find(|t| t.replica == Some(0)).and_then(|t| t.exit);
        assert_eq!(
            exit,
            Some(ReplicaExit::new(None, Termination::DeadlineExceeded)),
            "its replicas say why they ended"
        );
    }
}
