//! whyPending stored once per job shape. Waiting jobs of one shape (demand, cluster selector,
//! excluded clusters: `Action::Wait::shape`) get the same reasons from the same cluster views,
//! and those reasons change whenever a cluster's free capacity does. So a round writes each
//! shape's latest reasons once (`why_pending_shapes`), and a waiting job's `why_pending` only
//! points at its shape (`{"shape": id}`), written when the job first waits or changes shape.
//! A capacity change costs one row per shape instead of a rewrite of the backlog (which took
//! 12 s for 87,000 jobs). Pure: the loop hands in the plan's reasons and stores what this
//! module says.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::views::{why_bad_spec, why_json};
use crate::allocator::Skipped;
use crate::db::dispatch::referenced_shape;

/// The shape of jobs whose stored spec does not decode.
pub const BAD_SPEC_SHAPE: &str = "!the stored spec does not decode";

/// Appended to the shape of waiting jobs inside their guarantee whose tenant may not preempt:
/// reclaim would evict borrowed work for them, their tenant's rights forbid it, and their
/// whyPending says so.
const NO_PREEMPTION: &str = "|tenant may not preempt";

/// What a job without the right to preempt is told, after the clusters' reasons.
pub const NO_PREEMPTION_NOTE: &str =
    "its tenant may not preempt other work, so it waits for free capacity instead of reclaiming borrowed work";

/// `shape`, for a job that may not preempt.
pub fn without_preemption(shape: &str) -> Arc<str> {
    format!("{shape}{NO_PREEMPTION}").into()
}

/// The stored whyPending of `shape` from its reasons.
fn why_of(shape: &str, skipped: Option<&Skipped>) -> Value {
    let Some(skipped) = skipped else { return why_bad_spec() };
    let mut why = why_json(skipped);
    if shape.ends_with(NO_PREEMPTION) {
        if let Some(Value::String(summary)) = why.get_mut("summary") {
            *summary = format!("{summary}; {NO_PREEMPTION_NOTE}");
        }
    }
    why
}

/// What a job's stored `why_pending` holds, as far as this loop knows.
#[derive(Clone, Debug, PartialEq)]
pub enum StoredWhy {
    /// As read with the job, not yet compared.
    Loaded(Option<Value>),
    /// A reference to this shape's row.
    Shape(i64),
}

/// One round's whyPending: each shape's latest reasons (`None`: a spec that does not decode),
/// and each waiting job's shape.
#[derive(Debug, Default)]
pub struct RoundWhys {
    latest: HashMap<Arc<str>, Option<Arc<Skipped>>>,
    jobs: Vec<(i64, Arc<str>)>,
}

impl RoundWhys {
    /// `job` waits, of `shape`, for `skipped`; a later job of the shape (in plan order, so
    /// nearer the round's final views) gives the shape its reasons.
    pub fn note(&mut self, job: i64, shape: Arc<str>, skipped: Option<Arc<Skipped>>) {
        self.latest.insert(shape.clone(), skipped);
        self.jobs.push((job, shape));
    }

    /// `jobs` do not wait after all (dispatched later in the round).
    pub fn forget(&mut self, jobs: &std::collections::HashSet<i64>) {
        self.jobs.retain(|(job, _)| !jobs.contains(job));
    }
}

/// The shapes' stored whyPending, across rounds: row id and the reasons it was written from.
#[derive(Debug, Default)]
pub struct ShapeWhys {
    stored: HashMap<String, (i64, Option<Arc<Skipped>>)>,
}

impl ShapeWhys {
    /// The shapes whose reasons differ from what is stored, with the value to store.
    pub fn to_write(&self, round: &RoundWhys) -> Vec<(String, Value)> {
        let mut out: Vec<(String, Value)> = round
            .latest
            .iter()
            .filter(|(shape, skipped)| {
                self.stored.get(&***shape).is_none_or(|(_, s)| s.as_deref() != skipped.as_deref())
            })
            .map(|(shape, skipped)| (shape.to_string(), why_of(shape, skipped.as_deref())))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Records the rows written for `round`'s shapes (`written`: shape and id).
    pub fn written(&mut self, round: &RoundWhys, written: Vec<(String, i64)>) {
        for (shape, id) in written {
            let skipped = round.latest.get(shape.as_str()).cloned().flatten();
            self.stored.insert(shape, (id, skipped));
        }
    }

    /// The jobs of `round` whose stored `why_pending` does not refer to their shape's row,
    /// with that row's id. `jobs` holds what this loop knows of each job; `why` picks its
    /// [`StoredWhy`], which is updated.
    pub fn references<T>(
        &self,
        round: &RoundWhys,
        jobs: &mut HashMap<i64, T>,
        why: impl Fn(&mut T) -> &mut StoredWhy,
    ) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        for (job, shape) in &round.jobs {
            let (Some(&(id, _)), Some(known)) = (self.stored.get(&**shape), jobs.get_mut(job)) else { continue };
            let stored = why(known);
            let current = match stored {
                StoredWhy::Shape(s) => Some(*s),
                StoredWhy::Loaded(v) => v.as_ref().and_then(referenced_shape),
            };
            if current != Some(id) {
                out.push((*job, id));
            }
            *stored = StoredWhy::Shape(id);
        }
        out
    }

    /// Forgets every shape (after rows were pruned): the next round writes its shapes again.
    pub fn forget(&mut self) {
        self.stored.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allocator::SkipReason;
    use crate::db::dispatch::reference;

    fn full(free: u64) -> Skipped {
        vec![("x".into(), SkipReason::InsufficientCapacity { resource: "gpu/A100".into(), needed: 8, free })]
    }

    #[test]
    fn a_job_that_may_not_preempt_is_told_so_after_the_clusters_reasons() {
        let mut round = RoundWhys::default();
        round.note(1, "8xA100".into(), Some(Arc::new(full(3))));
        round.note(2, without_preemption("8xA100"), Some(Arc::new(full(3))));
        let writes = ShapeWhys::default().to_write(&round);
        let summary = |i: usize| writes[i].1["summary"].as_str().unwrap().to_owned();
        assert_eq!(writes[0].0, "8xA100");
        assert!(!summary(0).contains("tenant"), "{}", summary(0));
        assert_eq!(summary(1), format!("{}; {NO_PREEMPTION_NOTE}", summary(0)));
        assert_eq!(writes[1].1["reasons"], writes[0].1["reasons"]);
    }

    #[test]
    fn a_capacity_change_rewrites_the_shape_not_its_jobs() {
        let mut shapes = ShapeWhys::default();
        let mut jobs: HashMap<i64, StoredWhy> =
            [(1, StoredWhy::Loaded(None)), (2, StoredWhy::Loaded(Some(reference(7)))), (3, StoredWhy::Loaded(None))]
                .into_iter()
                .collect();
        let mut round = RoundWhys::default();
        round.note(1, "8xA100".into(), Some(Arc::new(full(3))));
        round.note(2, "8xA100".into(), Some(Arc::new(full(2))));
        round.note(3, BAD_SPEC_SHAPE.into(), None);
        let writes = shapes.to_write(&round);
        assert_eq!(writes, vec![(BAD_SPEC_SHAPE.into(), why_bad_spec()), ("8xA100".into(), why_json(&full(2)))]);
        shapes.written(&round, vec![("8xA100".into(), 7), (BAD_SPEC_SHAPE.into(), 8)]);
        let refs = shapes.references(&round, &mut jobs, |w| w);
        assert_eq!(refs, vec![(1, 7), (3, 8)], "job 2 already refers to shape 7");

        // Capacity changes: one shape row to write, no job.
        let mut next = RoundWhys::default();
        for j in [1, 2] {
            next.note(j, "8xA100".into(), Some(Arc::new(full(5))));
        }
        next.note(3, BAD_SPEC_SHAPE.into(), None);
        assert_eq!(shapes.to_write(&next), vec![("8xA100".into(), why_json(&full(5)))]);
        shapes.written(&next, vec![("8xA100".into(), 7)]);
        let refs = shapes.references(&next, &mut jobs, |w| w);
        assert!(refs.is_empty());
        assert!(shapes.to_write(&next).is_empty(), "nothing changed: nothing to write");
    }
}
