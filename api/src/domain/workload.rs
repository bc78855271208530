//! Workload types and the interactive workspace's rules: what kind of work a job is
//! (`jobs.workload_type`, a column generated from the spec by migration 0026; billing and the
//! FOCUS export carry it), and when an idle workspace is warned, then stopped or suspended.
//!
//! The idle rule: a workspace whose GPUs have shown no activity (no Metrics sample at or above
//! [`ACTIVE_BUSY_PCT`]) for `idle_after` is culled; a warning event comes first, [`grace`]
//! before that moment. Activity after the warning voids it. Pure: the dispatcher's idle step
//! reads the times and carries out the verdict.

use chrono::{DateTime, Duration, Utc};

named_enum! {
    /// What kind of work a job is.
    pub enum WorkloadType("workload type") {
        /// A batch job: training, evaluation, a pipeline step.
        Batch = "batch",
        /// An interactive workspace: one user's notebook-style session.
        Workspace = "workspace",
        /// Replicas of an inference service.
        Inference = "inference",
    }
}

impl WorkloadType {
    /// The type of a stored spec, as the generated column `jobs.workload_type` computes it
    /// (migrations 0026, 0027): a spec with `workspace` is a workspace, one with `service` a
    /// service's replica, any other a batch job.
    pub fn of_spec(spec: &serde_json::Value) -> WorkloadType {
        if spec.get("workspace").is_some() {
            WorkloadType::Workspace
        } else if spec.get("service").is_some() {
            WorkloadType::Inference
        } else {
            WorkloadType::Batch
        }
    }
}

// Ordered as declared (billing's intervals sort by every field).
impl Ord for WorkloadType {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (*self as u8).cmp(&(*other as u8))
    }
}

impl PartialOrd for WorkloadType {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A sample at or above this GPU busy percentage counts as activity.
pub const ACTIVE_BUSY_PCT: f32 = 1.0;

/// Bounds of a workspace's idle timeout.
pub const MIN_IDLE_AFTER_S: u64 = 10;
pub const MAX_IDLE_AFTER_S: u64 = 7 * 24 * 3600;

/// How long before the cull the warning comes: a fifth of the idle timeout, at most 5 minutes.
pub fn grace(idle_after: Duration) -> Duration {
    (idle_after / 5).min(Duration::minutes(5))
}

/// What the idle rule says of a running workspace now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleVerdict {
    /// Active recently enough: nothing to do.
    Active,
    /// Idle since `active_at` and past the warning point without a warning for it: warn now
    /// that it is culled at `cull_at`.
    Warn { active_at: DateTime<Utc>, cull_at: DateTime<Utc> },
    /// Warned, still idle, not yet at the cull.
    Warned,
    /// Idle for the whole timeout and warned at least the grace before: stop or suspend it.
    Cull,
}

/// A warning given: for the activity it was measured from, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdleWarning {
    pub active_at: DateTime<Utc>,
    pub warned_at: DateTime<Utc>,
}

/// The idle rule for a workspace running since `running_since`, whose GPUs were last active at
/// `last_active` (never: `None`), with the warning it was last given, if any.
pub fn idle_verdict(
    now: DateTime<Utc>,
    running_since: DateTime<Utc>,
    last_active: Option<DateTime<Utc>>,
    warning: Option<IdleWarning>,
    idle_after: Duration,
) -> IdleVerdict {
    // Idle is measured from the later of its start and its last activity.
    let active_at = last_active.map_or(running_since, |a| a.max(running_since));
    let grace = grace(idle_after);
    let cull_at = active_at + idle_after;
    match warning.filter(|w| w.active_at >= active_at) {
        // Warned for this idle stretch: culled once both the timeout and the grace are over.
        Some(w) if now >= cull_at && now >= w.warned_at + grace => IdleVerdict::Cull,
        Some(_) => IdleVerdict::Warned,
        None if now >= cull_at - grace => IdleVerdict::Warn { active_at, cull_at: cull_at.max(now + grace) },
        None => IdleVerdict::Active,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(s: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + s, 0).unwrap()
    }

    #[test]
    fn an_idle_workspace_is_warned_then_culled_and_activity_voids_the_warning() {
        let idle = Duration::minutes(30);
        assert_eq!(grace(idle), Duration::minutes(5));
        assert_eq!(grace(Duration::seconds(20)), Duration::seconds(4));
        // Started at 0, never active: warned at 25 min, culled at 30.
        assert_eq!(idle_verdict(t(60), t(0), None, None, idle), IdleVerdict::Active);
        assert_eq!(
            idle_verdict(t(25 * 60), t(0), None, None, idle),
            IdleVerdict::Warn { active_at: t(0), cull_at: t(30 * 60) }
        );
        let warned = IdleWarning { active_at: t(0), warned_at: t(25 * 60) };
        assert_eq!(idle_verdict(t(29 * 60), t(0), None, Some(warned), idle), IdleVerdict::Warned);
        assert_eq!(idle_verdict(t(30 * 60), t(0), None, Some(warned), idle), IdleVerdict::Cull);
        // Used at 28 min: the warning is void and the clock starts again.
        assert_eq!(idle_verdict(t(31 * 60), t(0), Some(t(28 * 60)), Some(warned), idle), IdleVerdict::Active);
        // Activity before a restart does not count against the new run.
        assert_eq!(idle_verdict(t(100), t(50), Some(t(10)), None, idle), IdleVerdict::Active);
    }

    #[test]
    fn a_warning_given_late_still_leaves_the_whole_grace() {
        // The dispatcher was down past the cull point: warned now, culled a grace later.
        let idle = Duration::minutes(30);
        let v = idle_verdict(t(3600), t(0), None, None, idle);
        assert_eq!(v, IdleVerdict::Warn { active_at: t(0), cull_at: t(3600 + 300) });
        let warned = IdleWarning { active_at: t(0), warned_at: t(3600) };
        assert_eq!(idle_verdict(t(3700), t(0), None, Some(warned), idle), IdleVerdict::Warned);
        assert_eq!(idle_verdict(t(3900), t(0), None, Some(warned), idle), IdleVerdict::Cull);
    }

    proptest::proptest! {
        /// Whatever the times: a workspace is never culled before it has been idle the whole
        /// timeout, nor without a warning at least the grace before, and never while a sample
        /// since the warning showed activity.
        #[test]
        fn never_culled_early_nor_unwarned(
            start in 0i64..10_000,
            active in proptest::option::of(0i64..20_000),
            warned in proptest::option::of((0i64..20_000, 0i64..20_000)),
            now in 0i64..40_000,
            idle_s in 10i64..5_000,
        ) {
            let idle = Duration::seconds(idle_s);
            let warning = warned.map(|(a, w)| IdleWarning { active_at: t(a), warned_at: t(w) });
            let verdict = idle_verdict(t(now), t(start), active.map(t), warning, idle);
            if verdict == IdleVerdict::Cull {
                let active_at = active.map_or(start, |a| a.max(start));
                proptest::prop_assert!(now - active_at >= idle_s, "culled after {}s idle", now - active_at);
                let w = warning.unwrap();
                proptest::prop_assert!(w.active_at >= t(active_at), "a warning for an earlier idle stretch");
                proptest::prop_assert!(t(now) >= w.warned_at + grace(idle));
            }
        }
    }
}
