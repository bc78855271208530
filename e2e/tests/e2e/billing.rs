//! Billing end to end, signed in through a real OIDC provider: the FOCUS CSV export of a
//! period equals the sum over the usage ledger's replica run intervals of duration × milli ×
//! price, computed here independently from the ledger and the price book (exact decimals,
//! prices changing mid-period), and the ledger itself matches what the replicas did.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, DurationRound, Utc};
use grus_testkit::env::free_port;
use grus_testkit::oidc::{TestProvider, AUDIENCE, CLIENT_ID, CLIENT_SECRET};
use grus_testkit::stack::{id_of, job_input, portal_login, seed_tenancy, submit, Auth};
use grus_testkit::{Deadline, Stack, StackConfig};
use serde_json::json;

use crate::trail;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_focus_export_equals_run_intervals_times_prices() {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let provider = TestProvider::start(&format!("{base}/auth/callback"), &format!("{base}/"));
    let config = StackConfig {
        auth: Auth::Oidc {
            issuer: provider.issuer.clone(),
            audience: AUDIENCE.into(),
            client_id: CLIENT_ID.into(),
            client_secret: CLIENT_SECRET.into(),
            platform_admin: "admin".into(),
        },
        api_port: Some(port),
        ..StackConfig::default()
    };
    let mut stack = Stack::start(config).await;
    let admin = portal_login(&base, "admin").await;
    let alice = portal_login(&base, "alice").await;
    let me = alice.data("{ me { subject } }", json!({})).await;
    assert_eq!(me["me"]["subject"], "alice", "signed in through the provider");
    let t = seed_tenancy(&admin, "alice").await;
    stack.add_cluster(&admin, "east", "1x4xA100-80GB,1x4xT4").await;
    stack.wait_clusters_ready(&admin).await;

    let start = Utc::now().duration_trunc(Duration::seconds(1)).unwrap() - Duration::minutes(1);
    let set_price = |model: &str, list: &str, contracted: &str, from: DateTime<Utc>| {
        let (admin, model, list, contracted) =
            (admin.clone(), model.to_owned(), list.to_owned(), contracted.to_owned());
        async move {
            admin
                .data(
                    "mutation($m: String!, $l: String!, $c: String, $f: DateTime!) { setPrice(gpuModel: $m, \
                     listPricePerGpuHour: $l, contractedPricePerGpuHour: $c, effectiveFrom: $f) { id } }",
                    json!({ "m": model, "l": list, "c": contracted, "f": from.to_rfc3339() }),
                )
                .await
        }
    };
    set_price("A100-80GB", "2.50", "2.10", start - Duration::days(1)).await;
    set_price("T4", "0.35", "0.35", start - Duration::days(1)).await;

    // Whole GPUs, a half GPU, and a job that runs across an A100 price change.
    let mut jobs = vec![
        submit(&alice, job_input("pair", &[("main", 2, 1, &["A100-80GB"])], 2.0)).await,
        submit(&alice, job_input("t4", &[("main", 1, 1, &["T4"])], 3.0)).await,
    ];
    let mut half = job_input("half-t4", &[("main", 1, 1, &["T4"])], 3.0);
    half["tasks"][0]["resources"]["gpuMilli"] = json!(500);
    jobs.push(submit(&alice, half).await);
    for id in &jobs {
        stack.wait_state(&alice, id, "SUCCEEDED").await;
    }
    // The A100 price changes one second into the last job's run (a past instant by then:
    // nothing of this period is exported yet), so its interval is charged at both prices.
    let across = submit(&alice, job_input("across", &[("main", 1, 2, &["A100-80GB"])], 4.0)).await;
    stack.wait_state(&alice, &across, "RUNNING").await;
    let running = trail::ledger(&stack.db.pool, Some(id_of(&across))).await;
    let change = running.first().expect("an open interval").started_at + Duration::seconds(1);
    set_price("A100-80GB", "3.10", "2.655", change).await;
    stack.wait_state(&alice, &across, "SUCCEEDED").await;
    jobs.push(across);
    for (id, replicas) in jobs.iter().zip([2, 1, 1, 1]) {
        trail::assert_ran_once_and_succeeded(&stack.db.pool, id_of(id), replicas).await;
    }

    // A closed period around all of it.
    let end = Utc::now().duration_trunc(Duration::seconds(1)).unwrap() + Duration::seconds(1);
    let closed = Deadline::new("the period to end", std::time::Duration::from_secs(10));
    while Utc::now() <= end {
        closed.tick(String::new).await;
    }
    let period = json!({ "start": start.to_rfc3339(), "end": end.to_rfc3339() });
    let export = "mutation($p: PeriodInput!, $t: ID) { exportUsage(period: $p, format: FOCUS_CSV, tenantId: $t) \
                  { rows sha256 downloadUrl } }";
    let exported = admin.data(export, json!({ "p": period, "t": t.tenant_id })).await["exportUsage"].clone();
    let (status, csv) = admin.get(exported["downloadUrl"].as_str().expect("downloadUrl")).await;
    assert_eq!(status, 200, "{csv}");
    let rows = parse_csv(&csv);
    assert_eq!(rows.len() as i64, exported["rows"].as_i64().unwrap(), "{exported}");

    // The independent computation: every ledger interval in the period, cut at price changes
    // and UTC midnights, charged price × milli × ms / 3_600_000 nano-units, rounded half up.
    let ledger = trail::ledger(&stack.db.pool, None).await;
    assert_eq!(ledger.len(), 5, "{ledger:?}");
    let prices = price_book(&stack).await;
    let mut expected = Totals::default();
    for iv in &ledger {
        let (s, e) = (iv.started_at.max(start), iv.ended_at.expect("closed").min(end));
        for p in prices.iter().filter(|p| p.model == iv.gpu_model) {
            let (mut a, b) = (s.max(p.from), p.to.map_or(e, |to| e.min(to)));
            while a < b {
                let midnight = a.duration_trunc(Duration::days(1)).unwrap() + Duration::days(1);
                let next = midnight.min(b);
                let ms = (next - a).num_milliseconds() as i128;
                if ms > 0 {
                    let milli = iv.gpu_milli as i128;
                    expected.rows += 1;
                    expected.list += half_up(p.list_micros * milli * ms, 3_600_000);
                    expected.contracted += half_up(p.contracted_micros * milli * ms, 3_600_000);
                    expected.gpu_hours += half_up(milli * ms * 10, 36);
                    *expected.per_job.entry(iv.job_id).or_default() +=
                        half_up(p.contracted_micros * milli * ms, 3_600_000);
                }
                a = next;
            }
        }
    }
    assert!(expected.rows >= 6, "the A100 price change splits the last job's interval: {expected:?}");
    let mut got = Totals::default();
    for r in &rows {
        got.rows += 1;
        got.list += nanos(&r["ListCost"]);
        got.contracted += nanos(&r["ContractedCost"]);
        got.gpu_hours += nanos(&r["PricingQuantity"]);
        assert_eq!(r["BilledCost"], r["ContractedCost"], "billed at the contracted price: {r:?}");
        assert_eq!(r["ChargeCategory"], "Usage");
        assert_eq!(r["PricingUnit"], "GPU-Hours");
        *got.per_job.entry(r["x_JobId"].parse().expect("x_JobId")).or_default() += nanos(&r["BilledCost"]);
    }
    assert_eq!(got, expected, "the export equals the ledger × the price book");
    // Each job's own cost (the `Workload` interface's) is its part of the same sum.
    for (job, cost) in &expected.per_job {
        let v = alice
            .data("query($id: ID!) { job(id: $id) { cost { effectiveCost } } }", json!({ "id": job.to_string() }))
            .await;
        assert_eq!(nanos(v["job"]["cost"]["effectiveCost"].as_str().expect("a cost")), *cost, "job {job}: {v}");
    }

    // Idempotent per period: the same bytes again.
    let again = admin.data(export, json!({ "p": period, "t": t.tenant_id })).await["exportUsage"].clone();
    assert_eq!(again["sha256"], exported["sha256"]);
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Totals {
    rows: usize,
    list: i128,
    contracted: i128,
    gpu_hours: i128,
    per_job: BTreeMap<i64, i128>,
}

fn half_up(num: i128, den: i128) -> i128 {
    (num + den / 2) / den
}

struct Price {
    model: String,
    list_micros: i128,
    contracted_micros: i128,
    from: DateTime<Utc>,
    to: Option<DateTime<Utc>>,
}

/// model, list and contracted price (as text), effective from, effective to.
type PriceRow = (String, String, String, DateTime<Utc>, Option<DateTime<Utc>>);

/// The price book as stored (numeric(18, 6) read as text: no float anywhere).
async fn price_book(stack: &Stack) -> Vec<Price> {
    let rows: Vec<PriceRow> = sqlx::query_as(
        "SELECT gpu_model, list_price_per_gpu_hour::text, contracted_price_per_gpu_hour::text, effective_from, \
         effective_to FROM price_book ORDER BY gpu_model, effective_from",
    )
    .fetch_all(&stack.db.pool)
    .await
    .expect("price book");
    assert_eq!(rows.len(), 3, "two T4/A100 prices and the A100 change");
    rows.into_iter()
        .map(|(model, list, contracted, from, to)| Price {
            model,
            list_micros: fixed(&list, 6),
            contracted_micros: fixed(&contracted, 6),
            from,
            to,
        })
        .collect()
}

/// A non-negative decimal string as an integer of `digits` fractional digits, exactly.
fn fixed(s: &str, digits: usize) -> i128 {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    assert!(frac.len() <= digits, "{s} has more than {digits} decimals");
    let frac = format!("{frac:0<digits$}");
    format!("{int}{frac}").parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn nanos(s: &str) -> i128 {
    fixed(s, 9)
}

/// RFC 4180 CSV (quoted fields, doubled quotes, CRLF) into rows keyed by the header.
fn parse_csv(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut records: Vec<Vec<String>> = Vec::new();
    let (mut record, mut field) = (Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    let header = records.first().cloned().expect("a header line");
    records[1..]
        .iter()
        .map(|r| {
            assert_eq!(r.len(), header.len(), "every row has every column: {r:?}");
            header.iter().cloned().zip(r.iter().cloned()).collect()
        })
        .collect()
}
