//! Billing: price segments, exact costs, grouping, and FOCUS exports that are byte-identical
//! for the same period whatever the input order.

use chrono::{DateTime, Duration, TimeZone, Utc};
use grus_api::billing::*;
use proptest::prelude::*;

fn t(d: u32, h: u32, m: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, d, h, m, 0).unwrap()
}

fn march() -> Period {
    Period { start: t(1, 0, 0), end: Utc.with_ymd_and_hms(2026, 4, 1, 0, 0, 0).unwrap() }
}

/// A100: $3.60 list, $2.88 contracted until the 10th noon, then $4.00 list (no contract).
/// V100: $1.00 list throughout.
fn book() -> PriceBook {
    PriceBook::new(vec![
        PriceEntry {
            model: "A100".into(),
            list_micros: 3_600_000,
            contracted_micros: Some(2_880_000),
            effective_from: t(1, 0, 0) - Duration::days(365),
            effective_to: Some(t(10, 12, 0)),
        },
        PriceEntry {
            model: "A100".into(),
            list_micros: 4_000_000,
            contracted_micros: None,
            effective_from: t(10, 12, 0),
            effective_to: None,
        },
        PriceEntry {
            model: "V100".into(),
            list_micros: 1_000_000,
            contracted_micros: None,
            effective_from: t(1, 0, 0) - Duration::days(365),
            effective_to: None,
        },
    ])
    .unwrap()
}

fn iv(model: &str, milli: u32, start: DateTime<Utc>, end: DateTime<Utc>) -> LedgerInterval {
    LedgerInterval {
        project: "vision".into(),
        queue: "default".into(),
        cluster: "c1".into(),
        gpu_model: model.into(),
        milli,
        start,
        end,
        job: 42,
        workload: grus_api::domain::WorkloadType::Batch,
        task: "main".into(),
        replica: 0,
        user: "alice".into(),
        ended_by_preemption: false,
        account: None,
    }
}

fn cfg() -> FocusConfig {
    FocusConfig {
        currency: "USD".into(),
        provider_name: "Grus".into(),
        publisher_name: "Grus".into(),
        invoice_issuer_name: "Example GPU Cloud".into(),
        billing_account_id: "tenant-1".into(),
        billing_account_name: "Tenant One".into(),
        service_name: "Grus GPU Jobs".into(),
        invoice_id: None,
        region_id: None,
        region_name: None,
    }
}

#[test]
fn price_at_follows_effective_dates() {
    let b = book();
    assert_eq!(b.price_at("A100", t(10, 11, 59)).unwrap().list_micros, 3_600_000);
    assert_eq!(b.price_at("A100", t(10, 12, 0)).unwrap().list_micros, 4_000_000);
    assert!(b.price_at("H100", t(10, 12, 0)).is_none());
}

#[test]
fn overlapping_or_invalid_prices_are_refused() {
    let mut e = book().entries().to_vec();
    e[1].effective_from = t(10, 11, 0);
    assert!(matches!(PriceBook::new(e), Err(BillingError::OverlappingPrices { .. })));
    let mut e = book().entries().to_vec();
    e[0].list_micros = -1;
    assert!(matches!(PriceBook::new(e), Err(BillingError::InvalidPrice { .. })));
}

#[test]
fn an_interval_crossing_a_price_change_is_split_at_it() {
    let c = charges(&[iv("A100", 1000, t(10, 10, 0), t(10, 14, 0))], &book(), march()).unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!((c[0].start, c[0].end), (t(10, 10, 0), t(10, 12, 0)));
    // 2 GPU-hours at 3.60 list / 2.88 contracted, then 2 at 4.00.
    assert_eq!(c[0].list_cost.to_string(), "7.200000000");
    assert_eq!(c[0].contracted_cost.to_string(), "5.760000000");
    assert_eq!(c[1].list_cost.to_string(), "8.000000000");
    assert_eq!(c[1].contracted_cost.to_string(), "8.000000000");
    assert_eq!(c[1].gpu_hours.to_string(), "2.000000000");
}

#[test]
fn an_interval_crossing_midnight_is_split_per_day() {
    let c = charges(&[iv("V100", 1000, t(3, 23, 0), t(4, 1, 0))], &book(), march()).unwrap();
    assert_eq!(
        c.iter().map(|c| (c.day, c.start, c.end)).collect::<Vec<_>>(),
        [(t(3, 0, 0), t(3, 23, 0), t(4, 0, 0)), (t(4, 0, 0), t(4, 0, 0), t(4, 1, 0))]
    );
}

#[test]
fn fractional_gpus_are_charged_by_their_milli_share() {
    // A quarter of a V100 for 2 hours at $1.00 = $0.50; 8 GPUs for 30 min = $4.00.
    let c = charges(
        &[iv("V100", 250, t(2, 0, 0), t(2, 2, 0)), iv("V100", 8000, t(2, 5, 0), t(2, 5, 30))],
        &book(),
        march(),
    )
    .unwrap();
    assert_eq!(c[0].list_cost, Nanos(500_000_000));
    assert_eq!(c[0].gpu_hours, Nanos(500_000_000));
    assert_eq!(c[1].list_cost, Nanos(4_000_000_000));
}

#[test]
fn rounding_is_half_up_per_charge() {
    // 1 milli of a $1.00 GPU for 1.8 s = 1e-3 x 5e-4 $ = 500 nano-units exactly.
    assert_eq!(cost_nanos(1_000_000, 1, 1800), Nanos(500));
    // At $0.000001 per GPU-hour, 1 milli for 1800 s is exactly half a nano-unit: rounds up.
    assert_eq!(cost_nanos(1, 1, 1_800_000), Nanos(1));
    assert_eq!(cost_nanos(1, 1, 1_799_999), Nanos(0));
    assert_eq!(gpu_hours_nanos(1, 1), Nanos(0));
    assert_eq!(gpu_hours_nanos(1000, 3_600_000), Nanos(1_000_000_000));
}

#[test]
fn a_model_without_a_price_is_an_error() {
    let r = charges(&[iv("H100", 1000, t(2, 0, 0), t(2, 1, 0))], &book(), march());
    assert_eq!(r, Err(BillingError::NoPrice { model: "H100".into(), at: t(2, 0, 0) }));
}

#[test]
fn usage_is_grouped_and_clipped_to_the_period() {
    let mut bob = iv("V100", 1000, t(2, 0, 0), t(2, 3, 0));
    bob.user = "bob".into();
    bob.project = "nlp".into();
    let ivs = [
        // Starts in February: only the March part counts.
        iv("V100", 1000, t(1, 0, 0) - Duration::hours(5), t(1, 1, 0)),
        iv("V100", 500, t(2, 0, 0), t(2, 2, 0)),
        bob,
    ];
    let rows = group_usage(&ivs, &book(), &[Dim::Project, Dim::Day], march()).unwrap();
    let flat: Vec<(Vec<String>, String, String)> = rows
        .iter()
        .map(|r| (r.key.iter().map(|(_, v)| v.clone()).collect(), r.gpu_hours.to_string(), r.list_cost.to_string()))
        .collect();
    assert_eq!(
        flat,
        vec![
            (vec!["nlp".into(), "2026-03-02".into()], "3.000000000".into(), "3.000000000".into()),
            (vec!["vision".into(), "2026-03-01".into()], "1.000000000".into(), "1.000000000".into()),
            (vec!["vision".into(), "2026-03-02".into()], "1.000000000".into(), "1.000000000".into()),
        ]
    );
    let total = group_usage(&ivs, &book(), &[], march()).unwrap();
    assert_eq!(total.len(), 1);
    assert_eq!(total[0].list_cost, Nanos(5_000_000_000));
    let by_user = group_usage(&ivs, &book(), &[Dim::User, Dim::Cluster, Dim::GpuModel, Dim::Queue], march()).unwrap();
    assert_eq!(by_user.len(), 2);
}

#[test]
fn usage_is_grouped_by_workload_type() {
    let mut serving = iv("V100", 1000, t(2, 0, 0), t(2, 3, 0));
    serving.workload = grus_api::domain::WorkloadType::Inference;
    let mut notebook = iv("V100", 500, t(2, 0, 0), t(2, 2, 0));
    notebook.workload = grus_api::domain::WorkloadType::Workspace;
    let ivs = [iv("V100", 1000, t(1, 0, 0), t(1, 1, 0)), serving, notebook];
    let rows = group_usage(&ivs, &book(), &[Dim::WorkloadType], march()).unwrap();
    let flat: Vec<(String, String)> = rows.iter().map(|r| (r.key[0].1.clone(), r.gpu_hours.to_string())).collect();
    assert_eq!(
        flat,
        [
            ("batch".to_owned(), "1.000000000".to_owned()),
            ("inference".to_owned(), "3.000000000".to_owned()),
            ("workspace".to_owned(), "1.000000000".to_owned()),
        ]
    );
}

#[test]
fn focus_csv_has_every_mandatory_column_and_quotes_per_rfc_4180() {
    let mut i = iv("A100", 1000, t(10, 10, 0), t(10, 14, 0));
    i.user = "o'neil, \"ops\"".into();
    let csv = focus_csv(&[i], &book(), march(), &cfg()).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for col in [
        "BilledCost",
        "BillingAccountId",
        "BillingAccountName",
        "BillingCurrency",
        "BillingPeriodEnd",
        "BillingPeriodStart",
        "ChargeCategory",
        "ChargeClass",
        "ChargeDescription",
        "ChargePeriodEnd",
        "ChargePeriodStart",
        "ConsumedQuantity",
        "ConsumedUnit",
        "ContractedCost",
        "ContractedUnitPrice",
        "EffectiveCost",
        "InvoiceIssuerName",
        "ListCost",
        "ListUnitPrice",
        "PricingQuantity",
        "PricingUnit",
        "ProviderName",
        "PublisherName",
        "ResourceId",
        "ResourceName",
        "ServiceCategory",
        "ServiceName",
        "SkuId",
        "SkuPriceId",
        "SubAccountId",
        "SubAccountName",
        "Tags",
        "x_Project",
        "x_Queue",
        "x_Cluster",
        "x_GpuModel",
        "x_Milli",
        "x_JobId",
        "x_WorkloadType",
        "x_User",
        "x_EndedByPreemption",
    ] {
        assert!(header.contains(&col), "missing {col}");
    }
    assert!(csv.ends_with("\r\n"));
    assert!(csv.contains(",42,batch,main,0,"), "the workload type follows the job id: {csv}");
    assert_eq!(csv.matches("\r\n").count(), 3, "header and two price segments");
    assert!(csv.contains(",\"o'neil, \"\"ops\"\"\","), "{csv}");
    let first = csv.split("\r\n").nth(1).unwrap();
    assert!(first.starts_with(
        ",5.760000000,tenant-1,Tenant One,Tenant,USD,2026-04-01T00:00:00Z,2026-03-01T00:00:00Z,,,Usage,,"
    ));
    assert!(first.contains(",Usage-Based,2026-03-11T00:00:00Z,2026-03-10T00:00:00Z,"));
    assert!(first.contains(
        ",AI and Machine Learning,Grus GPU Jobs,AI Platforms,gpu-hour/A100,GPU-Hours,,A100@2025-03-01T00:00:00Z,"
    ));
}

#[test]
fn focus_jsonl_parses_and_keeps_decimals_exact() {
    let csv_rows = charges(&[iv("A100", 1000, t(10, 10, 0), t(10, 14, 0))], &book(), march()).unwrap().len();
    let jsonl = focus_jsonl(&[iv("A100", 1000, t(10, 10, 0), t(10, 14, 0))], &book(), march(), &cfg()).unwrap();
    let rows: Vec<serde_json::Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), csv_rows);
    assert!(jsonl.contains("\"BilledCost\":5.760000000,"));
    assert_eq!(rows[0]["ChargeCategory"], "Usage");
    assert_eq!(rows[0]["ChargeClass"], serde_json::Value::Null);
    assert_eq!(rows[0]["PricingUnit"], "GPU-Hours");
    assert_eq!(rows[0]["Tags"]["grus.io/project"], "vision");
    assert_eq!(rows[0]["x_Milli"], 1000);
    assert_eq!(rows[0]["x_EndedByPreemption"], false);
    assert_eq!(rows[1]["x_UsageStart"], "2026-03-10T12:00:00.000Z");
    let keys: Vec<&String> = rows[0].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), FOCUS_COLUMNS.len());
}

#[test]
fn billed_cost_sums_to_usage_times_price_when_exact() {
    let ivs = [
        iv("A100", 1000, t(9, 22, 0), t(10, 14, 0)),
        iv("A100", 500, t(20, 0, 0), t(20, 6, 0)),
        iv("V100", 250, t(31, 20, 0), t(31, 23, 0)),
    ];
    let jsonl = focus_jsonl(&ivs, &book(), march(), &cfg()).unwrap();
    let billed: i128 = jsonl.lines().map(|l| raw_nanos(l, "BilledCost")).sum();
    // A100: 14 h at 2.88 (2 before midnight, 12 after) + 2 h at 4.00; 3 GPU-h at 4.00;
    // V100: 0.75 GPU-h at 1.00.
    let expected = 14.0 * 2.88 + 2.0 * 4.0 + 3.0 * 4.0 + 0.75;
    assert_eq!(billed, (expected * 1e9_f64).round() as i128);
}

/// Reads a decimal JSON number from the raw line (serde_json would go through f64).
fn raw_nanos(line: &str, key: &str) -> i128 {
    let at = line.find(&format!("\"{key}\":")).unwrap() + key.len() + 3;
    let v: &str = line[at..].split(',').next().unwrap();
    dec_nanos(v)
}

fn dec_nanos(v: &str) -> i128 {
    let (int, frac) = v.split_once('.').unwrap();
    assert_eq!(frac.len(), 9);
    int.parse::<i128>().unwrap() * 1_000_000_000 + frac.parse::<i128>().unwrap()
}

fn csv_column_sum(csv: &str, col: &str) -> i128 {
    let mut lines = csv.split("\r\n");
    let idx = lines.next().unwrap().split(',').position(|c| c == col).unwrap();
    lines.filter(|l| !l.is_empty()).map(|l| dec_nanos(l.split(',').nth(idx).unwrap())).sum()
}

fn arb_intervals() -> impl Strategy<Value = Vec<LedgerInterval>> {
    let one = (
        0u8..3,
        prop_oneof![Just("A100"), Just("V100")],
        prop_oneof![Just(250u32), Just(1000), Just(8000), 1u32..1000],
        // Minutes since Feb 28 00:00, so some intervals start before the period.
        0i64..(40 * 24 * 60),
        1i64..(3 * 24 * 60 * 60 * 1000),
        any::<bool>(),
        0u32..3,
    )
        .prop_map(|(p, m, milli, start_min, dur_ms, pre, replica)| {
            let start = Utc.with_ymd_and_hms(2026, 2, 28, 0, 0, 0).unwrap() + Duration::minutes(start_min);
            let mut i = iv(m, milli, start, start + Duration::milliseconds(dur_ms));
            i.project = format!("p{p}");
            i.user = format!("u,{p}");
            i.ended_by_preemption = pre;
            i.replica = replica;
            i.job = p as u64 + 1;
            i
        });
    prop::collection::vec(one, 0..25)
}

/// The exact cost in units of 1e-9 / 3_600_000 (no rounding), computed from the raw
/// intervals independently of the charge splitting.
fn exact_numerator(ivs: &[LedgerInterval], book: &PriceBook, p: Period, contracted: bool) -> i128 {
    let mut total = 0i128;
    for i in ivs {
        let (s, e) = (i.start.max(p.start), i.end.min(p.end));
        if s >= e {
            continue;
        }
        // Walk the book's entries directly.
        for entry in book.entries().iter().filter(|x| x.model == i.gpu_model) {
            let from = entry.effective_from.max(s);
            let to = entry.effective_to.map_or(e, |x| x.min(e));
            if from < to {
                let price =
                    if contracted { entry.contracted_micros.unwrap_or(entry.list_micros) } else { entry.list_micros };
                total += price as i128 * i.milli as i128 * (to - from).num_milliseconds() as i128;
            }
        }
    }
    total
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The same period yields byte-identical CSV and JSON Lines whatever the input order,
    /// and the billed, list and grouped totals equal usage x price (within half a nano-unit
    /// per charge of the unrounded value, and exactly equal to each other).
    #[test]
    fn exports_are_byte_identical_and_sum_to_usage_times_price(ivs in arb_intervals(), seed in any::<u64>()) {
        let b = book();
        let csv = focus_csv(&ivs, &b, march(), &cfg()).unwrap();
        let jsonl = focus_jsonl(&ivs, &b, march(), &cfg()).unwrap();
        let mut shuffled = ivs.clone();
        let n = shuffled.len().max(1);
        shuffled.rotate_left(seed as usize % n);
        shuffled.reverse();
        prop_assert_eq!(&csv, &focus_csv(&shuffled, &b, march(), &cfg()).unwrap());
        prop_assert_eq!(&jsonl, &focus_jsonl(&shuffled, &b, march(), &cfg()).unwrap());

        let rows = charges(&ivs, &b, march()).unwrap().len() as i128;
        let billed: i128 = jsonl.lines().map(|l| raw_nanos(l, "BilledCost")).sum();
        let exact = exact_numerator(&ivs, &b, march(), true);
        // |billed x 3.6e6 - exact| <= rows x 1.8e6 (half a nano-unit per charge).
        prop_assert!((billed * 3_600_000 - exact).abs() <= rows * 1_800_000, "billed {billed}, exact {exact}/3.6e6");
        let list = csv_column_sum(&csv, "ListCost");
        let exact_list = exact_numerator(&ivs, &b, march(), false);
        prop_assert!((list * 3_600_000 - exact_list).abs() <= rows * 1_800_000);

        let grouped = group_usage(&ivs, &b, &[Dim::Project, Dim::Day, Dim::GpuModel], march()).unwrap();
        prop_assert_eq!(grouped.iter().map(|r| r.contracted_cost.0).sum::<i128>(), billed);
        prop_assert_eq!(grouped.iter().map(|r| r.list_cost.0).sum::<i128>(), list);
    }
}
