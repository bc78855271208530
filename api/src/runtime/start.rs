//! When a waiting job should start: a fluid simulation of the fleet's GPUs. Running work frees
//! its GPUs at its expected end; the jobs the allocator serves first start, in that order, as
//! soon as enough GPUs are free, and hold them for their expected run time. Pure.
//!
//! It counts GPUs, not placements: fragmentation, quotas and fair share between queues are
//! not modelled, so the estimate is the earliest a job could start (it says so to users).
//! Work whose end is unknown (no prediction, no maximum runtime) holds its GPUs for good; a
//! job that can then never get enough has no estimate.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Work holding GPUs now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holding {
    pub gpu_milli: u64,
    /// When it is expected to end, seconds since the Unix epoch; `None`: unknown.
    pub ends_at: Option<i64>,
}

/// A job waiting to start, in the order it will be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub gpu_milli: u64,
    /// How long it is expected to run once started, seconds; `None`: unknown.
    pub runtime_s: Option<u64>,
}

/// The expected start of each of `waiting` (same order), seconds since the Unix epoch, given
/// `capacity_milli` GPUs of which `running` hold some at `now`. A job never starts before the
/// one served before it (the allocator does not let later work pass a blocked head of line in
/// this estimate; backfill can only make a start earlier).
pub fn expected_starts(now: i64, capacity_milli: u64, running: &[Holding], waiting: &[Waiting]) -> Vec<Option<i64>> {
    let mut free = capacity_milli as i128;
    // (end, milli) of work that will end; work of unknown end never frees its GPUs.
    let mut ends: BinaryHeap<Reverse<(i64, u64)>> = BinaryHeap::new();
    for h in running {
        free -= h.gpu_milli as i128;
        if let Some(end) = h.ends_at {
            // Overdue work ends "now" at the earliest.
            ends.push(Reverse((end.max(now), h.gpu_milli)));
        }
    }
    let mut clock = now;
    let mut out = Vec::with_capacity(waiting.len());
    let mut blocked = false;
    for w in waiting {
        if blocked || w.gpu_milli > capacity_milli {
            // Never fits, or stuck behind a job that never starts: the line stops here.
            blocked = true;
            out.push(None);
            continue;
        }
        while free < w.gpu_milli as i128 {
            let Some(Reverse((end, milli))) = ends.pop() else { break };
            clock = clock.max(end);
            free += milli as i128;
        }
        if free < w.gpu_milli as i128 {
            blocked = true;
            out.push(None);
            continue;
        }
        out.push(Some(clock));
        free -= w.gpu_milli as i128;
        if let Some(run) = w.runtime_s {
            ends.push(Reverse((clock.saturating_add(i64::try_from(run).unwrap_or(i64::MAX)), w.gpu_milli)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const G: u64 = 1000;

    #[test]
    fn a_job_starts_when_the_work_ahead_frees_enough_gpus() {
        let running =
            [Holding { gpu_milli: 6 * G, ends_at: Some(1_600) }, Holding { gpu_milli: 2 * G, ends_at: Some(1_300) }];
        let waiting = [
            // All 8 GPUs are held: the first waits for the 2 freed at 1,300.
            Waiting { gpu_milli: 2 * G, runtime_s: Some(500) },
            Waiting { gpu_milli: 4 * G, runtime_s: Some(100) },
            Waiting { gpu_milli: G, runtime_s: None },
        ];
        let starts = expected_starts(1_000, 8 * G, &running, &waiting);
        assert_eq!(starts, [Some(1_300), Some(1_600), Some(1_600)]);
    }

    #[test]
    fn overdue_work_ends_now_and_unknown_work_never_ends() {
        let running = [Holding { gpu_milli: 4 * G, ends_at: Some(500) }, Holding { gpu_milli: 4 * G, ends_at: None }];
        let waiting =
            [Waiting { gpu_milli: 4 * G, runtime_s: Some(60) }, Waiting { gpu_milli: 8 * G, runtime_s: Some(60) }];
        assert_eq!(expected_starts(1_000, 8 * G, &running, &waiting), [Some(1_000), None]);
    }

    #[test]
    fn a_job_larger_than_the_fleet_has_no_start_and_blocks_the_line_behind_it() {
        let waiting = [Waiting { gpu_milli: 16 * G, runtime_s: Some(1) }, Waiting { gpu_milli: G, runtime_s: Some(1) }];
        assert_eq!(expected_starts(0, 8 * G, &[], &waiting), [None, None]);
    }

    proptest! {
        /// Starts never go back in time along the line, never before now, and at no instant do
        /// the started jobs plus what still runs exceed the fleet.
        #[test]
        fn starts_are_ordered_and_never_overcommit(
            running in prop::collection::vec((1u64..4, prop::option::weighted(0.9, 0i64..500)), 0..6),
            waiting in prop::collection::vec((1u64..5, prop::option::weighted(0.9, 1u64..300)), 0..12),
        ) {
            let cap = 8 * G;
            let mut used = 0;
            let mut kept = Vec::new();
            for (g, end) in running {
                if used + g * G <= cap {
                    used += g * G;
                    kept.push(Holding { gpu_milli: g * G, ends_at: end });
                }
            }
            let running = kept;
            let waiting: Vec<Waiting> = waiting.into_iter().map(|(g, r)| Waiting { gpu_milli: g * G, runtime_s: r }).collect();
            let now = 100;
            let starts = expected_starts(now, cap, &running, &waiting);
            let mut last = now;
            let mut intervals: Vec<(i64, i64, u64)> = running.iter().map(|h| (now, h.ends_at.map_or(i64::MAX, |e| e.max(now)), h.gpu_milli)).collect();
            let mut seen_none = false;
            for (w, s) in waiting.iter().zip(&starts) {
                match s {
                    Some(s) => {
                        prop_assert!(!seen_none, "nothing starts behind a job that never does");
                        prop_assert!(*s >= last);
                        last = *s;
                        intervals.push((*s, w.runtime_s.map_or(i64::MAX, |r| s + r as i64), w.gpu_milli));
                    }
                    None => seen_none = true,
                }
            }
            for &(t, _, _) in &intervals {
                let busy: u64 = intervals.iter().filter(|(a, b, _)| *a <= t && t < *b).map(|i| i.2).sum();
                prop_assert!(busy <= cap, "{busy} > {cap} at {t}");
            }
        }
    }
}
