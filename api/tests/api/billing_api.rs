//! Billing through the router against the real PostgreSQL: the price book and its rules,
//! usage sums by milli share and price segment, grouping by every dimension, who sees what,
//! FOCUS exports that are byte-identical when repeated (also when rebuilt from scratch), and
//! the download route.
//!
//! Usage-ledger rows are inserted directly (the event ingester writes them in production).

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use grus_api::db::{self, Scope};
use grus_api::domain::Role;
use grus_testkit::api::TestApi;
use grus_testkit::client::{code, gql, send};
use grus_testkit::seed::{self, gpu_job, Fixture};
use grus_testkit::TestDb;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

struct World {
    db: TestDb,
    app: Router,
    ta: i64,
    tb: i64,
    pa: i64,
    queue_pa_batch: i64,
    member: i64,
    fa: Fixture,
}

/// One replica of a new job in `f`'s project, for ledger rows to point at.
async fn replica(pool: &sqlx::PgPool, f: &Fixture, name: &str) -> (i64, i64, i64) {
    let job = seed::insert_job(pool, &gpu_job(f, name, 1, 1, &["A100"]), "user:1").await;
    let task = db::tasks(pool, job).await.unwrap()[0].id;
    let rep = db::replicas(pool, job).await.unwrap()[0].id;
    (job, task, rep)
}

struct Ledger<'a> {
    f: &'a Fixture,
    cluster: &'a str,
    model: &'a str,
    milli: i64,
    start: &'a str,
    end: Option<&'a str>,
}

async fn ledger(pool: &sqlx::PgPool, l: Ledger<'_>) {
    let (job, task, rep) = replica(pool, l.f, &format!("j{}", l.start.replace([':', '-'], "").to_lowercase())).await;
    sqlx::query(
        "INSERT INTO usage_ledger (project_id, queue_id, cluster_id, gpu_model, gpu_milli, started_at, ended_at,
                                   job_id, task_id, replica_id, user_id)
         VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $7::timestamptz, $8, $9, $10, $11)",
    )
    .bind(l.f.project_id)
    .bind(l.f.queue_id)
    .bind(l.cluster)
    .bind(l.model)
    .bind(l.milli)
    .bind(l.start)
    .bind(l.end)
    .bind(job)
    .bind(task)
    .bind(rep)
    .bind(l.f.user_id)
    .execute(pool)
    .await
    .unwrap();
}

const SET_PRICE: &str = "mutation($m: String!, $l: String!, $c: String, $cur: String, $f: DateTime!, $t: DateTime) {
  setPrice(gpuModel: $m, listPricePerGpuHour: $l, contractedPricePerGpuHour: $c, currency: $cur,
           effectiveFrom: $f, effectiveTo: $t) { id gpuModel listPricePerGpuHour contractedPricePerGpuHour
           currency effectiveFrom effectiveTo } }";

async fn set_price(app: &Router, who: &str, model: &str, list: &str, contracted: Option<&str>, from: &str) -> Value {
    gql(app, who, SET_PRICE, json!({ "m": model, "l": list, "c": contracted, "f": from })).await
}

/// Tenants ta (project pa: queues default and batch) and tb (project pb). Users: root
/// (platform admin), tadmin (of ta), member (of pa), outsider (member of pb). Prices: A100
/// $3.60 list / $2.88 contracted, then $4.00 from March 10th noon; V100 $1.00. Ledger, all in
/// March 2026:
/// - pa/default c1 A100 1 GPU, 10th 10:00-14:00 (across the price change);
/// - pa/batch c2 V100 a quarter GPU, 5th 00:00-04:00 (one GPU-hour);
/// - pa/default c1 A100 1 GPU, from the 31st 23:00, still running (clipped at the period end);
/// - pb/default c1 A100 8 GPUs, 20th 00:00-01:00.
async fn world() -> World {
    let t = TestDb::new().await;
    let pool = t.pool.clone();
    let ta = db::create_tenant(&pool, "ta", "Tenant A").await.unwrap();
    let tb = db::create_tenant(&pool, "tb", "Tenant B").await.unwrap();
    let pa = db::create_project(&pool, ta.id, "pa", "PA").await.unwrap();
    let pb = db::create_project(&pool, tb.id, "pb", "PB").await.unwrap();
    let settings = db::QueueSettings::named;
    let qa = db::create_queue(&pool, pa.id, &settings("default")).await.unwrap();
    let qa_batch = db::create_queue(&pool, pa.id, &settings("batch")).await.unwrap();
    let qb = db::create_queue(&pool, pb.id, &settings("default")).await.unwrap();
    seed::platform_admin(&pool, "root").await;
    let tadmin = seed::dev_user(&pool, "tadmin").await;
    db::grant(&pool, tadmin, Scope::Tenant(ta.id), Role::TenantAdmin).await.unwrap();
    let member = seed::member(&pool, pa.id, "member", Role::Member).await;
    let outsider = seed::member(&pool, pb.id, "outsider", Role::Member).await;
    for (i, c) in ["c1", "c2"].iter().enumerate() {
        seed::cluster(&pool, c, i as u8 + 1).await;
    }
    let app = TestApi::new(&pool).router();

    for (model, list, contracted, from) in [
        ("A100", "3.60", Some("2.88"), "2026-01-01T00:00:00Z"),
        ("A100", "4.00", None, "2026-03-10T12:00:00Z"),
        ("V100", "1", None, "2026-01-01T00:00:00Z"),
    ] {
        let v = set_price(&app, "root", model, list, contracted, from).await;
        assert_eq!(code(&v), "OK", "{v}");
    }
    let fa = Fixture { tenant_id: ta.id, project_id: pa.id, user_id: member, queue_id: qa.id };
    let fa_batch = Fixture { queue_id: qa_batch.id, ..fa };
    let fb = Fixture { tenant_id: tb.id, project_id: pb.id, user_id: outsider, queue_id: qb.id };
    let rows = [
        Ledger {
            f: &fa,
            cluster: "c1",
            model: "A100",
            milli: 1000,
            start: "2026-03-10T10:00:00Z",
            end: Some("2026-03-10T14:00:00Z"),
        },
        Ledger {
            f: &fa_batch,
            cluster: "c2",
            model: "V100",
            milli: 250,
            start: "2026-03-05T00:00:00Z",
            end: Some("2026-03-05T04:00:00Z"),
        },
        Ledger { f: &fa, cluster: "c1", model: "A100", milli: 1000, start: "2026-03-31T23:00:00Z", end: None },
        Ledger {
            f: &fb,
            cluster: "c1",
            model: "A100",
            milli: 8000,
            start: "2026-03-20T00:00:00Z",
            end: Some("2026-03-20T01:00:00Z"),
        },
    ];
    for l in rows {
        ledger(&pool, l).await;
    }
    World { db: t, app, ta: ta.id, tb: tb.id, pa: pa.id, queue_pa_batch: qa_batch.id, member, fa }
}

const USAGE: &str = "query($p: PeriodInput!, $g: [UsageDimension!], $f: UsageFilter) {
  usage(period: $p, groupBy: $g, filter: $f) { start end currency rows {
    project queue cluster gpuModel user day gpuHours listCost contractedCost effectiveCost
    gpuHoursValue effectiveCostValue charges } } }";

async fn usage(w: &World, who: &str, group_by: Value, filter: Value) -> Value {
    let v = gql(&w.app, who, USAGE, json!({ "p": { "month": "2026-03" }, "g": group_by, "f": filter })).await;
    assert_eq!(code(&v), "OK", "{v}");
    v["data"]["usage"]["rows"].clone()
}

/// `(key, gpuHours, listCost, contractedCost)` of each row, the key being the grouped field.
/// `(key, gpuHours, listCost, contractedCost)`.
type Summary = (String, String, String, String);

fn summary(rows: &Value, key: &str) -> Vec<Summary> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |f: &str| r[f].as_str().unwrap_or("-").to_owned();
            (s(key), s("gpuHours"), s("listCost"), s("contractedCost"))
        })
        .collect()
}

fn row(k: &str, h: &str, l: &str, c: &str) -> Summary {
    (k.into(), h.into(), l.into(), c.into())
}

#[tokio::test]
async fn usage_sums_fractions_and_price_changes() {
    let w = world().await;
    // pa: 4 h A100 (2 h at 3.60/2.88, 2 h at 4.00), 1 GPU-hour of V100 from a quarter GPU over
    // 4 h, and the running replica's last hour of March at 4.00.
    let total = usage(&w, "member", json!([]), json!(null)).await;
    assert_eq!(summary(&total, "project"), vec![row("-", "6.000000000", "20.200000000", "18.760000000")]);
    assert_eq!(total[0]["effectiveCost"], "18.760000000");
    assert_eq!(total[0]["gpuHoursValue"], 6.0);
    assert_eq!(total[0]["charges"], 4);

    let by_model = usage(&w, "member", json!(["GPU_MODEL"]), json!(null)).await;
    assert_eq!(
        summary(&by_model, "gpuModel"),
        vec![
            row("A100", "5.000000000", "19.200000000", "17.760000000"),
            row("V100", "1.000000000", "1.000000000", "1.000000000")
        ]
    );
    // The price change splits the 10th's interval: one row per day, two charges on the 10th.
    let by_day = usage(&w, "member", json!(["DAY"]), json!({ "gpuModel": "A100" })).await;
    assert_eq!(
        summary(&by_day, "day"),
        vec![
            row("2026-03-10", "4.000000000", "15.200000000", "13.760000000"),
            row("2026-03-31", "1.000000000", "4.000000000", "4.000000000"),
        ]
    );
    assert_eq!(by_day[0]["charges"], 2);

    // Usage of a model without a price is refused with the reason, not priced at zero.
    let f = &w.fa;
    ledger(
        &w.db.pool,
        Ledger {
            f,
            cluster: "c2",
            model: "H100",
            milli: 1000,
            start: "2026-03-02T00:00:00Z",
            end: Some("2026-03-02T01:00:00Z"),
        },
    )
    .await;
    let v = gql(&w.app, "member", USAGE, json!({ "p": { "month": "2026-03" } })).await;
    assert_eq!(code(&v), "CONFLICT", "{v}");
    assert!(v["errors"][0]["message"].as_str().unwrap().contains("no price for GPU model H100"), "{v}");
    // Outside the period it does not matter.
    let feb = gql(&w.app, "member", USAGE, json!({ "p": { "month": "2026-02" } })).await;
    assert_eq!(feb["data"]["usage"]["rows"], json!([]), "{feb}");
}

#[tokio::test]
async fn a_workloads_cost_is_its_ledger_priced_as_usage_prices_it() {
    let w = world().await;
    let pool = &w.db.pool;
    // The 10th's replica: 2 h at 3.60/2.88, 2 h at 4.00.
    let job: i64 = sqlx::query_scalar(
        "SELECT job_id FROM usage_ledger WHERE project_id = $1 AND gpu_model = 'A100' AND ended_at IS NOT NULL",
    )
    .bind(w.pa)
    .fetch_one(pool)
    .await
    .unwrap();
    let q = "query($id: ID!) { job(id: $id) { cost { currency gpuHours listCost effectiveCost gpuHoursValue }
        timeline(limit: 5) { kind message actor } } }";
    let v = gql(&w.app, "member", q, json!({ "id": job.to_string() })).await;
    assert_eq!(
        v["data"]["job"]["cost"],
        json!({ "currency": "USD", "gpuHours": "4.000000000", "listCost": "15.200000000",
                "effectiveCost": "13.760000000", "gpuHoursValue": 4.0 }),
        "{v}"
    );
    assert_eq!(v["data"]["job"]["timeline"][0]["kind"], "pending", "{v}");
    assert_eq!(code(&gql(&w.app, "outsider", q, json!({ "id": job.to_string() })).await), "NOT_FOUND");
    // Through the interface: every live workload of the project answers, the same way.
    let v = gql(
        &w.app,
        "member",
        "{ workloads(project: \"pa\") { __typename id cost { gpuHours } timeline { kind } } }",
        json!({}),
    )
    .await;
    let listed = v["data"]["workloads"].as_array().unwrap_or_else(|| panic!("{v}"));
    let id = job.to_string();
    let this = listed.iter().find(|x| x["id"] == id.as_str()).unwrap_or_else(|| panic!("{v}"));
    assert_eq!(this["cost"]["gpuHours"], "4.000000000", "{v}");
    assert!(listed.iter().all(|x| x["timeline"].as_array().is_some_and(|t| !t.is_empty())), "{v}");
}

#[tokio::test]
async fn usage_groups_by_each_dimension() {
    let w = world().await;
    let cases: [(&str, &str, Vec<Summary>); 6] = [
        (
            "PROJECT",
            "project",
            vec![
                row("pa", "6.000000000", "20.200000000", "18.760000000"),
                row("pb", "8.000000000", "32.000000000", "32.000000000"),
            ],
        ),
        (
            "QUEUE",
            "queue",
            vec![
                row("pa/batch", "1.000000000", "1.000000000", "1.000000000"),
                row("pa/default", "5.000000000", "19.200000000", "17.760000000"),
                row("pb/default", "8.000000000", "32.000000000", "32.000000000"),
            ],
        ),
        (
            "CLUSTER",
            "cluster",
            vec![
                row("c1", "13.000000000", "51.200000000", "49.760000000"),
                row("c2", "1.000000000", "1.000000000", "1.000000000"),
            ],
        ),
        (
            "GPU_MODEL",
            "gpuModel",
            vec![
                row("A100", "13.000000000", "51.200000000", "49.760000000"),
                row("V100", "1.000000000", "1.000000000", "1.000000000"),
            ],
        ),
        (
            "USER",
            "user",
            vec![
                row("dev:member", "6.000000000", "20.200000000", "18.760000000"),
                row("dev:outsider", "8.000000000", "32.000000000", "32.000000000"),
            ],
        ),
        (
            "DAY",
            "day",
            vec![
                row("2026-03-05", "1.000000000", "1.000000000", "1.000000000"),
                row("2026-03-10", "4.000000000", "15.200000000", "13.760000000"),
                row("2026-03-20", "8.000000000", "32.000000000", "32.000000000"),
                row("2026-03-31", "1.000000000", "4.000000000", "4.000000000"),
            ],
        ),
    ];
    for (dim, field, want) in cases {
        let rows = usage(&w, "root", json!([dim]), json!(null)).await;
        assert_eq!(summary(&rows, field), want, "{dim}");
    }
    // Two dimensions: keys in the order asked, other fields null.
    let rows = usage(&w, "root", json!(["PROJECT", "GPU_MODEL"]), json!(null)).await;
    assert_eq!(rows.as_array().unwrap().len(), 3);
    assert_eq!((rows[0]["project"].as_str(), rows[0]["gpuModel"].as_str()), (Some("pa"), Some("A100")));
    assert!(rows[0]["day"].is_null() && rows[0]["cluster"].is_null());
    // Filters combine.
    let batch = usage(&w, "root", json!(["QUEUE"]), json!({ "queueId": w.queue_pa_batch.to_string() })).await;
    assert_eq!(summary(&batch, "queue"), vec![row("pa/batch", "1.000000000", "1.000000000", "1.000000000")]);
    let c2 = usage(&w, "root", json!([]), json!({ "clusterId": "c2", "userId": w.member.to_string() })).await;
    assert_eq!(c2[0]["gpuHours"], "1.000000000");
}

#[tokio::test]
async fn usage_is_authorized_by_project() {
    let w = world().await;
    // Each caller sees only their own projects' rows, whatever the filter.
    for (who, want) in
        [("member", vec!["pa"]), ("tadmin", vec!["pa"]), ("outsider", vec!["pb"]), ("root", vec!["pa", "pb"])]
    {
        let rows = usage(&w, who, json!(["PROJECT"]), json!(null)).await;
        let got: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["project"].as_str().unwrap()).collect();
        assert_eq!(got, want, "{who}");
        let filtered = usage(&w, who, json!(["PROJECT"]), json!({ "userId": w.member.to_string() })).await;
        assert!(filtered.as_array().unwrap().iter().all(|r| want.contains(&r["project"].as_str().unwrap())));
    }
    let v =
        gql(&w.app, "outsider", USAGE, json!({ "p": { "month": "2026-03" }, "f": { "projectId": w.pa.to_string() } }))
            .await;
    assert_eq!(code(&v), "NOT_FOUND", "{v}");
    let v = gql(&w.app, "nobody", USAGE, json!({ "p": { "month": "2026-03" } })).await;
    assert_eq!(v["data"]["usage"]["rows"], json!([]), "{v}");
    for bad in [
        json!({ "month": "2026-13" }),
        json!({}),
        json!({ "start": "2026-03-02T00:00:00Z", "end": "2026-03-01T00:00:00Z" }),
    ] {
        let v = gql(&w.app, "member", USAGE, json!({ "p": bad })).await;
        assert_eq!(code(&v), "VALIDATION", "{v}");
    }
    let v = gql(&w.app, "member", USAGE, json!({ "p": { "month": "2026-03" }, "g": ["DAY", "DAY"] })).await;
    assert_eq!(code(&v), "VALIDATION", "{v}");
}

#[tokio::test]
async fn price_book_rules() {
    let w = world().await;
    let book = gql(
        &w.app,
        "member",
        "{ priceBook { gpuModel listPricePerGpuHour contractedPricePerGpuHour effectiveFrom effectiveTo } }",
        json!({}),
    )
    .await;
    assert_eq!(code(&book), "OK", "{book}");
    // The later A100 price closed the open-ended one at its start.
    assert_eq!(
        book["data"]["priceBook"],
        json!([
            { "gpuModel": "A100", "listPricePerGpuHour": "3.600000", "contractedPricePerGpuHour": "2.880000",
              "effectiveFrom": "2026-01-01T00:00:00+00:00", "effectiveTo": "2026-03-10T12:00:00+00:00" },
            { "gpuModel": "A100", "listPricePerGpuHour": "4.000000", "contractedPricePerGpuHour": "4.000000",
              "effectiveFrom": "2026-03-10T12:00:00+00:00", "effectiveTo": null },
            { "gpuModel": "V100", "listPricePerGpuHour": "1.000000", "contractedPricePerGpuHour": "1.000000",
              "effectiveFrom": "2026-01-01T00:00:00+00:00", "effectiveTo": null },
        ])
    );
    assert_eq!(code(&set_price(&w.app, "tadmin", "H100", "5", None, "2026-01-01T00:00:00Z").await), "FORBIDDEN");
    // Overlap with a bounded range, and a price before the open-ended one's start.
    assert_eq!(code(&set_price(&w.app, "root", "A100", "5", None, "2026-02-01T00:00:00Z").await), "CONFLICT");
    let v = gql(
        &w.app,
        "root",
        SET_PRICE,
        json!({ "m": "V100", "l": "2", "f": "2025-06-01T00:00:00Z", "t": "2026-02-01T00:00:00Z" }),
    )
    .await;
    assert_eq!(code(&v), "CONFLICT", "{v}");
    for (model, list, contracted, field) in [
        ("A100", "1.0000001", None, "listPricePerGpuHour"),
        ("A100", "-1", None, "listPricePerGpuHour"),
        ("A100", "1", Some("abc"), "contractedPricePerGpuHour"),
        ("bad model", "1", None, "gpuModel"),
    ] {
        let v = set_price(&w.app, "root", model, list, contracted, "2027-01-01T00:00:00Z").await;
        assert_eq!(code(&v), "VALIDATION", "{v}");
        assert_eq!(v["errors"][0]["extensions"]["fields"][0]["field"], field, "{v}");
    }
    let v = gql(&w.app, "root", SET_PRICE, json!({ "m": "H100", "l": "1", "cur": "EUR", "f": "2026-01-01T00:00:00Z" }))
        .await;
    assert_eq!(code(&v), "VALIDATION", "{v}");
    // Nothing above changed the book.
    let again = gql(
        &w.app,
        "member",
        "{ priceBook { gpuModel listPricePerGpuHour contractedPricePerGpuHour effectiveFrom effectiveTo } }",
        json!({}),
    )
    .await;
    assert_eq!(again, book);
}

const EXPORT: &str = "mutation($p: PeriodInput!, $f: ExportFormat!, $t: ID) {
  exportUsage(period: $p, format: $f, tenantId: $t) { id tenantId sha256 bytes rows downloadUrl format currency } }";

async fn export(w: &World, who: &str, format: &str, tenant: Option<i64>) -> Value {
    let vars = json!({ "p": { "month": "2026-03" }, "f": format, "t": tenant.map(|t| t.to_string()) });
    gql(&w.app, who, EXPORT, vars).await
}

async fn download(
    app: &Router,
    who: Option<&str>,
    url: &str,
    if_none_match: Option<&str>,
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut req = Request::get(url);
    if let Some(who) = who {
        req = req.header("x-grus-dev-user", who);
    }
    if let Some(tag) = if_none_match {
        req = req.header("if-none-match", tag);
    }
    let answer = send(app, req.body(Body::empty()).unwrap()).await;
    (answer.status, answer.headers, answer.body)
}

#[tokio::test]
async fn exports_are_byte_identical_and_downloadable() {
    let w = world().await;
    let first = export(&w, "root", "FOCUS_CSV", None).await;
    assert_eq!(code(&first), "OK", "{first}");
    let e = first["data"]["exportUsage"].clone();
    // Five charges: the 10th's interval splits at the price change.
    assert_eq!(e["rows"], 5);
    assert_eq!(e["tenantId"], Value::Null);
    assert_eq!(e["currency"], "USD");
    let url = e["downloadUrl"].as_str().unwrap().to_owned();
    assert_eq!(url, format!("/api/exports/{}", e["id"].as_str().unwrap()));

    let (status, headers, body) = download(&w.app, Some("root"), &url, None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/csv"));
    assert_eq!(headers["content-disposition"], "attachment; filename=\"grus-usage-all-2026-03.csv\"");
    let sha = e["sha256"].as_str().unwrap();
    assert_eq!(headers["etag"], format!("\"{sha}\"").as_str());
    assert_eq!(hex::encode(Sha256::digest(&body)), sha);
    assert_eq!(body.len() as i64, e["bytes"].as_i64().unwrap());
    let text = String::from_utf8(body.clone()).unwrap();
    assert_eq!(text.lines().count(), 6, "header and five rows");
    assert!(text.starts_with("AvailabilityZone,BilledCost,BillingAccountId,"));
    // Each row names its own tenant as billing account, also in a platform-wide export.
    assert!(text.contains(",ta,Tenant A,Tenant,USD,") && text.contains(",tb,Tenant B,Tenant,USD,"), "{text}");
    let (status, _, _) = download(&w.app, Some("root"), &url, Some(&format!("\"{sha}\""))).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);

    // Again: the stored file. Then rebuilt from scratch: the same bytes.
    let again = export(&w, "root", "FOCUS_CSV", None).await;
    assert_eq!(again["data"]["exportUsage"], e);
    sqlx::query("DELETE FROM exports").execute(&w.db.pool).await.unwrap();
    let rebuilt = export(&w, "root", "FOCUS_CSV", None).await;
    assert_eq!(rebuilt["data"]["exportUsage"]["sha256"], e["sha256"]);
    let url2 = rebuilt["data"]["exportUsage"]["downloadUrl"].as_str().unwrap().to_owned();
    assert_ne!(url2, url);
    assert_eq!(download(&w.app, Some("root"), &url2, None).await.2, body);

    let jsonl = export(&w, "root", "FOCUS_JSONL", None).await;
    let j = &jsonl["data"]["exportUsage"];
    assert_eq!((j["format"].as_str(), j["rows"].as_i64()), (Some("FOCUS_JSONL"), Some(5)));
    let (status, headers, body) = download(&w.app, Some("root"), j["downloadUrl"].as_str().unwrap(), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/x-ndjson");
    assert_eq!(headers["content-disposition"], "attachment; filename=\"grus-usage-all-2026-03.jsonl\"");
    let text = String::from_utf8(body).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5);
    // 2 h at 2.88, 2 h at 4.00, 8 GPU-hours at 4.00, the V100 quarter, the running last hour.
    let mut billed: Vec<f64> = lines.iter().map(|l| l["BilledCost"].as_f64().unwrap()).collect();
    billed.sort_by(f64::total_cmp);
    assert_eq!(billed, [1.0, 4.0, 5.76, 8.0, 32.0]);
    // Amounts are written with every digit, not through a float.
    assert!(text.contains("\"BilledCost\":5.760000000,"), "{text}");
}

#[tokio::test]
async fn exports_are_scoped_and_authorized() {
    let w = world().await;
    // A tenant admin exports their tenant, and only it.
    let own = export(&w, "tadmin", "FOCUS_CSV", Some(w.ta)).await;
    assert_eq!(code(&own), "OK", "{own}");
    let e = &own["data"]["exportUsage"];
    assert_eq!(e["tenantId"], w.ta.to_string());
    assert_eq!(e["rows"], 4);
    let url = e["downloadUrl"].as_str().unwrap().to_owned();
    let (status, headers, body) = download(&w.app, Some("tadmin"), &url, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-disposition"], "attachment; filename=\"grus-usage-ta-2026-03.csv\"");
    let text = String::from_utf8(body).unwrap();
    assert!(text.contains(",pa,") && !text.contains(",pb,"), "{text}");

    assert_eq!(code(&export(&w, "tadmin", "FOCUS_CSV", Some(w.tb)).await), "NOT_FOUND");
    assert_eq!(code(&export(&w, "tadmin", "FOCUS_CSV", None).await), "VALIDATION");
    assert_eq!(code(&export(&w, "member", "FOCUS_CSV", Some(w.ta)).await), "FORBIDDEN");
    assert_eq!(code(&export(&w, "outsider", "FOCUS_CSV", Some(w.ta)).await), "NOT_FOUND");

    // Downloads: the tenant's admins and platform admins; 404 for everyone else, 401 anonymous.
    assert_eq!(download(&w.app, Some("root"), &url, None).await.0, StatusCode::OK);
    for who in ["member", "outsider"] {
        assert_eq!(download(&w.app, Some(who), &url, None).await.0, StatusCode::NOT_FOUND, "{who}");
    }
    assert_eq!(download(&w.app, None, &url, None).await.0, StatusCode::UNAUTHORIZED);
    let all = export(&w, "root", "FOCUS_CSV", None).await;
    let all_url = all["data"]["exportUsage"]["downloadUrl"].as_str().unwrap().to_owned();
    assert_eq!(download(&w.app, Some("tadmin"), &all_url, None).await.0, StatusCode::NOT_FOUND);
    for bad in ["/api/exports/999999", "/api/exports/x"] {
        assert_eq!(download(&w.app, Some("root"), bad, None).await.0, StatusCode::NOT_FOUND, "{bad}");
    }

    // An open period is not frozen into a file.
    let this_month = chrono::Utc::now().format("%Y-%m").to_string();
    let v = gql(&w.app, "root", EXPORT, json!({ "p": { "month": this_month }, "f": "FOCUS_CSV" })).await;
    assert_eq!(code(&v), "VALIDATION", "{v}");
    assert!(v["errors"][0]["message"].as_str().unwrap().contains("not closed yet"), "{v}");
    // Exported prices are frozen: a new A100 price from mid-March would change the file.
    assert_eq!(code(&set_price(&w.app, "root", "A100", "9", None, "2026-03-15T00:00:00Z").await), "CONFLICT");
    assert_eq!(code(&set_price(&w.app, "root", "A100", "9", None, "2026-04-01T00:00:00Z").await), "OK");
}

const SET_BUDGET: &str = "mutation($p: ID, $t: ID, $u: BudgetUnit!, $a: String!, $s: Int! = 80, $h: Boolean! = true) {
  setBudget(projectId: $p, tenantId: $t, unit: $u, amount: $a, softPercent: $s, hard: $h) {
    unit unitLabel amount softPercent hard spentValue committedValue status burnDown { day spent } } }";

const SUBMIT_CPU_JOB: &str = r#"mutation($p: String!) { submitJob(input: { name: "j", project: $p,
  tasks: [{ name: "main", replicas: 1, image: "busybox", resources: { cpuMilli: 100 } }] }) { job { id } budgetWarning } }"#;

#[tokio::test]
async fn a_hard_budget_refuses_new_jobs_once_the_month_is_spent_and_a_soft_one_only_warns() {
    // The world's A100 replica of pa has run since March 31st: this month it is well past one
    // GPU-hour, and pb has nothing running.
    let w = world().await;
    let budget = |a: &str, hard: bool| json!({ "p": w.pa.to_string(), "u": "GPU_HOURS", "a": a, "s": 50, "h": hard });
    for (who, want) in [("member", "FORBIDDEN"), ("outsider", "NOT_FOUND")] {
        let v = gql(&w.app, who, SET_BUDGET, budget("10", true)).await;
        assert_eq!(code(&v), want, "{who}: {v}");
    }
    for (vars, field) in [
        (budget("ten", true), "amount"),
        (budget("0", true), "amount"),
        (json!({ "p": w.pa.to_string(), "u": "GPU_HOURS", "a": "1", "s": 0 }), "softPercent"),
        (json!({ "p": w.pa.to_string(), "t": w.ta.to_string(), "u": "GPU_HOURS", "a": "1" }), "projectId"),
    ] {
        let v = gql(&w.app, "tadmin", SET_BUDGET, vars).await;
        assert_eq!(code(&v), "VALIDATION", "{v}");
        assert_eq!(v["errors"][0]["extensions"]["fields"][0]["field"], field, "{v}");
    }

    let v = gql(&w.app, "tadmin", SET_BUDGET, budget("1000000", true)).await;
    assert_eq!(v["data"]["setBudget"]["status"], "UNDER", "{v}");
    assert_eq!(v["data"]["setBudget"]["unitLabel"], "GPU-hours");
    let days = v["data"]["setBudget"]["burnDown"].as_array().unwrap();
    assert_eq!(days.len() as u32, chrono::Datelike::day(&chrono::Utc::now()), "one point per day so far");
    let spent = v["data"]["setBudget"]["spentValue"].as_f64().unwrap();
    assert!((days.last().unwrap()["spent"].as_f64().unwrap() - spent).abs() < 1e-6, "{v}");
    let v = gql(&w.app, "member", SUBMIT_CPU_JOB, json!({ "p": "pa" })).await;
    assert_eq!(v["data"]["submitJob"]["budgetWarning"], Value::Null, "far under the budget: {v}");

    let v = gql(&w.app, "tadmin", SET_BUDGET, budget("1", true)).await;
    assert_eq!(v["data"]["setBudget"]["status"], "EXCEEDED", "{v}");
    let refused = gql(&w.app, "member", SUBMIT_CPU_JOB, json!({ "p": "pa" })).await;
    assert_eq!(code(&refused), "BUDGET_EXCEEDED", "{refused}");
    let ext = &refused["errors"][0]["extensions"];
    assert_eq!(
        (ext["level"].as_str(), ext["name"].as_str(), ext["unit"].as_str()),
        (Some("project"), Some("pa"), Some("gpu_hours"))
    );
    assert!(
        refused["errors"][0]["message"].as_str().unwrap().contains("of its monthly budget of 1.00 GPU-hours"),
        "{refused}"
    );
    assert_eq!(
        code(&gql(&w.app, "outsider", SUBMIT_CPU_JOB, json!({ "p": "pb" })).await),
        "OK",
        "other projects go on"
    );

    // Soft only: it warns and admits.
    let v = gql(&w.app, "tadmin", SET_BUDGET, budget("1", false)).await;
    assert_eq!(
        (v["data"]["setBudget"]["status"].as_str(), v["data"]["setBudget"]["hard"].as_bool()),
        (Some("EXCEEDED"), Some(false))
    );
    let v = gql(&w.app, "member", SUBMIT_CPU_JOB, json!({ "p": "pa" })).await;
    let warning = v["data"]["submitJob"]["budgetWarning"].as_str().unwrap_or_default();
    assert!(warning.starts_with("the monthly budget of project pa is spent"), "{v}");
    let remove = "mutation($p: ID) { removeBudget(projectId: $p) }";
    assert_eq!(gql(&w.app, "tadmin", remove, json!({ "p": w.pa.to_string() })).await["data"]["removeBudget"], true);
    assert_eq!(gql(&w.app, "tadmin", remove, json!({ "p": w.pa.to_string() })).await["data"]["removeBudget"], false);

    // A tenant's budget binds every project of the tenant; only platform admins set one.
    let tenant = json!({ "t": w.ta.to_string(), "u": "CURRENCY", "a": "5", "h": true });
    assert_eq!(code(&gql(&w.app, "tadmin", SET_BUDGET, tenant.clone()).await), "FORBIDDEN");
    let v = gql(&w.app, "root", SET_BUDGET, tenant).await;
    assert_eq!(
        (v["data"]["setBudget"]["status"].as_str(), v["data"]["setBudget"]["unitLabel"].as_str()),
        (Some("EXCEEDED"), Some("USD")),
        "{v}"
    );
    let refused = gql(&w.app, "member", SUBMIT_CPU_JOB, json!({ "p": "pa" })).await;
    assert_eq!(code(&refused), "BUDGET_EXCEEDED", "{refused}");
    assert_eq!(refused["errors"][0]["extensions"]["level"], "tenant");
    let v = gql(
        &w.app,
        "member",
        "{ project(slug: \"pa\") { budget { status } } tenants { budget { status } } }",
        json!({}),
    )
    .await;
    assert_eq!(v["data"]["project"]["budget"], Value::Null, "{v}");
    assert_eq!(v["data"]["tenants"][0]["budget"], Value::Null, "a member does not see the tenant's budget: {v}");
    let v = gql(&w.app, "tadmin", "{ tenants { budget { status } } }", json!({})).await;
    assert_eq!(v["data"]["tenants"][0]["budget"]["status"], "EXCEEDED", "{v}");

    let v = gql(&w.app, "root", "{ auditEvents { action target actor } }", json!({})).await;
    let actions: Vec<&str> =
        v["data"]["auditEvents"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["budget_set", "budget_remove", "budget_set", "budget_set", "budget_set"], "{v}");
}

#[tokio::test]
async fn a_spent_hard_budget_refuses_to_resume_a_suspended_job_until_it_is_raised() {
    let w = world().await;
    let budget = |a: &str| json!({ "p": w.pa.to_string(), "u": "GPU_HOURS", "a": a, "s": 50, "h": true });
    let v = gql(&w.app, "member", SUBMIT_CPU_JOB, json!({ "p": "pa" })).await;
    let id = v["data"]["submitJob"]["job"]["id"].as_str().expect("submitted").to_owned();
    let suspend = "mutation($id: ID!) { suspendJob(id: $id) { state } }";
    let resume = "mutation($id: ID!) { resumeJob(id: $id) { state } }";
    let v = gql(&w.app, "member", suspend, json!({ "id": id })).await;
    assert_eq!(v["data"]["suspendJob"]["state"], "SUSPENDED", "{v}");

    assert_eq!(gql(&w.app, "tadmin", SET_BUDGET, budget("1")).await["data"]["setBudget"]["status"], "EXCEEDED");
    let refused = gql(&w.app, "member", resume, json!({ "id": id })).await;
    assert_eq!(code(&refused), "BUDGET_EXCEEDED", "{refused}");
    assert_eq!(refused["errors"][0]["extensions"]["name"], "pa", "{refused}");
    let v = gql(&w.app, "member", "query($id: ID!) { job(id: $id) { state } }", json!({ "id": id })).await;
    assert_eq!(v["data"]["job"]["state"], "SUSPENDED", "a refused resume leaves it suspended: {v}");

    assert_eq!(gql(&w.app, "tadmin", SET_BUDGET, budget("1000000")).await["data"]["setBudget"]["status"], "UNDER");
    let v = gql(&w.app, "member", resume, json!({ "id": id })).await;
    assert_eq!(v["data"]["resumeJob"]["state"], "ADMITTED", "{v}");
}

/// A budget of one GPU-hour a month.
fn one_gpu_hour(hard: bool, suspend_borrowed: bool) -> grus_api::billing::budget::Budget {
    grus_api::billing::budget::Budget {
        unit: grus_api::domain::BudgetUnit::GpuHours,
        amount_micros: 1_000_000,
        soft_percent: 80,
        hard,
        suspend_borrowed,
    }
}

#[tokio::test]
async fn a_tenant_budget_is_null_for_callers_below_its_tenant_admin() {
    use grus_api::db::budgets::{set_budget, BudgetScope};
    let w = world().await;
    set_budget(&w.db.pool, BudgetScope::Tenant(w.ta), &one_gpu_hour(true, false)).await.unwrap();
    let q = "{ tenants { slug budget { amount } } }";
    for (who, shown) in [("root", true), ("tadmin", true), ("member", false)] {
        let v = gql(&w.app, who, q, json!({})).await;
        assert_eq!(code(&v), "OK", "{who}: {v}");
        let ta = v["data"]["tenants"].as_array().unwrap().iter().find(|t| t["slug"] == "ta").cloned().unwrap();
        assert_eq!(!ta["budget"].is_null(), shown, "{who}: {v}");
    }
}

/// pa's running replica names a maximum runtime no statement can read (`max_runtime_s` is not
/// a number): every budget over pa fails to compute.
async fn make_pa_budgets_fail(w: &World) {
    sqlx::query(
        "UPDATE jobs SET spec = spec || '{\"max_runtime_s\": \"soon\"}'
         WHERE project_id = $1 AND id IN (SELECT job_id FROM usage_ledger WHERE ended_at IS NULL)",
    )
    .bind(w.pa)
    .execute(&w.db.pool)
    .await
    .unwrap();
}

#[tokio::test]
async fn a_submission_is_admitted_without_a_warning_when_its_budget_cannot_be_computed() {
    use grus_api::db::budgets::{set_budget, BudgetScope};
    let w = world().await;
    make_pa_budgets_fail(&w).await;
    // Soft: admission does not read it, only the warning does.
    set_budget(&w.db.pool, BudgetScope::Project(w.pa), &one_gpu_hour(false, false)).await.unwrap();
    let v = gql(&w.app, "member", SUBMIT_CPU_JOB, json!({ "p": "pa" })).await;
    assert_eq!(code(&v), "OK", "the job is committed: its answer says so: {v}");
    assert!(v["data"]["submitJob"]["job"]["id"].is_string(), "{v}");
    assert_eq!(v["data"]["submitJob"]["budgetWarning"], Value::Null, "{v}");
}

#[tokio::test]
async fn a_budget_that_cannot_be_computed_is_skipped_and_the_others_still_apply() {
    use grus_api::db::budgets::{paused_queues, refusals, set_budget, BudgetScope};
    let w = world().await;
    let pool = &w.db.pool;
    // pb runs a replica too (since the same March 31st 23:00), with a readable maximum runtime.
    let (pb, queue_pb): (i64, i64) =
        sqlx::query_as("SELECT p.id, q.id FROM projects p JOIN queues q ON q.project_id = p.id WHERE p.slug = 'pb'")
            .fetch_one(pool)
            .await
            .unwrap();
    let outsider = db::get_user_by_subject(pool, "dev:outsider").await.unwrap().id;
    let fb = Fixture { tenant_id: w.tb, project_id: pb, user_id: outsider, queue_id: queue_pb };
    ledger(
        pool,
        Ledger { f: &fb, cluster: "c2", model: "A100", milli: 1000, start: "2026-03-31T23:00:00Z", end: None },
    )
    .await;
    make_pa_budgets_fail(&w).await;
    // Both spent (one GPU-hour) and suspending borrowed work; pa's is read first.
    set_budget(pool, BudgetScope::Project(w.pa), &one_gpu_hour(true, true)).await.unwrap();
    set_budget(pool, BudgetScope::Project(pb), &one_gpu_hour(true, true)).await.unwrap();
    let now = chrono::Utc::now();

    let mut tx = pool.begin().await.unwrap();
    let refused = refusals(&mut tx, &[w.pa, pb], now).await.unwrap();
    assert_eq!(refused.keys().copied().collect::<Vec<_>>(), [pb], "pa's budget is skipped, pb's still refuses");
    let usable: i32 = sqlx::query_scalar("SELECT 1").fetch_one(&mut *tx).await.unwrap();
    assert_eq!(usable, 1, "the failed statement left admission's transaction usable");
    tx.rollback().await.unwrap();

    let mut conn = pool.acquire().await.unwrap();
    let paused: Vec<i64> = paused_queues(&mut conn, now).await.unwrap().into_iter().map(|(q, _)| q).collect();
    assert_eq!(paused, [queue_pb], "pa's budget suspends nothing, pb's still does");
}

#[tokio::test]
async fn a_running_replica_commits_its_cost_up_to_its_maximum_runtime() {
    let w = world().await;
    // The open A100 replica of pa gets a maximum runtime that ends far past the month: it
    // commits (in GPU-hours) the rest of the month.
    sqlx::query("UPDATE jobs SET spec = spec || '{\"max_runtime_s\": 31000000}' WHERE id = (SELECT job_id FROM usage_ledger WHERE ended_at IS NULL)")
        .execute(&w.db.pool)
        .await
        .unwrap();
    let v = gql(&w.app, "tadmin", SET_BUDGET, json!({ "p": w.pa.to_string(), "u": "GPU_HOURS", "a": "100000" })).await;
    let b = &v["data"]["setBudget"];
    let now = chrono::Utc::now();
    let month = grus_api::db::budgets::month_of(now);
    let left_h = (month.end - now).num_seconds() as f64 / 3600.0;
    assert!((b["committedValue"].as_f64().unwrap() - left_h).abs() < 0.1, "{v} vs {left_h}");
}

#[tokio::test]
async fn a_running_replica_without_a_maximum_commits_its_cost_up_to_its_predicted_run_time() {
    let w = world().await;
    let pool = &w.db.pool;
    let (job, started): (i64, chrono::DateTime<chrono::Utc>) =
        sqlx::query_as("SELECT job_id, started_at FROM usage_ledger WHERE ended_at IS NULL")
            .fetch_one(pool)
            .await
            .unwrap();
    let committed = || async {
        let v =
            gql(&w.app, "tadmin", SET_BUDGET, json!({ "p": w.pa.to_string(), "u": "GPU_HOURS", "a": "100000" })).await;
        v["data"]["setBudget"]["committedValue"].as_f64().unwrap()
    };
    assert_eq!(committed().await, 0.0, "no maximum, no prediction: its end is unknown");
    // Dispatched with a prediction that it ends two hours from now.
    let mut tx = pool.begin().await.unwrap();
    let epoch = db::insert_dispatch(&mut tx, job, "c1").await.unwrap().epoch;
    sqlx::query("UPDATE replicas SET epoch = $2 WHERE job_id = $1")
        .bind(job)
        .bind(epoch)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let now = chrono::Utc::now();
    let predicted = (now - started).num_seconds() + 7200;
    db::dispatch::record_predicted_runtimes(pool, &[(job, epoch, predicted as u64)]).await.unwrap();
    let month = grus_api::db::budgets::month_of(now);
    let ahead_h = (month.end - now).num_seconds().min(7200) as f64 / 3600.0;
    let got = committed().await;
    assert!((got - ahead_h).abs() < 0.05, "{got} GPU-hours committed, {ahead_h} expected");
    // Its maximum, when shorter, wins.
    sqlx::query("UPDATE jobs SET spec = spec || jsonb_build_object('max_runtime_s', $2::bigint) WHERE id = $1")
        .bind(job)
        .bind((now - started).num_seconds() + 3600)
        .execute(pool)
        .await
        .unwrap();
    let got = committed().await;
    assert!((got - ahead_h.min(1.0)).abs() < 0.05, "{got} GPU-hours committed, up to its maximum");
}

#[tokio::test]
async fn the_month_to_date_exports_up_to_a_cutoff_and_the_same_cutoff_gives_the_same_file() {
    let w = world().await;
    let now = chrono::Utc::now();
    let month = grus_api::db::budgets::month_of(now);
    let cutoff = (now - chrono::Duration::seconds(1)).max(month.start + chrono::Duration::seconds(1));
    let q = "mutation($p: PeriodInput!) { exportUsage(period: $p, format: FOCUS_CSV) { id sha256 rows } }";
    let period = json!({ "month": month.start.format("%Y-%m").to_string(), "cutoff": cutoff.to_rfc3339() });
    let first = gql(&w.app, "root", q, json!({ "p": period })).await;
    assert_eq!(code(&first), "OK", "{first}");
    // pa's A100 replica has run since March: the month to date has its charges.
    assert!(first["data"]["exportUsage"]["rows"].as_i64().unwrap() > 0, "{first}");
    let again = gql(&w.app, "root", q, json!({ "p": period })).await;
    assert_eq!(again["data"]["exportUsage"], first["data"]["exportUsage"], "the same cut-off, the same stored file");
    let future = json!({ "month": month.start.format("%Y-%m").to_string(), "cutoff": (now + chrono::Duration::hours(1)).min(month.end).to_rfc3339() });
    let v = gql(&w.app, "root", q, json!({ "p": future })).await;
    assert_eq!(code(&v), "VALIDATION", "a cut-off not yet passed: {v}");
}

#[tokio::test]
async fn the_month_to_date_is_cut_at_the_servers_clock_and_that_cutoff_gives_the_same_file_again() {
    let w = world().await;
    let month = grus_api::db::budgets::month_of(chrono::Utc::now());
    let q = "mutation($p: PeriodInput!) { exportUsage(period: $p, format: FOCUS_CSV) { id sha256 rows periodStart periodEnd } }";
    let before = chrono::Utc::now() - chrono::Duration::seconds(1);
    let period = json!({ "month": month.start.format("%Y-%m").to_string(), "toDate": true });
    let first = gql(&w.app, "root", q, json!({ "p": period })).await;
    assert_eq!(code(&first), "OK", "{first}");
    let end =
        chrono::DateTime::parse_from_rfc3339(first["data"]["exportUsage"]["periodEnd"].as_str().unwrap()).unwrap();
    assert!(end >= before && end <= chrono::Utc::now(), "cut at the server's now: {first}");
    // pa's A100 replica has run since March: the month to date has its charges.
    assert!(first["data"]["exportUsage"]["rows"].as_i64().unwrap() > 0, "{first}");
    let same = json!({ "month": month.start.format("%Y-%m").to_string(), "cutoff": end.to_rfc3339() });
    let again = gql(&w.app, "root", q, json!({ "p": same })).await;
    assert_eq!(
        again["data"]["exportUsage"], first["data"]["exportUsage"],
        "its cut-off asked again, the same stored file"
    );
    let both = json!({ "month": month.start.format("%Y-%m").to_string(), "toDate": true, "cutoff": end.to_rfc3339() });
    let v = gql(&w.app, "root", q, json!({ "p": both })).await;
    assert_eq!(code(&v), "VALIDATION", "{v}");
    assert_eq!(v["errors"][0]["extensions"]["fields"][0]["field"], "period.toDate", "{v}");
}
