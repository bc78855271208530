//! Monthly budgets of projects and tenants: what counts against one, and when it warns or
//! refuses. Pure; `db::budgets` loads the inputs and admission applies [`BudgetState::refuses`]
//! in the transaction that checks quotas.
//!
//! What counts is what the month has cost so far (every replica's run up to now, priced from
//! the book at its contracted price, or in GPU-hours) plus what the replicas running now are
//! expected to cost until they end ([`expected_end`]: the run time the dispatcher predicted
//! from like jobs while it is still ahead, never past the maximum runtime, the job's
//! `max_runtime_s` or its queue's limit) or the month does. The prediction is a p90: most work
//! ends before it, so a hard budget refuses on an estimate that errs on the safe side. A
//! running replica with no known end (no history like it, no maximum, or it outran its
//! prediction without one) counts up to now only. A GPU model the book has no price for costs
//! nothing in currency (the usage report names it); in GPU-hours it counts.

use chrono::{DateTime, Utc};

use super::{charges, gpu_hours_nanos, BillingError, LedgerInterval, Nanos, Period, PriceBook};
use crate::domain::BudgetUnit;

/// The most a soft threshold may be, in percent of the budget.
pub const MAX_SOFT_PERCENT: u8 = 100;

/// A budget as set: `amount_micros` of its unit (currency or GPU-hours) per calendar month.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub unit: BudgetUnit,
    pub amount_micros: i64,
    /// Where the budget warns, in percent of the amount (1..=100).
    pub soft_percent: u8,
    /// Whether reaching the amount refuses new submissions (`BUDGET_EXCEEDED`).
    pub hard: bool,
    /// With `hard`: whether reaching the amount also suspends the scope's borrowed work
    /// (resumed once the budget is no longer spent: a new month, a larger amount).
    pub suspend_borrowed: bool,
}

impl Budget {
    pub fn amount(&self) -> Nanos {
        Nanos(self.amount_micros as i128 * 1000)
    }

    fn soft(&self) -> Nanos {
        Nanos(self.amount().0 * self.soft_percent as i128 / 100)
    }
}

/// Where a scope stands against its budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BudgetLevel {
    Under,
    /// At or past the soft threshold.
    Warning,
    /// At or past the amount.
    Exceeded,
}

/// A scope's spending this month, in its budget's unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spend {
    /// What the month has cost up to now.
    pub spent: Nanos,
    /// What running replicas are expected to cost from now to their end ([`expected_end`],
    /// within the month).
    pub committed: Nanos,
}

impl Spend {
    pub fn total(&self) -> Nanos {
        self.spent + self.committed
    }
}

/// A budget with its spending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetState {
    pub budget: Budget,
    pub spend: Spend,
}

impl BudgetState {
    pub fn level(&self) -> BudgetLevel {
        let total = self.spend.total();
        if total >= self.budget.amount() {
            BudgetLevel::Exceeded
        } else if total >= self.budget.soft() {
            BudgetLevel::Warning
        } else {
            BudgetLevel::Under
        }
    }

    /// Whether admission refuses new work under this budget.
    pub fn refuses(&self) -> bool {
        self.budget.hard && self.level() == BudgetLevel::Exceeded
    }

    /// Whether the scope's borrowed work is suspended now: a hard budget that asks for it, once
    /// what the month has already cost reaches the amount. Unlike [`BudgetState::refuses`],
    /// what running work is bound to cost does not count: suspending the borrowed work drops
    /// its committed cost, so a rule on spent + committed would resume that work at the next
    /// look and suspend it again, round after round. What was spent only grows within the
    /// month, so the work stays suspended until a new month or a larger amount.
    pub fn pauses_borrowed(&self) -> bool {
        self.budget.hard && self.budget.suspend_borrowed && self.spend.spent >= self.budget.amount()
    }
}

/// A running replica's run from now on: its ledger interval cut at now, and when it is expected
/// to end ([`expected_end`]; `None`: unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Running {
    pub interval: LedgerInterval,
    pub bound_to_end: Option<DateTime<Utc>>,
}

/// When a replica that started at `started` is expected to end: after its predicted run time
/// (`predicted_s`, from the fleet's history) while that is still ahead of `now`, never past
/// its maximum runtime (`max_s`: the job's, else its queue's); after its maximum once it has
/// outrun the prediction, or without one. `None` when neither is known, or it has outrun its
/// prediction and has no maximum: its cost ahead is then unknown and nothing is committed.
pub fn expected_end(
    started: DateTime<Utc>,
    max_s: Option<i64>,
    predicted_s: Option<i64>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let after = |s: i64| started.checked_add_signed(chrono::Duration::try_seconds(s.max(0))?);
    let maximum = max_s.and_then(after);
    match predicted_s.and_then(after).filter(|p| *p > now) {
        Some(predicted) => Some(maximum.map_or(predicted, |m| m.min(predicted))),
        None => maximum,
    }
}

/// The month's spending in `unit`: `so_far` are the ledger intervals of the period (open ones
/// cut at `now`), `running` the replicas running now.
pub fn spend(
    unit: BudgetUnit,
    so_far: &[LedgerInterval],
    running: &[Running],
    book: &PriceBook,
    period: Period,
    now: DateTime<Utc>,
) -> Result<Spend, BillingError> {
    let ahead: Vec<LedgerInterval> = running
        .iter()
        .filter_map(|r| {
            let end = r.bound_to_end?.min(period.end);
            let start = now.max(r.interval.start).max(period.start);
            (end > start).then(|| LedgerInterval { start, end, ..r.interval.clone() })
        })
        .collect();
    Ok(Spend { spent: cost(unit, so_far, book, period)?, committed: cost(unit, &ahead, book, period)? })
}

fn cost(
    unit: BudgetUnit,
    intervals: &[LedgerInterval],
    book: &PriceBook,
    period: Period,
) -> Result<Nanos, BillingError> {
    match unit {
        BudgetUnit::GpuHours => Ok(intervals
            .iter()
            .map(|iv| {
                let (s, e) = (iv.start.max(period.start), iv.end.min(period.end));
                if e > s {
                    gpu_hours_nanos(iv.milli, (e - s).num_milliseconds())
                } else {
                    Nanos(0)
                }
            })
            .sum()),
        BudgetUnit::Currency => {
            let mut total = Nanos(0);
            for iv in intervals {
                match charges(std::slice::from_ref(iv), book, period) {
                    Ok(pieces) => total = total + pieces.iter().map(|c| c.contracted_cost).sum(),
                    // Unpriced usage costs nothing here; the usage report says which model.
                    Err(BillingError::NoPrice { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(total)
        }
    }
}

/// The month's spending day by day (cumulative, at each UTC day's end, up to `now`'s day): the
/// burn-down chart's line.
pub fn burn_down(
    unit: BudgetUnit,
    so_far: &[LedgerInterval],
    book: &PriceBook,
    period: Period,
    now: DateTime<Utc>,
) -> Result<Vec<(DateTime<Utc>, Nanos)>, BillingError> {
    let mut days: Vec<(DateTime<Utc>, Nanos)> = Vec::new();
    let mut day = period.start;
    let last = now.min(period.end);
    while day < last {
        days.push((day, Nanos(0)));
        day += chrono::Duration::days(1);
    }
    for iv in so_far {
        let per_day: Vec<(DateTime<Utc>, Nanos)> = match unit {
            BudgetUnit::GpuHours => charges_by_day(iv, period, |piece| gpu_hours_nanos(iv.milli, piece)),
            BudgetUnit::Currency => match charges(std::slice::from_ref(iv), book, period) {
                Ok(pieces) => pieces.into_iter().map(|c| (c.day, c.contracted_cost)).collect(),
                Err(BillingError::NoPrice { .. }) => Vec::new(),
                Err(e) => return Err(e),
            },
        };
        for (d, amount) in per_day {
            if let Some(slot) = days.iter_mut().find(|(day, _)| *day == d) {
                slot.1 = slot.1 + amount;
            }
        }
    }
    let mut running = Nanos(0);
    for (_, amount) in days.iter_mut() {
        running = running + *amount;
        *amount = running;
    }
    Ok(days)
}

/// `iv` inside `period` split at UTC midnights, each piece's amount from its milliseconds.
fn charges_by_day(iv: &LedgerInterval, period: Period, amount: impl Fn(i64) -> Nanos) -> Vec<(DateTime<Utc>, Nanos)> {
    let (mut t, end) = (iv.start.max(period.start), iv.end.min(period.end));
    let mut out = Vec::new();
    while t < end {
        let day = t.date_naive().and_time(chrono::NaiveTime::MIN).and_utc();
        let next = (day + chrono::Duration::days(1)).min(end);
        out.push((day, amount((next - t).num_milliseconds())));
        t = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::billing::PriceEntry;
    use crate::domain::WorkloadType;

    fn t(day: u32, hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, day, hour, 0, 0).unwrap()
    }

    fn november() -> Period {
        Period { start: t(1, 0), end: Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap() }
    }

    fn interval(model: &str, milli: u32, start: DateTime<Utc>, end: DateTime<Utc>) -> LedgerInterval {
        LedgerInterval {
            project: "ml".into(),
            queue: "ml/default".into(),
            cluster: "a".into(),
            gpu_model: model.into(),
            milli,
            start,
            end,
            job: 1,
            workload: WorkloadType::Batch,
            task: "main".into(),
            replica: 0,
            user: "dev:alice".into(),
            ended_by_preemption: false,
            account: None,
        }
    }

    fn book() -> PriceBook {
        PriceBook::new(vec![PriceEntry {
            model: "A100".into(),
            list_micros: 3_000_000,
            contracted_micros: Some(2_000_000),
            effective_from: t(1, 0) - chrono::Duration::days(400),
            effective_to: None,
        }])
        .unwrap()
    }

    fn budget(unit: BudgetUnit, amount: i64, hard: bool) -> Budget {
        Budget { unit, amount_micros: amount * 1_000_000, soft_percent: 80, hard, suspend_borrowed: false }
    }

    #[test]
    fn spending_so_far_is_priced_at_the_contracted_price() {
        // 2 GPUs for 10 hours at 2.00 a GPU-hour.
        let so_far = [interval("A100", 2000, t(3, 0), t(3, 10))];
        let s = spend(BudgetUnit::Currency, &so_far, &[], &book(), november(), t(10, 0)).unwrap();
        assert_eq!(s, Spend { spent: Nanos(40_000_000_000), committed: Nanos(0) });
        let h = spend(BudgetUnit::GpuHours, &so_far, &[], &book(), november(), t(10, 0)).unwrap();
        assert_eq!(h.spent, Nanos(20_000_000_000));
    }

    #[test]
    fn a_running_replica_commits_its_cost_up_to_its_maximum_runtime_within_the_month() {
        let now = t(29, 0);
        let started = t(28, 0);
        let running = Running { interval: interval("A100", 1000, started, now), bound_to_end: Some(t(30, 0)) };
        let so_far = [interval("A100", 1000, started, now)];
        let s = spend(BudgetUnit::GpuHours, &so_far, &[running], &book(), november(), now).unwrap();
        assert_eq!(s.spent, Nanos(24_000_000_000));
        assert_eq!(s.committed, Nanos(24_000_000_000));
        // A bound past the month's end counts to the month's end only.
        let long = Running {
            interval: interval("A100", 1000, started, now),
            bound_to_end: Some(t(30, 0) + chrono::Duration::days(9)),
        };
        let s = spend(BudgetUnit::GpuHours, &[], &[long], &book(), november(), now).unwrap();
        assert_eq!(s.committed, Nanos(48_000_000_000));
    }

    #[test]
    fn a_running_replica_is_expected_to_end_at_its_prediction_while_ahead_else_at_its_maximum() {
        let started = t(28, 0);
        let now = t(28, 2);
        let h = |n: i64| n * 3600;
        assert_eq!(expected_end(started, None, Some(h(5)), now), Some(t(28, 5)), "the prediction alone");
        assert_eq!(expected_end(started, Some(h(3)), Some(h(5)), now), Some(t(28, 3)), "never past its maximum");
        assert_eq!(expected_end(started, Some(h(9)), Some(h(5)), now), Some(t(28, 5)));
        // Outrun its prediction: its maximum, or nothing known.
        assert_eq!(expected_end(started, Some(h(9)), Some(h(1)), now), Some(t(28, 9)));
        assert_eq!(expected_end(started, None, Some(h(1)), now), None);
        assert_eq!(expected_end(started, Some(h(9)), None, now), Some(t(28, 9)));
        assert_eq!(expected_end(started, None, None, now), None);
    }

    #[test]
    fn a_running_replica_with_no_known_end_commits_nothing() {
        let running = Running { interval: interval("A100", 1000, t(28, 0), t(29, 0)), bound_to_end: None };
        let s = spend(BudgetUnit::GpuHours, &[], &[running], &book(), november(), t(29, 0)).unwrap();
        assert_eq!(s.committed, Nanos(0));
    }

    #[test]
    fn an_unpriced_model_costs_nothing_in_currency_but_counts_in_gpu_hours() {
        let so_far = [interval("H100", 1000, t(3, 0), t(3, 1))];
        assert_eq!(spend(BudgetUnit::Currency, &so_far, &[], &book(), november(), t(4, 0)).unwrap().spent, Nanos(0));
        assert_eq!(
            spend(BudgetUnit::GpuHours, &so_far, &[], &book(), november(), t(4, 0)).unwrap().spent,
            Nanos(1_000_000_000)
        );
    }

    #[test]
    fn the_level_warns_at_the_soft_threshold_and_a_hard_budget_refuses_at_the_amount() {
        let b = budget(BudgetUnit::Currency, 100, true);
        let at = |nanos: i128| BudgetState { budget: b, spend: Spend { spent: Nanos(nanos), committed: Nanos(0) } };
        assert_eq!(at(79_999_999_999).level(), BudgetLevel::Under);
        assert_eq!(at(80_000_000_000).level(), BudgetLevel::Warning);
        assert!(!at(99_999_999_999).refuses());
        assert_eq!(at(100_000_000_000).level(), BudgetLevel::Exceeded);
        assert!(at(100_000_000_000).refuses());
        let soft_only = BudgetState { budget: budget(BudgetUnit::Currency, 100, false), ..at(200_000_000_000) };
        assert_eq!(soft_only.level(), BudgetLevel::Exceeded);
        assert!(!soft_only.refuses(), "a soft budget warns and never refuses");
        assert!(!at(100_000_000_000).pauses_borrowed(), "borrowed work runs on unless asked");
        let pausing = BudgetState { budget: Budget { suspend_borrowed: true, ..b }, ..at(100_000_000_000) };
        assert!(pausing.pauses_borrowed());
        let soft_pausing = BudgetState { budget: Budget { suspend_borrowed: true, hard: false, ..b }, ..pausing };
        assert!(!soft_pausing.pauses_borrowed(), "only a hard budget suspends");
        // What running work is bound to cost counts toward the amount.
        let committed =
            BudgetState { budget: b, spend: Spend { spent: Nanos(60_000_000_000), committed: Nanos(40_000_000_000) } };
        assert!(committed.refuses());
    }

    #[test]
    fn suspending_borrowed_work_does_not_flap_on_its_own_committed_cost() {
        let b = Budget { suspend_borrowed: true, ..budget(BudgetUnit::Currency, 100, true) };
        let at = |spent: i128, committed: i128| BudgetState {
            budget: b,
            spend: Spend { spent: Nanos(spent), committed: Nanos(committed) },
        };
        // Spent and committed reach the amount: new work is refused, but borrowed work runs on
        // (suspending it would drop the committed part, and the next look would resume it).
        let committed_only = at(60_000_000_000, 40_000_000_000);
        assert!(committed_only.refuses());
        assert!(!committed_only.pauses_borrowed());
        assert!(!at(60_000_000_000, 0).pauses_borrowed(), "nor once suspended, its committed cost gone");
        // What was spent reaches the amount: suspended, whatever is committed.
        assert!(at(100_000_000_000, 0).pauses_borrowed());
        assert!(at(100_000_000_000, 5_000_000_000).pauses_borrowed());
        assert!(!at(99_999_999_999, 0).pauses_borrowed());
    }

    #[test]
    fn the_burn_down_is_cumulative_per_day_up_to_today() {
        let so_far = [interval("A100", 1000, t(2, 22), t(3, 2)), interval("A100", 1000, t(5, 0), t(5, 1))];
        let line = burn_down(BudgetUnit::GpuHours, &so_far, &book(), november(), t(6, 12)).unwrap();
        let values: Vec<i128> = line.iter().map(|(_, n)| n.0 / 1_000_000_000).collect();
        assert_eq!(values, vec![0, 2, 4, 4, 5, 5]);
        assert_eq!(line[0].0, t(1, 0));
        assert_eq!(line.last().unwrap().0, t(6, 0));
    }
}
