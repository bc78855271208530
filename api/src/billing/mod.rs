//! Billing: a price book per GPU model, the cost of usage-ledger intervals, usage grouped by
//! dimension, and FOCUS 1.2 exports (DESIGN.md, "Billing").
//!
//! Pure and exact. Money is integer: prices are micro-units of the billing currency per
//! GPU-hour (`2.50` = 2_500_000), costs are nano-units (1e-9) in `i128`. Time is counted in
//! whole milliseconds. The cost of one charge (one ledger interval, clipped to a UTC day and
//! to one price segment) is `price_micros x milli x ms / 3_600_000` nano-units, rounded half
//! up once per charge; every total (groups, exports) is the sum of those charges, so totals
//! agree with each other to the last digit and differ from the unrounded value by less than
//! half a nano-unit per charge. Same inputs, same bytes: nothing depends on input order.

pub mod budget;
mod focus;
mod input;
mod price;

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Duration, NaiveTime, Utc};

pub use focus::{focus_csv, focus_jsonl, FocusConfig, FOCUS_COLUMNS};
pub use input::{export_file_name, month_period, parse_price_micros, InputError};
pub use price::{PriceBook, PriceEntry, Segment};

/// An amount in nano-units (1e-9) of a currency, or of GPU-hours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub i128);

impl fmt::Display for Nanos {
    /// A decimal string with nine fractional digits, e.g. `12.500000000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let a = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
    }
}

impl Nanos {
    /// Approximate value in whole units, for charts only (exact totals are the strings).
    pub fn to_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl std::ops::Add for Nanos {
    type Output = Nanos;
    fn add(self, o: Nanos) -> Nanos {
        Nanos(self.0 + o.0)
    }
}

impl std::iter::Sum for Nanos {
    fn sum<I: Iterator<Item = Nanos>>(it: I) -> Nanos {
        it.fold(Nanos(0), |a, b| a + b)
    }
}

/// Micro-units (1e-6) as a decimal string with six fractional digits.
pub fn micros_str(v: i64) -> String {
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    format!("{sign}{}.{:06}", a / 1_000_000, a % 1_000_000)
}

/// `num / den` rounded half up (away from zero for the non-negative values used here).
fn div_round(num: i128, den: i128) -> i128 {
    if num >= 0 {
        (num + den / 2) / den
    } else {
        -((-num + den / 2) / den)
    }
}

/// Cost in nano-units of `milli` GPU for `ms` milliseconds at `price_micros` per GPU-hour.
pub fn cost_nanos(price_micros: i64, milli: u32, ms: i64) -> Nanos {
    Nanos(div_round(price_micros as i128 * milli as i128 * ms as i128, 3_600_000))
}

/// GPU-hours in nano-units for `milli` GPU over `ms` milliseconds.
pub fn gpu_hours_nanos(milli: u32, ms: i64) -> Nanos {
    // milli/1000 GPU x ms/3_600_000 h x 1e9 = milli x ms / 3.6
    Nanos(div_round(milli as i128 * ms as i128 * 10, 36))
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BillingError {
    #[error("no price for GPU model `{model}` at {at}")]
    NoPrice { model: String, at: DateTime<Utc> },
    #[error("price entries for `{model}` overlap at {at}")]
    OverlappingPrices { model: String, at: DateTime<Utc> },
    #[error("price entry for `{model}` has an empty or negative validity or a negative price")]
    InvalidPrice { model: String },
    #[error("ledger interval of job {job} ends before it starts")]
    InvalidInterval { job: u64 },
    #[error("the period ends before it starts")]
    InvalidPeriod,
}

/// One row of the usage ledger: one replica's run interval.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LedgerInterval {
    pub project: String,
    pub queue: String,
    pub cluster: String,
    pub gpu_model: String,
    /// GPU milli the replica held (gpus x gpu_milli: 8 whole GPUs = 8000, a quarter = 250).
    pub milli: u32,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub job: u64,
    /// What kind of work the job is (FOCUS `x_WorkloadType`).
    pub workload: crate::domain::WorkloadType,
    pub task: String,
    pub replica: u32,
    pub user: String,
    pub ended_by_preemption: bool,
    /// The billing account (tenant) of this interval's project; `None`: the export's
    /// [`FocusConfig`] account. Set when one export spans several tenants.
    pub account: Option<Account>,
}

/// A billing account (FOCUS BillingAccountId and BillingAccountName).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Account {
    pub id: String,
    pub name: String,
}

/// A half-open time range `[start, end)`, e.g. a billing month.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

/// One priced piece of an interval: inside one UTC day, one price entry and the period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Charge {
    pub interval: LedgerInterval,
    /// The UTC day (its midnight) this piece falls in.
    pub day: DateTime<Utc>,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub price: PriceEntry,
    pub gpu_hours: Nanos,
    pub list_cost: Nanos,
    pub contracted_cost: Nanos,
}

impl Charge {
    /// The total order of charges in every output.
    fn sort_key(&self) -> impl Ord + '_ {
        (self.day, &self.interval, self.start, self.end)
    }
}

fn day_of(t: DateTime<Utc>) -> DateTime<Utc> {
    t.date_naive().and_time(NaiveTime::MIN).and_utc()
}

fn ms(a: DateTime<Utc>, b: DateTime<Utc>) -> i64 {
    (b - a).num_milliseconds()
}

/// Splits the intervals into priced charges inside `period`, sorted by a total order
/// (day, then every interval field, then time), so the result does not depend on the
/// order of `intervals`. Intervals outside the period yield nothing; pieces shorter than a
/// millisecond are dropped.
pub fn charges(intervals: &[LedgerInterval], book: &PriceBook, period: Period) -> Result<Vec<Charge>, BillingError> {
    if period.end < period.start {
        return Err(BillingError::InvalidPeriod);
    }
    let mut out = Vec::new();
    for iv in intervals {
        if iv.end < iv.start {
            return Err(BillingError::InvalidInterval { job: iv.job });
        }
        let (s, e) = (iv.start.max(period.start), iv.end.min(period.end));
        if s >= e {
            continue;
        }
        for (ps, pe, price) in book.segments(&iv.gpu_model, s, e)? {
            let mut t = ps;
            while t < pe {
                let day = day_of(t);
                let next = (day + Duration::days(1)).min(pe);
                let d = ms(t, next);
                if d > 0 {
                    out.push(Charge {
                        interval: iv.clone(),
                        day,
                        start: t,
                        end: next,
                        price: price.clone(),
                        gpu_hours: gpu_hours_nanos(iv.milli, d),
                        list_cost: cost_nanos(price.list_micros, iv.milli, d),
                        contracted_cost: cost_nanos(price.contracted(), iv.milli, d),
                    });
                }
                t = next;
            }
        }
    }
    out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    Ok(out)
}

/// A dimension usage can be grouped by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dim {
    Project,
    Queue,
    Cluster,
    GpuModel,
    User,
    /// The UTC day, as `YYYY-MM-DD`.
    Day,
    /// The workload type: `batch`, `workspace`, `inference`.
    WorkloadType,
}

impl Dim {
    fn value(self, c: &Charge) -> String {
        match self {
            Dim::Project => c.interval.project.clone(),
            Dim::Queue => c.interval.queue.clone(),
            Dim::Cluster => c.interval.cluster.clone(),
            Dim::GpuModel => c.interval.gpu_model.clone(),
            Dim::User => c.interval.user.clone(),
            Dim::Day => c.day.format("%Y-%m-%d").to_string(),
            Dim::WorkloadType => c.interval.workload.as_str().to_owned(),
        }
    }
}

/// Usage of one group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageRow {
    /// The group's value of each requested dimension, in the order requested.
    pub key: Vec<(Dim, String)>,
    pub gpu_hours: Nanos,
    pub list_cost: Nanos,
    pub contracted_cost: Nanos,
    /// Charges (interval pieces) summed into this row.
    pub charges: usize,
}

/// Usage grouped by `group_by` within `period` (intervals clipped to it), sorted by key.
/// With no dimensions, one row holds the total (none if there was no usage).
pub fn group_usage(
    intervals: &[LedgerInterval],
    book: &PriceBook,
    group_by: &[Dim],
    period: Period,
) -> Result<Vec<UsageRow>, BillingError> {
    let mut groups: BTreeMap<Vec<String>, UsageRow> = BTreeMap::new();
    for c in charges(intervals, book, period)? {
        let values: Vec<String> = group_by.iter().map(|d| d.value(&c)).collect();
        let row = groups.entry(values.clone()).or_insert_with(|| UsageRow {
            key: group_by.iter().copied().zip(values).collect(),
            gpu_hours: Nanos(0),
            list_cost: Nanos(0),
            contracted_cost: Nanos(0),
            charges: 0,
        });
        row.gpu_hours = row.gpu_hours + c.gpu_hours;
        row.list_cost = row.list_cost + c.list_cost;
        row.contracted_cost = row.contracted_cost + c.contracted_cost;
        row.charges += 1;
    }
    Ok(groups.into_values().collect())
}
