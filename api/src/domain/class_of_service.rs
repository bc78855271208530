//! A queue's class of service: how long its jobs wait before their priority is raised
//! (aging), the runtime a job gets when it names none and may never exceed, and a daily window
//! in which its borrowed work is suspended, and the GPUs kept for its interactive workspaces.
//! Stored as `queues.max_wait_s`, `default_runtime_s` and `max_runtime_s` (migration 0016),
//! `borrowed_suspend_from/until_min` (0018) and `interactive_reserve_milli` (0029); the
//! runtime is settled at submit (the agent enforces `JobSpec::max_runtime_s`), the raise and the
//! window by the dispatcher's steps.

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
    /// While this window is open its borrowed work is suspended, and resumed after it.
    pub borrowed_suspend: Option<SuspendWindow>,
    /// GPU milli of the queue's `gpu` guarantee kept for interactive workspaces (0: none):
    /// other work is admitted as if the guarantee and limit were smaller by what workspaces
    /// do not hold of it (`admission::decide_in_queue`).
    pub interactive_reserve_milli: u64,
}

/// The largest interactive reserve: a million GPUs, in milli.
pub const MAX_INTERACTIVE_RESERVE_MILLI: u64 = 1_000_000_000;

/// GPUs as the API takes them (`1.5`) in milli, or why not: negative, not finite, or finer
/// than a thousandth of a GPU.
pub fn gpus_to_milli(gpus: f64) -> Result<u64, String> {
    let milli = gpus * 1000.0;
    if !milli.is_finite() || milli < 0.0 || milli > MAX_INTERACTIVE_RESERVE_MILLI as f64 {
        return Err("must be between 0 and 1000000 GPUs".into());
    }
    if (milli - milli.round()).abs() > 1e-6 {
        return Err("must be a whole number of thousandths of a GPU".into());
    }
    Ok(milli.round() as u64)
}

/// A daily window, UTC, in minutes from midnight: from `from_min` (included) to `until_min`
/// (excluded), across midnight when `until_min < from_min`. Written `HH:MM-HH:MM`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SuspendWindow {
    pub from_min: u16,
    pub until_min: u16,
}

/// Minutes in a day.
pub const DAY_MIN: u16 = 24 * 60;

impl SuspendWindow {
    /// Reads `HH:MM-HH:MM` (24-hour, UTC); the two ends must differ.
    pub fn parse(text: &str) -> Result<SuspendWindow, String> {
        let bad = || format!("{text:?} is not a window like 09:00-18:00 (UTC; 22:00-06:00 spans midnight)");
        let minute = |t: &str| -> Option<u16> {
            let (h, m) = t.trim().split_once(':')?;
            let (h, m): (u16, u16) = (h.parse().ok()?, m.parse().ok()?);
            (h < 24 && m < 60 && t.trim().len() == 5).then_some(h * 60 + m)
        };
        let (from, until) = text.split_once('-').ok_or_else(bad)?;
        let (from_min, until_min) = (minute(from).ok_or_else(bad)?, minute(until).ok_or_else(bad)?);
        if from_min == until_min {
            return Err(format!("{text:?} is empty: its ends must differ"));
        }
        Ok(SuspendWindow { from_min, until_min })
    }

    /// Whether minute `m` of the day (UTC) is inside the window.
    pub fn contains(&self, m: u16) -> bool {
        if self.from_min < self.until_min {
            (self.from_min..self.until_min).contains(&m)
        } else {
            m >= self.from_min || m < self.until_min
        }
    }
}

impl std::fmt::Display for SuspendWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hm = |m: u16| format!("{:02}:{:02}", m / 60, m % 60);
        write!(f, "{}-{}", hm(self.from_min), hm(self.until_min))
    }
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
        if self.interactive_reserve_milli > MAX_INTERACTIVE_RESERVE_MILLI {
            out.push(("interactiveReserveGpus", "must be between 0 and 1000000 GPUs".to_owned()));
        }
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
        let bad = ClassOfService {
            max_wait_s: Some(59),
            default_runtime_s: Some(100),
            max_runtime_s: Some(50),
            ..Default::default()
        };
        let fields: Vec<&str> = bad.problems().iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, ["maxWaitSeconds", "defaultRuntimeSeconds"]);
        let zero = ClassOfService { max_runtime_s: Some(0), ..Default::default() };
        assert_eq!(zero.problems()[0].0, "maxRuntimeSeconds");
        let fine = ClassOfService {
            max_wait_s: Some(60),
            default_runtime_s: Some(1),
            max_runtime_s: Some(1),
            ..Default::default()
        };
        assert!(fine.problems().is_empty());
    }

    #[test]
    fn gpus_become_milli_and_bad_amounts_are_refused() {
        assert_eq!(gpus_to_milli(2.0), Ok(2000));
        assert_eq!(gpus_to_milli(0.25), Ok(250));
        assert_eq!(gpus_to_milli(0.0), Ok(0));
        for bad in [-1.0, f64::NAN, f64::INFINITY, 0.0001, 2e6] {
            assert!(gpus_to_milli(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_suspend_window_reads_hh_mm_and_may_span_midnight() {
        let day = SuspendWindow::parse("09:00-18:00").unwrap();
        assert_eq!((day.from_min, day.until_min), (540, 1080));
        assert!(day.contains(540) && day.contains(1079) && !day.contains(1080) && !day.contains(0));
        let night = SuspendWindow::parse("22:30-06:00").unwrap();
        assert!(night.contains(1350) && night.contains(0) && night.contains(359) && !night.contains(360));
        assert_eq!(night.to_string(), "22:30-06:00");
        for bad in ["9-18", "09:00", "24:00-01:00", "09:60-10:00", "10:00-10:00", "9:00-18:00", ""] {
            assert!(SuspendWindow::parse(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn a_window_holds_exactly_its_length_of_minutes(from in 0..DAY_MIN, until in 0..DAY_MIN) {
            prop_assume!(from != until);
            let w = SuspendWindow { from_min: from, until_min: until };
            let inside = (0..DAY_MIN).filter(|m| w.contains(*m)).count() as u16;
            prop_assert_eq!(inside, (until + DAY_MIN - from) % DAY_MIN);
            prop_assert!(w.contains(from) && !w.contains(until));
            prop_assert_eq!(SuspendWindow::parse(&w.to_string()), Ok(w));
        }
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
