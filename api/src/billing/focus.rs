//! FOCUS 1.2 exports of priced charges, as CSV (RFC 4180) and JSON Lines.
//!
//! One row per charge: one replica interval within one UTC day and one price segment. The
//! charge period is that day, clipped to the billing period. Every FOCUS 1.2 column is
//! present (alphabetical, as in the specification), columns that do not apply are null
//! (an empty CSV field, JSON `null`), and Grus's dimensions follow as `x_` columns.
//! Decimals are plain decimal strings (JSON numbers in JSON Lines); timestamps are ISO 8601
//! UTC (`2026-01-31T00:00:00Z`). Rows come in the total order of [`super::charges`], and no
//! value depends on the clock or on input order, so one period always yields the same bytes.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};

use super::{charges, micros_str, BillingError, Charge, LedgerInterval, Period, PriceBook};

/// Who bills whom; constant over an export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FocusConfig {
    /// ISO 4217 code, e.g. `USD`.
    pub currency: String,
    pub provider_name: String,
    pub publisher_name: String,
    pub invoice_issuer_name: String,
    /// The tenant billed, for intervals that do not name their own [`super::Account`].
    pub billing_account_id: String,
    pub billing_account_name: String,
    pub service_name: String,
    pub invoice_id: Option<String>,
    pub region_id: Option<String>,
    pub region_name: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    Decimal,
    Integer,
    Boolean,
    DateTime,
    /// A JSON object (FOCUS key-value format): a string in CSV, an object in JSON Lines.
    Json,
}

use Kind::*;

/// The exported columns in order: FOCUS 1.2, then Grus's `x_` extras.
pub const FOCUS_COLUMNS: &[&str] = &[
    "AvailabilityZone",
    "BilledCost",
    "BillingAccountId",
    "BillingAccountName",
    "BillingAccountType",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "CapacityReservationId",
    "CapacityReservationStatus",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargeFrequency",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "CommitmentDiscountCategory",
    "CommitmentDiscountId",
    "CommitmentDiscountName",
    "CommitmentDiscountQuantity",
    "CommitmentDiscountStatus",
    "CommitmentDiscountType",
    "CommitmentDiscountUnit",
    "ConsumedQuantity",
    "ConsumedUnit",
    "ContractedCost",
    "ContractedUnitPrice",
    "EffectiveCost",
    "InvoiceId",
    "InvoiceIssuerName",
    "ListCost",
    "ListUnitPrice",
    "PricingCategory",
    "PricingCurrency",
    "PricingCurrencyContractedUnitPrice",
    "PricingCurrencyEffectiveCost",
    "PricingCurrencyListUnitPrice",
    "PricingQuantity",
    "PricingUnit",
    "ProviderName",
    "PublisherName",
    "RegionId",
    "RegionName",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "ServiceCategory",
    "ServiceName",
    "ServiceSubcategory",
    "SkuId",
    "SkuMeter",
    "SkuPriceDetails",
    "SkuPriceId",
    "SubAccountId",
    "SubAccountName",
    "SubAccountType",
    "Tags",
    "x_Project",
    "x_Queue",
    "x_Cluster",
    "x_GpuModel",
    "x_Milli",
    "x_JobId",
    "x_WorkloadType",
    "x_Task",
    "x_Replica",
    "x_User",
    "x_EndedByPreemption",
    "x_UsageStart",
    "x_UsageEnd",
];

const GPU_HOURS: &str = "GPU-Hours";

fn ts(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn ts_ms(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Milli as a GPU count with three decimals (`250` -> `0.250`).
fn gpus_str(milli: u32) -> String {
    format!("{}.{:03}", milli / 1000, milli % 1000)
}

/// One row's values, in [`FOCUS_COLUMNS`] order.
fn row(c: &Charge, cfg: &FocusConfig, period: Period) -> Vec<(Kind, Option<String>)> {
    let iv = &c.interval;
    let some = |s: &str| Some(s.to_string());
    let charge_start = c.day.max(period.start);
    let charge_end = (c.day + Duration::days(1)).min(period.end);
    let tags: BTreeMap<&str, String> = BTreeMap::from([
        ("grus.io/cluster", iv.cluster.clone()),
        ("grus.io/job", iv.job.to_string()),
        ("grus.io/project", iv.project.clone()),
        ("grus.io/queue", iv.queue.clone()),
        ("grus.io/user", iv.user.clone()),
    ]);
    let tags = serde_json::to_string(&tags).expect("a map of strings serializes");
    let contracted = c.contracted_cost.to_string();
    let contracted_unit = micros_str(c.price.contracted());
    let list_unit = micros_str(c.price.list_micros);
    let quantity = c.gpu_hours.to_string();
    let (account_id, account_name) = match &iv.account {
        Some(a) => (&a.id, &a.name),
        None => (&cfg.billing_account_id, &cfg.billing_account_name),
    };
    vec![
        (Text, None),
        (Decimal, Some(contracted.clone())),
        (Text, some(account_id)),
        (Text, some(account_name)),
        (Text, some("Tenant")),
        (Text, some(&cfg.currency)),
        (DateTime, Some(ts(period.end))),
        (DateTime, Some(ts(period.start))),
        (Text, None),
        (Text, None),
        (Text, some("Usage")),
        (Text, None),
        (
            Text,
            Some(format!(
                "{} {} GPU for job {} task {} replica {} on cluster {}",
                gpus_str(iv.milli),
                iv.gpu_model,
                iv.job,
                iv.task,
                iv.replica,
                iv.cluster
            )),
        ),
        (Text, some("Usage-Based")),
        (DateTime, Some(ts(charge_end))),
        (DateTime, Some(ts(charge_start))),
        (Text, None),
        (Text, None),
        (Text, None),
        (Decimal, None),
        (Text, None),
        (Text, None),
        (Text, None),
        (Decimal, Some(quantity.clone())),
        (Text, some(GPU_HOURS)),
        (Decimal, Some(contracted.clone())),
        (Decimal, Some(contracted_unit.clone())),
        (Decimal, Some(contracted.clone())),
        (Text, cfg.invoice_id.clone()),
        (Text, some(&cfg.invoice_issuer_name)),
        (Decimal, Some(c.list_cost.to_string())),
        (Decimal, Some(list_unit.clone())),
        (Text, some("Standard")),
        (Text, some(&cfg.currency)),
        (Decimal, Some(contracted_unit)),
        (Decimal, Some(contracted)),
        (Decimal, Some(list_unit)),
        (Decimal, Some(quantity)),
        (Text, some(GPU_HOURS)),
        (Text, some(&cfg.provider_name)),
        (Text, some(&cfg.publisher_name)),
        (Text, cfg.region_id.clone()),
        (Text, cfg.region_name.clone()),
        (Text, Some(format!("{}/job/{}/{}/{}", iv.cluster, iv.job, iv.task, iv.replica))),
        (Text, Some(format!("job {} {}-{}", iv.job, iv.task, iv.replica))),
        (Text, some("GPU Replica")),
        (Text, some("AI and Machine Learning")),
        (Text, some(&cfg.service_name)),
        (Text, some("AI Platforms")),
        (Text, Some(format!("gpu-hour/{}", iv.gpu_model))),
        (Text, some(GPU_HOURS)),
        (Json, None),
        (Text, Some(c.price.price_id())),
        (Text, some(&iv.project)),
        (Text, some(&iv.project)),
        (Text, some("Project")),
        (Json, Some(tags)),
        (Text, some(&iv.project)),
        (Text, some(&iv.queue)),
        (Text, some(&iv.cluster)),
        (Text, some(&iv.gpu_model)),
        (Integer, Some(iv.milli.to_string())),
        (Integer, Some(iv.job.to_string())),
        (Text, some(iv.workload.as_str())),
        (Text, some(&iv.task)),
        (Integer, Some(iv.replica.to_string())),
        (Text, some(&iv.user)),
        (Boolean, Some(iv.ended_by_preemption.to_string())),
        (DateTime, Some(ts_ms(c.start))),
        (DateTime, Some(ts_ms(c.end))),
    ]
}

fn csv_field(out: &mut String, v: &str) {
    if v.contains([',', '"', '\r', '\n']) {
        out.push('"');
        out.push_str(&v.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(v);
    }
}

/// The period's charges as FOCUS CSV: a header, then one CRLF-terminated record per charge.
pub fn focus_csv(
    intervals: &[LedgerInterval],
    book: &PriceBook,
    period: Period,
    cfg: &FocusConfig,
) -> Result<String, BillingError> {
    let mut out = FOCUS_COLUMNS.join(",");
    out.push_str("\r\n");
    for c in charges(intervals, book, period)? {
        for (i, (_, v)) in row(&c, cfg, period).iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            csv_field(&mut out, v.as_deref().unwrap_or(""));
        }
        out.push_str("\r\n");
    }
    Ok(out)
}

/// The period's charges as FOCUS JSON Lines: one object per charge, keys in column order.
pub fn focus_jsonl(
    intervals: &[LedgerInterval],
    book: &PriceBook,
    period: Period,
    cfg: &FocusConfig,
) -> Result<String, BillingError> {
    let mut out = String::new();
    for c in charges(intervals, book, period)? {
        out.push('{');
        for (i, (name, (kind, v))) in FOCUS_COLUMNS.iter().zip(row(&c, cfg, period)).enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(name).expect("a string serializes"));
            out.push(':');
            match (kind, v) {
                (_, None) => out.push_str("null"),
                // Decimal and integer strings are valid JSON numbers as they are; writing them
                // raw keeps every digit (no float round trip).
                (Decimal | Integer | Boolean | Json, Some(v)) => out.push_str(&v),
                (Text | DateTime, Some(v)) => out.push_str(&serde_json::to_string(&v).expect("a string serializes")),
            }
        }
        out.push_str("}\n");
    }
    Ok(out)
}
