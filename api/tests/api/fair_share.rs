//! Hierarchical fair share through the API: tenants' and projects' weights, guarantees and
//! limits (enforced at admission), read
//! by whoever sees them, set by platform admins (tenants) and tenant admins (projects), refused
//! field by field on bad input without changing what is stored; and each queue's fair share of
//! the fleet's GPUs.

use grus_api::admission::{self, Admission};
use grus_api::db::Cause;
use grus_protocol::wire::{CapacitySummary, ModelCapacity};
use grus_testkit::api::TestApi;
use grus_testkit::client::{code, gql};
use grus_testkit::seed::{self, TwoTenants};
use grus_testkit::TestDb;
use serde_json::{json, Value};

const TENANT_SHARE: &str = "mutation($t: ID!, $w: Float, $g: [ResourceAmountInput!], $l: [ResourceAmountInput!]) {
    setTenantShare(tenantId: $t, weight: $w, guarantees: $g, limits: $l) {
      share { weight guarantees { resource amount } limits { resource amount } } } }";
const PROJECT_SHARE: &str = "mutation($p: ID!, $w: Float, $g: [ResourceAmountInput!], $l: [ResourceAmountInput!]) {
    setProjectShare(projectId: $p, weight: $w, guarantees: $g, limits: $l) {
      share { weight guarantees { resource amount } limits { resource amount } } } }";
const READ: &str = "{ tenants { slug share { weight guarantees { resource amount } limits { resource amount } } }
    projects { slug share { weight guarantees { resource amount } limits { resource amount } }
               queues { name fairShare { fairGpus heldGpus } } } }";

fn field(v: &Value) -> &str {
    v["errors"][0]["extensions"]["fields"][0]["field"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn shares_are_set_by_admins_read_by_members_and_bad_input_names_its_field() {
    let t = TestDb::new().await;
    let w = TwoTenants::seed(&t.pool).await;
    let app = TestApi::new(&t.pool).router();
    let (ta, pa) = (w.ta.to_string(), w.pa.to_string());

    let v = gql(&app, "root", TENANT_SHARE, json!({ "t": ta, "w": 2.5, "g": [{ "resource": "gpu", "amount": 8000 }] }))
        .await;
    let tenant = json!({ "weight": 2.5, "guarantees": [{ "resource": "gpu", "amount": 8000 }], "limits": [] });
    assert_eq!(v["data"]["setTenantShare"]["share"], tenant, "{v}");
    assert_eq!(code(&gql(&app, "tadmin", TENANT_SHARE, json!({ "t": ta, "w": 9 })).await), "FORBIDDEN");

    let v = gql(&app, "tadmin", PROJECT_SHARE, json!({ "p": pa, "g": [{ "resource": "pool/train", "amount": 4000 }] }))
        .await;
    let project = json!({ "weight": 1.0, "guarantees": [{ "resource": "pool/train", "amount": 4000 }], "limits": [] });
    assert_eq!(v["data"]["setProjectShare"]["share"], project, "weight left out stays: {v}");
    assert_eq!(code(&gql(&app, "padmin", PROJECT_SHARE, json!({ "p": pa, "w": 9 })).await), "FORBIDDEN");

    for (vars, want) in [
        (json!({ "p": pa, "w": 0 }), "weight"),
        (json!({ "p": pa, "w": 2e6 }), "weight"),
        (json!({ "p": pa, "g": [{ "resource": "gpus", "amount": 1 }] }), "guarantees.0.resource"),
        (json!({ "p": pa, "g": [{ "resource": "gpu", "amount": -1 }] }), "guarantees.0.amount"),
        (
            json!({ "p": pa, "g": [{ "resource": "gpu", "amount": 1 }, { "resource": "gpu", "amount": 2 }] }),
            "guarantees.1.resource",
        ),
        (json!({ "p": pa, "l": [{ "resource": "gpu/", "amount": 1 }] }), "limits.0.resource"),
        (json!({ "p": pa, "l": [{ "resource": "gpu", "amount": -5 }] }), "limits.0.amount"),
        // The stored guarantee of 4 pool/train GPUs is above this limit.
        (json!({ "p": pa, "l": [{ "resource": "pool/train", "amount": 3000 }] }), "limits.0.amount"),
        (
            json!({ "p": pa, "g": [{ "resource": "gpu", "amount": 9000 }], "l": [{ "resource": "gpu", "amount": 8000 }] }),
            "limits.0.amount",
        ),
    ] {
        let v = gql(&app, "tadmin", PROJECT_SHARE, vars.clone()).await;
        assert_eq!((code(&v).as_str(), field(&v)), ("VALIDATION", want), "{vars}: {v}");
    }
    assert_eq!(code(&gql(&app, "root", PROJECT_SHARE, json!({ "p": "999999", "w": 2 })).await), "NOT_FOUND");

    let v = gql(&app, "member", READ, json!({})).await;
    assert_eq!(v["data"]["tenants"][0]["share"], tenant, "{v}");
    assert_eq!(v["data"]["projects"][0]["share"], project, "unchanged by refused input: {v}");

    // A zero amount removes a guarantee; an empty list removes them all.
    let v =
        gql(&app, "tadmin", PROJECT_SHARE, json!({ "p": pa, "g": [{ "resource": "pool/train", "amount": 0 }] })).await;
    assert_eq!(v["data"]["setProjectShare"]["share"]["guarantees"], json!([]), "{v}");

    // Limits: replaced when given, kept when left out; a guarantee above one is refused.
    let limits = json!([{ "resource": "gpu", "amount": 0 }, { "resource": "gpu/A100", "amount": 16000 }]);
    let v = gql(&app, "tadmin", PROJECT_SHARE, json!({ "p": pa, "l": limits })).await;
    assert_eq!(v["data"]["setProjectShare"]["share"]["limits"], limits, "a zero limit is kept: {v}");
    let v = gql(&app, "tadmin", PROJECT_SHARE, json!({ "p": pa, "g": [{ "resource": "gpu", "amount": 1000 }] })).await;
    assert_eq!((code(&v).as_str(), field(&v)), ("VALIDATION", "guarantees.0.amount"), "{v}");
    let v = gql(&app, "tadmin", PROJECT_SHARE, json!({ "p": pa, "w": 3 })).await;
    assert_eq!(v["data"]["setProjectShare"]["share"]["limits"], limits, "{v}");
    let v = gql(&app, "tadmin", PROJECT_SHARE, json!({ "p": pa, "l": [] })).await;
    assert_eq!(v["data"]["setProjectShare"]["share"]["limits"], json!([]), "{v}");
}

/// Tenant → project → queue, each level with a limit (issue 20): a job that would take its
/// project or its tenant past a limit is refused at submit, naming the level and the limit,
/// whichever queue it is in; what the others hold counts, and a limit of 0 admits nothing.
#[tokio::test]
async fn project_and_tenant_limits_are_enforced_at_admission_across_their_queues() {
    let t = TestDb::new().await;
    let w = TwoTenants::seed(&t.pool).await;
    let app = TestApi::new(&t.pool).router();
    let user = seed::dev_user(&t.pool, "submitter").await;
    let second =
        grus_api::db::create_queue(&t.pool, w.pa, &grus_api::db::QueueSettings::named("second")).await.unwrap().id;
    let submit = |queue: i64, gpus: u32| {
        let pool = t.pool.clone();
        let (project, queue) = (if queue == w.queue_pb { w.pb } else { w.pa }, queue);
        async move {
            let fixture = seed::Fixture { tenant_id: 0, project_id: project, user_id: user, queue_id: queue };
            let job = seed::gpu_job(&fixture, "j", 1, gpus, &[]);
            admission::admit(&pool, &job, Cause { cause: "submitted", actor: "user:test" }).await.unwrap()
        }
    };
    let gpu = |milli: i64| json!([{ "resource": "gpu", "amount": milli }]);
    let v = gql(&app, "root", PROJECT_SHARE, json!({ "p": w.pa.to_string(), "l": gpu(8000) })).await;
    assert!(v["errors"].is_null(), "{v}");

    // Project pa may hold 8 GPUs over both its queues.
    assert!(matches!(submit(w.queue_pa, 6).await, Admission::Admitted { .. }));
    match submit(second, 4).await {
        Admission::QuotaExceeded { level, name, resource, used, limit } => {
            assert_eq!(
                (level.as_str(), name.as_str(), resource.as_str(), used, limit),
                ("project", "pa", "gpu", 6000, 8000)
            );
        }
        other => panic!("admitted past the project's limit: {other:?}"),
    }
    assert!(matches!(submit(second, 2).await, Admission::Admitted { .. }), "up to the limit");

    // Tenant tb may hold nothing: its project's jobs are refused whatever their queue's quota.
    gql(&app, "root", TENANT_SHARE, json!({ "t": w.tb.to_string(), "l": gpu(0) })).await;
    assert!(
        matches!(submit(w.queue_pb, 1).await, Admission::QuotaExceeded { level, limit: 0, .. } if level.as_str() == "tenant")
    );
    // Through the API the error names the level and what is full.
    let submit_job = "mutation($i: JobInput!) { submitJob(input: $i) { job { id } } }";
    let input = json!({ "i": { "name": "x", "project": "pa", "queue": "second",
        "tasks": [{ "name": "main", "replicas": 1, "image": "busybox", "resources": { "gpus": 1 } }] } });
    let v = gql(&app, "member", submit_job, input).await;
    assert_eq!(code(&v), "QUOTA_EXCEEDED", "{v}");
    let message = v["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("project pa"), "{message}");
    assert_eq!(v["errors"][0]["extensions"]["level"], "project", "{v}");

    // Lifting the limit lets the next job in.
    gql(&app, "root", PROJECT_SHARE, json!({ "p": w.pa.to_string(), "l": [] })).await;
    assert!(matches!(submit(second, 4).await, Admission::Admitted { .. }));
}

#[tokio::test]
async fn a_queues_fair_share_follows_the_tenants_weights_over_the_fleets_gpus() {
    let t = TestDb::new().await;
    let w = TwoTenants::seed(&t.pool).await;
    let app = TestApi::new(&t.pool).router();
    let capacity = CapacitySummary {
        models: vec![ModelCapacity { model: "A100".into(), total_gpus: 16, ..Default::default() }],
        ..Default::default()
    };
    sqlx::query("INSERT INTO clusters (id, health, capacity) VALUES ('east', 'healthy', $1)")
        .bind(serde_json::to_value(&capacity).unwrap())
        .execute(&t.pool)
        .await
        .unwrap();
    // Both projects wait with 16 GPUs each: 8 and 8; with tenant A's weight at 3, 12 and 4.
    let user = seed::dev_user(&t.pool, "submitter").await;
    for (project, queue) in [(w.pa, w.queue_pa), (w.pb, w.queue_pb)] {
        let mut job = seed::gpu_job(
            &seed::Fixture { tenant_id: 0, project_id: project, user_id: user, queue_id: queue },
            "big",
            2,
            8,
            &["A100"],
        );
        job.preemptible = true;
        let by = Cause { cause: "submitted", actor: "user:test" };
        assert!(matches!(admission::admit(&t.pool, &job, by).await.unwrap(), Admission::Admitted { .. }));
    }
    let fair = |v: &Value, i: usize| v["data"]["projects"][i]["queues"][0]["fairShare"]["fairGpus"].as_f64().unwrap();
    let v = gql(&app, "root", READ, json!({})).await;
    assert_eq!((fair(&v, 0), fair(&v, 1)), (8.0, 8.0), "{v}");
    gql(&app, "root", TENANT_SHARE, json!({ "t": w.ta.to_string(), "w": 3 })).await;
    let v = gql(&app, "root", READ, json!({})).await;
    assert_eq!((fair(&v, 0), fair(&v, 1)), (12.0, 4.0), "{v}");
    assert_eq!(v["data"]["projects"][0]["queues"][0]["fairShare"]["heldGpus"], 0.0, "nothing runs yet: {v}");
}
