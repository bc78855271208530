//! Inference services' rules: how many replicas a service should run (its autoscaling rule on
//! a measured signal, scaling up at once and down only after the lower figure has held for
//! the scale-down delay), and which replicas to start and stop to get there: a new revision is
//! rolled out within max surge and max unavailable, failed replicas are replaced, and the
//! first `min` replicas started are protected (not preemptible), so preemption never takes a
//! service below its minimum. Pure: the dispatcher's service step reads the replicas and the
//! signal and carries out the plan.

use chrono::{DateTime, Duration, Utc};

/// Bounds of a service's replica counts.
pub const MAX_SERVICE_REPLICAS: u32 = 100;

/// A replica that failed this recently, with [`CRASH_LOOP_FAILURES`] others of its revision,
/// holds further starts of that revision back (a crash loop must not churn the fleet).
pub const CRASH_LOOP_WINDOW_S: i64 = 60;
pub const CRASH_LOOP_FAILURES: usize = 3;

/// A relative change of the signal under this tolerance does not rescale (as Kubernetes'
/// HPA): measurement noise must not make replicas come and go.
pub const SCALE_TOLERANCE: f64 = 0.1;

named_enum! {
    /// What a service's autoscaling rule measures.
    pub enum ScalingMetric("scaling metric") {
        /// The mean GPU busy percentage of its running replicas, from the profiler; the target
        /// is a percentage.
        GpuUtilization = "gpu_utilization",
        /// Requests per second reported for the service (by its replicas or a metrics adapter;
        /// the sim's synthetic load); the target is requests per second per replica.
        RequestRate = "request_rate",
    }
}

named_enum! {
    /// Where a service stands.
    pub enum ServiceState("service state") {
        /// Its desired count of replicas of the current revision is ready.
        Ready = "ready",
        /// At or above its minimum, on its way to the desired count or rolling out a revision.
        Progressing = "progressing",
        /// Fewer ready replicas than its minimum.
        Degraded = "degraded",
        /// Deleted: its replicas are stopped.
        Deleted = "deleted",
    }
}

/// The state of a live service from its replicas.
pub fn service_state(set: &ReplicaSet<'_>) -> ServiceState {
    let ready = set.replicas.iter().filter(|r| r.ready).count();
    let ready_current = set.replicas.iter().filter(|r| r.ready && r.revision == set.revision).count();
    if ready < set.min as usize {
        ServiceState::Degraded
    } else if ready_current == set.desired as usize && set.replicas.len() == set.desired as usize {
        ServiceState::Ready
    } else {
        ServiceState::Progressing
    }
}

/// A service's autoscaling rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Autoscaling {
    pub metric: ScalingMetric,
    /// The value per replica the rule keeps the signal at.
    pub target: f64,
    /// A lower replica count is taken only after it has been recommended this long.
    pub scale_down_delay: Duration,
}

/// What was measured for a service this round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Signal {
    /// The total request rate.
    RequestRate(f64),
    /// The mean busy percentage over `measured` running replicas.
    GpuUtilization { mean_pct: f64, measured: u32 },
    /// Nothing measured (no load reported, no replica running): no change.
    Unknown,
}

/// The replica count the signal asks for, from `current` (the count the service is at):
/// `ceil(total / target)` for a request rate, `ceil(measured × mean / target)` for GPU
/// utilization, unchanged within [`SCALE_TOLERANCE`] or without a signal; within
/// `min..=max`.
pub fn recommend(rule: &Autoscaling, signal: Signal, current: u32, min: u32, max: u32) -> u32 {
    let target = rule.target.max(f64::MIN_POSITIVE);
    let (usage, replicas) = match (rule.metric, signal) {
        (ScalingMetric::RequestRate, Signal::RequestRate(rps)) if rps.is_finite() && rps >= 0.0 => {
            (rps, f64::from(current.max(1)))
        }
        (ScalingMetric::GpuUtilization, Signal::GpuUtilization { mean_pct, measured })
            if measured > 0 && mean_pct.is_finite() && mean_pct >= 0.0 =>
        {
            (mean_pct * f64::from(measured), f64::from(measured))
        }
        _ => return current.clamp(min, max),
    };
    let ratio = usage / (replicas * target);
    if (ratio - 1.0).abs() <= SCALE_TOLERANCE {
        return current.clamp(min, max);
    }
    let wanted = (usage / target).ceil();
    // Saturating: an absurd signal asks for the maximum, never overflows.
    let wanted = if wanted >= f64::from(max) { max } else { wanted as u32 };
    wanted.clamp(min, max)
}

/// Recent recommendations of one service, newest last: what the scale-down delay is judged on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recommendations {
    seen: Vec<(DateTime<Utc>, u32)>,
}

impl Recommendations {
    /// Records `wanted` at `now` and returns the count to run: up at once, down to the highest
    /// count in effect within the last `delay` (so a dip must last the whole delay). A service
    /// first seen counts its `current` figure as recommended now (a restarted control plane
    /// does not scale down at once). Bounded: entries older than the window are dropped, but
    /// the one in effect at the window's start is kept.
    pub fn settle(&mut self, now: DateTime<Utc>, wanted: u32, current: u32, delay: Duration) -> u32 {
        if self.seen.is_empty() {
            self.seen.push((now, current));
        }
        let window_start = now - delay;
        if let Some(in_effect) = self.seen.iter().rposition(|(at, _)| *at <= window_start) {
            self.seen.drain(..in_effect);
        }
        self.seen.push((now, wanted));
        if wanted >= current {
            return wanted;
        }
        let held = self.seen.iter().map(|(_, w)| *w).max().unwrap_or(wanted);
        held.min(current)
    }

    /// Forgets what was seen (the rule changed, or a manual scale).
    pub fn reset(&mut self) {
        self.seen.clear();
    }
}

/// How a new revision replaces the old one's replicas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rollout {
    /// Replicas that may run above the desired count during the roll.
    pub max_surge: u32,
    /// Replicas that may be unready below the desired count during the roll.
    pub max_unavailable: u32,
}

impl Default for Rollout {
    /// Kubernetes' Deployment default, 25 % each, as counts for a small service.
    fn default() -> Rollout {
        Rollout { max_surge: 1, max_unavailable: 0 }
    }
}

/// One live replica of a service, as the planner sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplicaView {
    pub job_id: i64,
    pub revision: u32,
    /// Running (and, in Kubernetes, past its readiness check): it serves.
    pub ready: bool,
    /// Started not preemptible: one of the replicas that keep the service at its minimum.
    pub protected: bool,
}

/// What the planner needs of a service.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicaSet<'a> {
    pub revision: u32,
    pub desired: u32,
    pub min: u32,
    pub rollout: Rollout,
    pub replicas: &'a [ReplicaView],
    /// The current revision is crash looping: start none of it for now.
    pub hold_starts: bool,
}

/// What to do to a service this round.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicaPlan {
    /// Replicas of the current revision to start...
    pub start: u32,
    /// ...of which the first this many are protected (not preemptible).
    pub start_protected: u32,
    /// Replicas to stop, by job id.
    pub stop: Vec<i64>,
}

impl ReplicaPlan {
    pub fn is_empty(&self) -> bool {
        self.start == 0 && self.stop.is_empty()
    }
}

/// Whether the replicas' revisions say a roll is under way.
pub fn rolling(set: &ReplicaSet<'_>) -> bool {
    set.replicas.iter().any(|r| r.revision != set.revision)
}

/// The plan that moves the service toward `desired` ready replicas of its current revision.
///
/// Without a roll: start the missing, or stop the surplus (unready first, then unprotected,
/// then the newest). During a roll (replicas of another revision live), as a Kubernetes
/// Deployment: at most `desired + max_surge` replicas in all, and old replicas are stopped
/// (unready ones first) only while at least `desired - max_unavailable` stay ready. Starts are
/// protected while fewer than `min` protected replicas would remain.
pub fn plan_replicas(set: &ReplicaSet<'_>) -> ReplicaPlan {
    let desired = set.desired as usize;
    let (current, old): (Vec<&ReplicaView>, Vec<&ReplicaView>) =
        set.replicas.iter().partition(|r| r.revision == set.revision);
    let mut stop: Vec<i64> = Vec::new();
    let start;
    if old.is_empty() {
        if current.len() > desired {
            let mut surplus = current.clone();
            // Kept first: ready, protected, older (lower id); the tail is stopped.
            surplus.sort_by_key(|r| (!r.ready, !r.protected, r.job_id));
            stop.extend(surplus[desired..].iter().map(|r| r.job_id));
        }
        start = desired.saturating_sub(current.len());
    } else {
        let total = set.replicas.len();
        let ceiling = desired + set.rollout.max_surge as usize;
        start = desired.saturating_sub(current.len()).min(ceiling.saturating_sub(total));
        let floor = desired.saturating_sub(set.rollout.max_unavailable as usize);
        let mut ready = set.replicas.iter().filter(|r| r.ready).count();
        // Unready old replicas serve nothing: stopped at once. Ready ones, unprotected and
        // newest first, while the ready count stays above the floor.
        let mut old_sorted = old.clone();
        old_sorted.sort_by_key(|r| (r.ready, r.protected, std::cmp::Reverse(r.job_id)));
        for r in old_sorted {
            if !r.ready {
                stop.push(r.job_id);
            } else if ready > floor {
                stop.push(r.job_id);
                ready -= 1;
            }
        }
    }
    let start = if set.hold_starts { 0 } else { start };
    // Counted in the current revision only: the old one's protected replicas are on their way out.
    let protected_left = current.iter().filter(|r| r.protected && !stop.contains(&r.job_id)).count();
    let start_protected = (set.min as usize).saturating_sub(protected_left).min(start);
    ReplicaPlan { start: start as u32, start_protected: start_protected as u32, stop }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn rps_rule(target: f64, delay_s: i64) -> Autoscaling {
        Autoscaling { metric: ScalingMetric::RequestRate, target, scale_down_delay: Duration::seconds(delay_s) }
    }

    #[test]
    fn the_request_rate_asks_for_its_total_over_the_target() {
        let rule = rps_rule(10.0, 60);
        assert_eq!(recommend(&rule, Signal::RequestRate(35.0), 1, 1, 8), 4);
        assert_eq!(recommend(&rule, Signal::RequestRate(0.0), 4, 1, 8), 1, "no load: the minimum");
        assert_eq!(recommend(&rule, Signal::RequestRate(1e12), 1, 1, 8), 8, "capped at the maximum");
        assert_eq!(recommend(&rule, Signal::RequestRate(41.0), 4, 1, 8), 4, "within the tolerance: unchanged");
        assert_eq!(recommend(&rule, Signal::Unknown, 3, 1, 8), 3, "no signal: unchanged");
        assert_eq!(recommend(&rule, Signal::RequestRate(f64::NAN), 3, 1, 8), 3);
    }

    #[test]
    fn gpu_utilization_scales_the_measured_replicas() {
        let rule = Autoscaling {
            metric: ScalingMetric::GpuUtilization,
            target: 60.0,
            scale_down_delay: Duration::seconds(60),
        };
        assert_eq!(recommend(&rule, Signal::GpuUtilization { mean_pct: 90.0, measured: 2 }, 2, 1, 8), 3);
        assert_eq!(recommend(&rule, Signal::GpuUtilization { mean_pct: 10.0, measured: 4 }, 4, 1, 8), 1);
        assert_eq!(recommend(&rule, Signal::GpuUtilization { mean_pct: 90.0, measured: 0 }, 2, 1, 8), 2);
        assert_eq!(recommend(&rule, Signal::RequestRate(100.0), 2, 1, 8), 2, "another metric's signal: unchanged");
    }

    #[test]
    fn scaling_down_waits_for_the_delay_and_scaling_up_does_not() {
        let delay = Duration::seconds(30);
        let mut r = Recommendations::default();
        assert_eq!(r.settle(at(0), 4, 1, delay), 4, "up at once");
        assert_eq!(r.settle(at(5), 1, 4, delay), 4, "the dip is new");
        assert_eq!(r.settle(at(20), 1, 4, delay), 4);
        assert_eq!(r.settle(at(36), 1, 4, delay), 1, "the dip held for the whole delay");
        assert_eq!(r.settle(at(40), 2, 1, delay), 2);
        // A spike inside the window holds the count up.
        let mut r = Recommendations::default();
        r.settle(at(0), 3, 3, delay);
        r.settle(at(31), 1, 3, delay);
        r.settle(at(40), 3, 3, delay);
        assert_eq!(r.settle(at(62), 1, 3, delay), 3, "3 was in effect from 40 s to 62 s");
        assert_eq!(r.settle(at(93), 1, 3, delay), 1);
        // A gap in the observations: what was last asked stays in effect until the next one.
        let mut r = Recommendations::default();
        r.settle(at(0), 3, 3, delay);
        assert_eq!(r.settle(at(100), 1, 3, delay), 3, "3 was in effect until now");
        assert_eq!(r.settle(at(131), 1, 3, delay), 1);
    }

    fn view(job_id: i64, revision: u32, ready: bool, protected: bool) -> ReplicaView {
        ReplicaView { job_id, revision, ready, protected }
    }

    fn set(revision: u32, desired: u32, min: u32, rollout: Rollout, replicas: &[ReplicaView]) -> ReplicaSet<'_> {
        ReplicaSet { revision, desired, min, rollout, replicas, hold_starts: false }
    }

    #[test]
    fn missing_replicas_are_started_and_the_first_min_protected() {
        let plan = plan_replicas(&set(1, 3, 2, Rollout::default(), &[]));
        assert_eq!(plan, ReplicaPlan { start: 3, start_protected: 2, stop: vec![] });
        let live = [view(1, 1, true, true), view(2, 1, true, false)];
        let plan = plan_replicas(&set(1, 3, 2, Rollout::default(), &live));
        assert_eq!(plan, ReplicaPlan { start: 1, start_protected: 1, stop: vec![] }, "replaces a lost protected one");
    }

    #[test]
    fn surplus_replicas_stop_unready_then_unprotected_then_newest() {
        let live = [view(1, 1, true, true), view(2, 1, true, false), view(3, 1, false, false), view(4, 1, true, false)];
        assert_eq!(plan_replicas(&set(1, 2, 1, Rollout::default(), &live)).stop, vec![4, 3]);
        assert_eq!(plan_replicas(&set(1, 1, 1, Rollout::default(), &live)).stop, vec![2, 4, 3]);
    }

    #[test]
    fn a_roll_surges_then_stops_old_replicas_as_new_ones_get_ready() {
        let surge = Rollout { max_surge: 1, max_unavailable: 0 };
        let old = [view(1, 1, true, true), view(2, 1, true, false)];
        let plan = plan_replicas(&set(2, 2, 1, surge, &old));
        assert_eq!((plan.start, plan.stop.len()), (1, 0), "one above desired, none stopped");
        let mid = [view(1, 1, true, true), view(2, 1, true, false), view(3, 2, false, false)];
        assert!(plan_replicas(&set(2, 2, 1, surge, &mid)).is_empty(), "waits for the new one");
        let mid = [view(1, 1, true, true), view(2, 1, true, false), view(3, 2, true, false)];
        let plan = plan_replicas(&set(2, 2, 1, surge, &mid));
        assert_eq!(plan.stop, vec![2], "the old unprotected goes first");
        assert_eq!(plan.start, 0);
    }

    /// Simulates rounds: started replicas are ready one round later.
    fn run_rounds(
        revision: u32,
        desired: u32,
        min: u32,
        rollout: Rollout,
        mut live: Vec<ReplicaView>,
    ) -> (Vec<ReplicaView>, usize) {
        let mut next_id = 1000;
        for round in 0..200 {
            let plan = plan_replicas(&set(revision, desired, min, rollout, &live));
            if plan.is_empty() && live.iter().all(|r| r.ready) {
                return (live, round);
            }
            let ready_before = live.iter().filter(|r| r.ready).count();
            let total_before = live.len();
            live.retain(|r| !plan.stop.contains(&r.job_id));
            let ready_after = live.iter().filter(|r| r.ready).count();
            // Stops never take the ready count below the roll's floor (or below where it was).
            let floor = (desired as usize).saturating_sub(rollout.max_unavailable as usize);
            assert!(ready_after >= floor.min(ready_before), "round {round}: {ready_before} -> {ready_after}");
            for r in &mut live {
                r.ready = true;
            }
            for i in 0..plan.start {
                next_id += 1;
                live.push(view(next_id, revision, false, i < plan.start_protected));
            }
            let ceiling = (desired + rollout.max_surge) as usize;
            assert!(live.len() <= ceiling.max(total_before), "round {round}: {} replicas", live.len());
        }
        panic!("no convergence: {live:?}");
    }

    fn replicas_strategy() -> impl Strategy<Value = Vec<ReplicaView>> {
        prop::collection::vec((1u32..4, any::<bool>(), any::<bool>()), 0..12).prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (rev, ready, protected))| view(i as i64 + 1, rev, ready, protected))
                .collect()
        })
    }

    proptest! {
        /// Preemption takes only unprotected replicas (the scheduler never picks a
        /// non-preemptible victim): whatever it takes, round after round, a service that once
        /// had `min` replicas never has fewer again, and the planner always brings it back to
        /// `desired`.
        #[test]
        fn preemption_never_takes_a_service_below_its_minimum(
            desired in 1u32..8,
            min_frac in 0u32..=8,
            preempted in prop::collection::vec(prop::collection::vec(any::<bool>(), 8), 1..30),
        ) {
            let min = min_frac.min(desired);
            let rollout = Rollout::default();
            let mut live: Vec<ReplicaView> = Vec::new();
            let mut next_id = 0;
            let mut reached_min = false;
            for takes in &preempted {
                let plan = plan_replicas(&set(1, desired, min, rollout, &live));
                live.retain(|r| !plan.stop.contains(&r.job_id));
                for r in &mut live {
                    r.ready = true;
                }
                for i in 0..plan.start {
                    next_id += 1;
                    live.push(view(next_id, 1, false, i < plan.start_protected));
                }
                reached_min |= live.len() >= min as usize;
                // The preemption: any unprotected replica may go.
                let mut k = 0;
                live.retain(|r| {
                    k += 1;
                    r.protected || !takes[(k - 1) % takes.len()]
                });
                if reached_min {
                    prop_assert!(live.len() >= min as usize, "{} live, min {min}: {live:?}", live.len());
                }
            }
        }

        /// Any starting mix converges to `desired` ready replicas of the current revision,
        /// never above `desired + max_surge` (or where it started), never stopping ready ones
        /// below `desired - max_unavailable`, with at least `min` protected.
        #[test]
        fn plans_converge_within_the_rollout_bounds(
            live in replicas_strategy(),
            desired in 0u32..8,
            min_frac in 0u32..=8,
            surge in 0u32..3,
            unavailable in 0u32..3,
        ) {
            let min = min_frac.min(desired);
            let rollout = Rollout { max_surge: surge, max_unavailable: unavailable };
            prop_assume!(surge + unavailable > 0);
            let (end, _) = run_rounds(3, desired, min, rollout, live.clone());
            prop_assert_eq!(end.len(), desired as usize);
            prop_assert!(end.iter().all(|r| r.revision == 3 && r.ready));
            // A fresh roll (nothing of the current revision live) ends with `min` protected.
            if live.iter().all(|r| r.revision != 3) {
                prop_assert!(end.iter().filter(|r| r.protected).count() >= min as usize);
            }
        }
    }
}
