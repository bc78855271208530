//! whyPending written incrementally. A waiting job's whyPending is a function of the reasons a
//! plan gives for each cluster; jobs of one shape get equal reasons while the clusters do not
//! change, and a round where nothing changed gives every job the reasons it had. So a round
//! builds the JSON once per distinct list of reasons, writes each job only when its reasons
//! differ from those its stored whyPending came from, and sends each distinct text once
//! (building and sending 100 reasons for every waiting job was most of a round's time, and a
//! gigabyte of text at 100,000 jobs). Pure: the loop hands in the reasons and stores the
//! groups.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde_json::Value;

use super::views::{why_bad_spec, why_json};
use crate::allocator::SkipReason;

/// The reasons a plan gives a waiting job, one per cluster.
pub type Skipped = Vec<(String, SkipReason)>;

/// What a job's stored whyPending stands for, as far as this loop knows.
#[derive(Clone, Debug, PartialEq)]
pub enum StoredWhy {
    /// As read with the job, not yet compared with a plan's reasons.
    Loaded(Option<Value>),
    /// Written (or found equal) from these reasons; `None`: the text of a spec that does
    /// not decode.
    From(Option<Arc<Skipped>>),
}

/// One round's whyPending writes: distinct values, and the jobs that get each.
#[derive(Debug, Default)]
pub struct WhyWrites {
    groups: Vec<(Option<Arc<Skipped>>, Value, Vec<i64>)>,
    by_hash: HashMap<u64, Vec<usize>>,
    bad_spec: Option<usize>,
}

impl WhyWrites {
    /// Notes the reasons `skipped` for `job` (`None`: its spec does not decode): nothing when
    /// its stored whyPending already stands for them; else the job joins the group of that
    /// value, and `stored` says what it will stand for once written.
    pub fn note(&mut self, job: i64, stored: &mut StoredWhy, skipped: Option<Skipped>) {
        if let StoredWhy::From(from) = stored {
            if from.as_deref() == skipped.as_ref() {
                return;
            }
        }
        let group = match skipped {
            None => self.bad_spec_group(),
            Some(skipped) => self.group_of(skipped),
        };
        let (key, value, jobs) = &mut self.groups[group];
        let unchanged = matches!(stored, StoredWhy::Loaded(Some(v)) if v == value);
        *stored = StoredWhy::From(key.clone());
        if !unchanged {
            jobs.push(job);
        }
    }

    fn bad_spec_group(&mut self) -> usize {
        *self.bad_spec.get_or_insert_with(|| {
            self.groups.push((None, why_bad_spec(), Vec::new()));
            self.groups.len() - 1
        })
    }

    fn group_of(&mut self, skipped: Skipped) -> usize {
        let mut h = DefaultHasher::new();
        skipped.hash(&mut h);
        let same = self.by_hash.entry(h.finish()).or_default();
        if let Some(&g) = same.iter().find(|&&g| self.groups[g].0.as_deref() == Some(&skipped)) {
            return g;
        }
        let value = why_json(&skipped);
        self.groups.push((Some(Arc::new(skipped)), value, Vec::new()));
        same.push(self.groups.len() - 1);
        self.groups.len() - 1
    }

    /// Each value to write, with the jobs that get it (none left out is empty).
    pub fn groups(&self) -> impl Iterator<Item = (&Value, &[i64])> {
        self.groups.iter().filter(|(_, _, jobs)| !jobs.is_empty()).map(|(_, v, jobs)| (v, jobs.as_slice()))
    }

    /// How many jobs get a new whyPending.
    pub fn len(&self) -> usize {
        self.groups.iter().map(|(_, _, jobs)| jobs.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(c: &str, free: u64) -> (String, SkipReason) {
        (c.into(), SkipReason::InsufficientCapacity { resource: "gpu/A100".into(), needed: 8, free })
    }

    #[test]
    fn equal_reasons_share_one_value_and_unchanged_ones_write_nothing() {
        let mut w = WhyWrites::default();
        let (mut a, mut b, mut c) =
            (StoredWhy::Loaded(None), StoredWhy::Loaded(None), StoredWhy::Loaded(Some(why_json(&[full("x", 1)]))));
        w.note(1, &mut a, Some(vec![full("x", 2)]));
        w.note(2, &mut b, Some(vec![full("x", 2)]));
        // Loaded with exactly the value it would get: nothing to write.
        w.note(3, &mut c, Some(vec![full("x", 1)]));
        let groups: Vec<(Value, Vec<i64>)> = w.groups().map(|(v, j)| (v.clone(), j.to_vec())).collect();
        assert_eq!(groups, vec![(why_json(&[full("x", 2)]), vec![1, 2])]);
        assert_eq!(w.len(), 2);
        assert!(matches!((&a, &b), (StoredWhy::From(Some(x)), StoredWhy::From(Some(y))) if Arc::ptr_eq(x, y)));

        // The next round: the same reasons write nothing, new ones do.
        let mut next = WhyWrites::default();
        next.note(1, &mut a, Some(vec![full("x", 2)]));
        next.note(3, &mut c, Some(vec![full("x", 1)]));
        assert!(next.is_empty());
        next.note(2, &mut b, Some(vec![full("x", 0)]));
        next.note(1, &mut a, None);
        let jobs: Vec<Vec<i64>> = next.groups().map(|(_, j)| j.to_vec()).collect();
        assert_eq!(jobs, vec![vec![2], vec![1]]);
        assert_eq!(a, StoredWhy::From(None));
        let mut again = WhyWrites::default();
        again.note(1, &mut a, None);
        assert!(again.is_empty(), "the bad-spec text is written once");
    }
}
