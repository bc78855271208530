//! Each queue's decayed past usage (DESIGN.md, "Fair share ... with decayed usage"): what the
//! book keeps so that a queue that has used much of the cluster lately waits behind one that has
//! not, at every level of the tree (the scheduler sums queues' history into their projects' and
//! tenants'). Kept by queue key, as SetQueues names queues, so that it survives a new SetQueues
//! that renumbers them, and restarts with the book.

use std::collections::BTreeMap;

use grus_scheduler::fairshare::PastUsage;
use grus_scheduler::job::QueueId;
use grus_scheduler::queue::ResourceVector;
use serde::{Deserialize, Serialize};

use super::Book;
use crate::convert::{resource_key, resource_name, QueueMap};

/// A queue's decayed resource-seconds as of `as_of_s` (seconds since the Unix epoch), by
/// resource name (`gpu`, `gpu/<model>`, `pool/<pool>`, `cpu_milli`, `memory_mib`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueHistory {
    pub amounts: BTreeMap<String, f64>,
    pub as_of_s: u64,
}

/// History below this many resource-seconds on every resource is forgotten: it no longer
/// weighs in any order (a milli-GPU held for a second is 1).
const NEGLIGIBLE: f64 = 1.0;

impl QueueHistory {
    fn past(&self) -> PastUsage {
        PastUsage {
            amounts: self.amounts.iter().filter_map(|(name, v)| Some((resource_key(name)?, *v))).collect(),
            as_of: self.as_of_s,
        }
    }

    fn of(past: PastUsage) -> QueueHistory {
        QueueHistory {
            amounts: past.amounts.iter().map(|(k, v)| (resource_name(k), *v)).collect(),
            as_of_s: past.as_of,
        }
    }
}

impl Book {
    /// Rolls every queue's history forward to `now_s`, each queue having held what `holding`
    /// says (by queue key) since the last roll. Queues whose history decayed to nothing and that
    /// hold nothing are forgotten.
    pub fn roll_usage_history(&mut self, holding: &BTreeMap<String, ResourceVector>, now_s: u64, half_life_s: u64) {
        let none = ResourceVector::new();
        let mut keys: Vec<String> = self.usage_history.keys().chain(holding.keys()).cloned().collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            let usage = holding.get(&key).unwrap_or(&none);
            let before = self.usage_history.get(&key).map(QueueHistory::past);
            let after = PastUsage::rolled(before.as_ref(), usage, now_s, half_life_s);
            if usage.is_empty() && after.amounts.values().all(|v| *v < NEGLIGIBLE) {
                self.usage_history.remove(&key);
            } else {
                self.usage_history.insert(key, QueueHistory::of(after));
            }
        }
    }

    /// The history as the scheduler's input, by the ids of `queues`.
    pub fn past_usage(&self, queues: &QueueMap) -> BTreeMap<QueueId, PastUsage> {
        self.usage_history.iter().filter_map(|(key, h)| Some((queues.id_of_key(key)?, h.past()))).collect()
    }
}

#[cfg(test)]
mod tests {
    use grus_scheduler::queue::ResourceKey;

    use super::*;

    const HOUR: u64 = 3600;

    fn gpus(milli: u64) -> ResourceVector {
        ResourceVector::new().with(ResourceKey::Gpus, milli).with(ResourceKey::gpu_model("A100"), milli)
    }

    #[test]
    fn history_accumulates_decays_and_is_forgotten_once_negligible() {
        let mut book = Book::default();
        let t0 = 1_700_000_000;
        let holding = BTreeMap::from([("p/q".to_string(), gpus(8000))]);
        book.roll_usage_history(&holding, t0, HOUR);
        assert_eq!(book.usage_history["p/q"].amounts.get("gpu").copied().unwrap_or(0.0), 0.0, "starts now");
        book.roll_usage_history(&holding, t0 + HOUR, HOUR);
        let after_an_hour = book.usage_history["p/q"].amounts["gpu"];
        // ∫ 8000 · 0.5^(s/h) over one half-life = 8000 · h / ln 2 · (1 − ½).
        let expected = 8000.0 * HOUR as f64 / std::f64::consts::LN_2 * 0.5;
        assert!((after_an_hour - expected).abs() < 1e-6 * expected, "{after_an_hour} vs {expected}");
        assert!(book.usage_history["p/q"].amounts.contains_key("gpu/A100"));
        // Holding nothing, it halves every half-life, then is forgotten.
        book.roll_usage_history(&BTreeMap::new(), t0 + 2 * HOUR, HOUR);
        assert!((book.usage_history["p/q"].amounts["gpu"] - after_an_hour / 2.0).abs() < 1e-6 * after_an_hour);
        book.roll_usage_history(&BTreeMap::new(), t0 + 60 * HOUR, HOUR);
        assert!(book.usage_history.is_empty());
    }

    #[test]
    fn history_reaches_the_scheduler_by_the_current_queue_ids() {
        let mut book = Book::default();
        let key = |q: &str| format!("p/{q}");
        book.queue_weights = [(key("a"), 1.0), (key("b"), 1.0)].into();
        book.queue_hierarchy = Some(Default::default());
        let holding = BTreeMap::from([(key("b"), gpus(1000)), ("gone/q".to_string(), gpus(1000))]);
        book.roll_usage_history(&holding, 100, HOUR);
        book.roll_usage_history(&holding, 200, HOUR);
        let queues = book.queue_map().unwrap();
        let past = book.past_usage(&queues);
        assert_eq!(
            past.keys().copied().collect::<Vec<_>>(),
            vec![queues.id("p", "b")],
            "a queue no longer sent is left out"
        );
        assert!(past[&queues.id("p", "b")].amounts[&ResourceKey::Gpus] > 0.0);
    }
}
