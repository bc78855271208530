//! Hierarchical fair share through the API: tenants' and projects' weights and guarantees, read
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

const TENANT_SHARE: &str = "mutation($t: ID!, $w: Float, $g: [GuaranteeInput!]) {
    setTenantShare(tenantId: $t, weight: $w, guarantees: $g) { share { weight guarantees { resource amount } } } }";
const PROJECT_SHARE: &str = "mutation($p: ID!, $w: Float, $g: [GuaranteeInput!]) {
    setProjectShare(projectId: $p, weight: $w, guarantees: $g) { share { weight guarantees { resource amount } } } }";
const READ: &str = "{ tenants { slug share { weight guarantees { resource amount } } }
    projects { slug share { weight guarantees { resource amount } } queues { name fairShare { fairGpus heldGpus } } } }";

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
    let tenant = json!({ "weight": 2.5, "guarantees": [{ "resource": "gpu", "amount": 8000 }] });
    assert_eq!(v["data"]["setTenantShare"]["share"], tenant, "{v}");
    assert_eq!(code(&gql(&app, "tadmin", TENANT_SHARE, json!({ "t": ta, "w": 9 })).await), "FORBIDDEN");

    let v = gql(&app, "tadmin", PROJECT_SHARE, json!({ "p": pa, "g": [{ "resource": "pool/train", "amount": 4000 }] }))
        .await;
    let project = json!({ "weight": 1.0, "guarantees": [{ "resource": "pool/train", "amount": 4000 }] });
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
