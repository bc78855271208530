//! What the passing of time does to the book: an eviction's grace runs out, a job runs past
//! its max runtime, a job waits past the place deadline. Pure, given `now`.

use std::time::Duration;

use grus_protocol::wire::State;

use super::{Book, Step};

impl Book {
    /// Every deadline passed at `now_ms`: the steps to carry out, job by job. Each passed
    /// deadline gives at least one step (and changed the book); none passed, none.
    /// `place_deadline`: how long a job may wait to be placed here before it is rejected.
    pub fn deadlines(&mut self, now_ms: i64, place_deadline: Duration) -> Vec<Step> {
        let mut steps = Vec::new();
        for (&id, rec) in self.jobs.iter_mut() {
            let (transitions, effects) = if rec.eviction.as_ref().is_some_and(|e| e.deadline_ms <= now_ms && !e.stopped)
            {
                rec.evict_now()
            } else if rec.state == State::Running
                && rec.spec.max_runtime_s.zip(rec.started_at_ms).is_some_and(|(max, t)| now_ms - t >= max as i64 * 1000)
            {
                rec.timed_out()
            } else if rec.is_pending()
                && now_ms - rec.received_at_ms >= place_deadline.as_millis() as i64
                && !rec.privileged
            {
                (rec.reject_unplaced(place_deadline), Vec::new())
            } else {
                continue;
            };
            steps.extend(Step::report(id, rec.epoch, transitions, now_ms));
            steps.extend(Step::effects(id, effects));
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use grus_protocol::wire::JobSpec;

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
    }
}
