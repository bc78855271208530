//! A queue's class of service: how long its jobs wait before their priority is raised
//! (aging), and the runtime a job gets when it names none and may never exceed. Stored as
//! `queues.max_wait_s`, `default_runtime_s` and `max_runtime_s` (migration 0016); the runtime
//! is settled at submit (the agent enforces `JobSpec::max_runtime_s`), the raise by the
//! dispatcher's aging step.

use super::PriorityClass;

/// The shortest maximum wait a queue may set: aging faster than a dispatcher round or two
/// would raise everything at once.
pub const MIN_MAX_WAIT_S: u32 = 60;
/// The longest of any of the three durations: a year.
pub const MAX_DURATION_S: u32 = 366 * 24 * 3600;

/// A queue's class of service; every field optional (absent: no aging, no default, no bound).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassOfService {
    /// After this long waiting (and again after each further period), a job's priority is
    /// raised one class.
    pub max_wait_s: Option<u32>,
    /// The runtime limit of a job that names none.
    pub default_runtime_s: Option<u32>,
    /// No job of the queue may ask for more; one that names none gets the default, else this.
    pub max_runtime_s: Option<u32>,
}

impl ClassOfService {
    /// What is wrong with these settings, as (argument, message) pairs.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let within = |field: &'static str, v: Option<u32>, min: u32, out: &mut Vec<(&'static str, String)>| {
            if v.is_some_and(|v| !(min..=MAX_DURATION_S).contains(&v)) {
                out.push((field, format!("must be between {min} and {MAX_DURATION_S} seconds (a year)")));
            }
        };
        within("maxWaitSeconds", self.max_wait_s, MIN_MAX_WAIT_S, &mut out);
        within("defaultRuntimeSeconds", self.default_runtime_s, 1, &mut out);
        within("maxRuntimeSeconds", self.max_runtime_s, 1, &mut out);
        if let (Some(default), Some(max)) = (self.default_runtime_s, self.max_runtime_s) {
            if default > max {
                out.push(("defaultRuntimeSeconds", format!("must not exceed maxRuntimeSeconds ({max})")));
            }
        }
        out
    }

    /// The runtime limit a job that asked for `requested` seconds runs under, or why the
    /// queue refuses it.
    pub fn runtime_for(&self, requested: Option<u64>, queue: &str) -> Result<Option<u64>, String> {
        match (requested, self.max_runtime_s) {
            (Some(r), Some(max)) if r > u64::from(max) => Err(format!(
                "queue {queue} allows at most {} ({max}s)",
                humantime::format_duration(std::time::Duration::from_secs(max.into()))
            )),
            (Some(r), _) => Ok(Some(r)),
            (None, max) => Ok(self.default_runtime_s.or(max).map(u64::from)),
        }
    }
}

/// The highest class aging raises a job to: what its tenant allows, and never `critical`
/// (reserved for work a person puts ahead of everything).
pub fn aging_ceiling(tenant_max: PriorityClass) -> PriorityClass {
    if tenant_max.value() < PriorityClass::High.value() {
        tenant_max
    } else {
        PriorityClass::High
    }
}

/// The class a waiting job of class `current` is raised to now, if any: one class up once it
/// has waited `max_wait_s` since it began waiting or was last raised, up to `ceiling`. One
/// step per call, so that each class is held for a whole period.
pub fn aged_class(
    current: PriorityClass,
    waited_s: i64,
    max_wait_s: u32,
    ceiling: PriorityClass,
) -> Option<PriorityClass> {
    if waited_s < i64::from(max_wait_s) || current.value() >= ceiling.value() {
        return None;
    }
    PriorityClass::ALL.into_iter().find(|c| c.value() > current.value())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_job_without_a_runtime_gets_the_default_then_the_maximum_and_may_not_ask_for_more() {
        let both = ClassOfService { default_runtime_s: Some(3600), max_runtime_s: Some(7200), ..Default::default() };
        assert_eq!(both.runtime_for(None, "q"), Ok(Some(3600)));
        assert_eq!(both.runtime_for(Some(7200), "q"), Ok(Some(7200)));
        assert_eq!(both.runtime_for(Some(7201), "q"), Err("queue q allows at most 2h (7200s)".into()));
        let max_only = ClassOfService { max_runtime_s: Some(60), ..Default::default() };
        assert_eq!(max_only.runtime_for(None, "q"), Ok(Some(60)));
        assert_eq!(ClassOfService::default().runtime_for(None, "q"), Ok(None));
        assert_eq!(ClassOfService::default().runtime_for(Some(5), "q"), Ok(Some(5)));
    }

    #[test]
    fn settings_out_of_bounds_or_a_default_above_the_maximum_are_named() {
        let bad = ClassOfService { max_wait_s: Some(59), default_runtime_s: Some(100), max_runtime_s: Some(50) };
        let fields: Vec<&str> = bad.problems().iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, ["maxWaitSeconds", "defaultRuntimeSeconds"]);
        let zero = ClassOfService { max_runtime_s: Some(0), ..Default::default() };
        assert_eq!(zero.problems()[0].0, "maxRuntimeSeconds");
        assert!(ClassOfService { max_wait_s: Some(60), default_runtime_s: Some(1), max_runtime_s: Some(1) }
            .problems()
            .is_empty());
    }

    #[test]
    fn aging_raises_one_class_per_period_and_stops_below_critical_and_the_tenants_limit() {
        use PriorityClass::*;
        assert_eq!(aged_class(Low, 599, 600, High), None);
        assert_eq!(aged_class(Low, 600, 600, High), Some(Normal));
        assert_eq!(aged_class(Low, 6000, 600, High), Some(Normal), "one step at a time");
        assert_eq!(aged_class(Normal, 600, 600, High), Some(High));
        assert_eq!(aged_class(High, 600, 600, High), None);
        assert_eq!(aging_ceiling(Critical), High);
        assert_eq!(aging_ceiling(Normal), Normal);
        assert_eq!(aged_class(Normal, 600, 600, aging_ceiling(Normal)), None);
    }

    proptest! {
        #[test]
        fn aging_never_lowers_nor_passes_the_ceiling(
            current in 0usize..4, ceiling in 0usize..4, waited in -10i64..100_000, wait in MIN_MAX_WAIT_S..5_000,
        ) {
            let (current, ceiling) = (PriorityClass::ALL[current], aging_ceiling(PriorityClass::ALL[ceiling]));
            if let Some(to) = aged_class(current, waited, wait, ceiling) {
                prop_assert!(to.value() > current.value());
                prop_assert!(to.value() <= ceiling.value());
                prop_assert!(to != PriorityClass::Critical);
                prop_assert!(waited >= i64::from(wait));
            }
        }
    }
}
