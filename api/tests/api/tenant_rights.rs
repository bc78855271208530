//! Tenant rights through the API: what a tenant's members may do to others' work, read by
//! whoever sees the tenant, set by platform admins, and enforced at submit, dry run and
//! `setJobPriority` (members can no longer raise their jobs to `critical` unless allowed).

use axum::Router;
use grus_testkit::api::TestApi;
use grus_testkit::client::{code, gql};
use grus_testkit::seed::TwoTenants;
use grus_testkit::TestDb;
use serde_json::{json, Value};

struct World {
    _db: TestDb,
    app: Router,
    w: TwoTenants,
}

async fn world() -> World {
    let t = TestDb::new().await;
    let w = TwoTenants::seed(&t.pool).await;
    World { app: TestApi::new(&t.pool).router(), _db: t, w }
}

const RIGHTS: &str = "{ tenants { slug rights { maxPriorityClass mayPreempt reclaimFromAny reclaimFrom } } }";
const SET: &str = "mutation($t: ID!, $class: String, $may: Boolean, $any: Boolean, $from: [ID!]) {
    setTenantRights(tenantId: $t, maxPriorityClass: $class, mayPreempt: $may, reclaimFromAny: $any, reclaimFrom: $from) {
        slug rights { maxPriorityClass mayPreempt reclaimFromAny reclaimFrom } } }";

fn field(v: &Value) -> &str {
    v["errors"][0]["extensions"]["fields"][0]["field"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn rights_are_read_by_members_and_changed_only_by_platform_admins() {
    let World { _db, app, w } = world().await;
    let v = gql(&app, "member", RIGHTS, json!({})).await;
    let default = json!({ "maxPriorityClass": "high", "mayPreempt": true, "reclaimFromAny": true, "reclaimFrom": [] });
    assert_eq!(v["data"]["tenants"], json!([{ "slug": "ta", "rights": default }]), "{v}");

    let ta = w.ta.to_string();
    for who in ["tadmin", "padmin", "member"] {
        assert_eq!(code(&gql(&app, who, SET, json!({ "t": ta, "class": "critical" })).await), "FORBIDDEN", "{who}");
    }
    let v = gql(&app, "root", SET, json!({ "t": ta, "may": false, "from": [w.tb.to_string()] })).await;
    let set = json!({ "maxPriorityClass": "high", "mayPreempt": false, "reclaimFromAny": false, "reclaimFrom": [w.tb.to_string()] });
    assert_eq!(v["data"]["setTenantRights"]["rights"], set, "fields left out stay: {v}");
    let v = gql(&app, "member", RIGHTS, json!({})).await;
    assert_eq!(v["data"]["tenants"][0]["rights"], set, "{v}");

    // Bad input changes nothing and names the field.
    for (vars, want) in [
        (json!({ "t": ta, "class": "urgent" }), "maxPriorityClass"),
        (json!({ "t": ta, "from": ["999999"] }), "reclaimFrom.0"),
        (json!({ "t": ta, "from": ["x"] }), "reclaimFrom.0"),
        (json!({ "t": ta, "any": true, "from": [ta.clone()] }), "reclaimFrom"),
    ] {
        let v = gql(&app, "root", SET, vars.clone()).await;
        assert_eq!((code(&v).as_str(), field(&v)), ("VALIDATION", want), "{vars}: {v}");
    }
    assert_eq!(code(&gql(&app, "root", SET, json!({ "t": "999999", "may": true })).await), "NOT_FOUND");
    let v = gql(&app, "member", RIGHTS, json!({})).await;
    assert_eq!(v["data"]["tenants"][0]["rights"], set, "unchanged by refused input: {v}");

    // Any tenant again.
    let v = gql(&app, "root", SET, json!({ "t": ta, "any": true })).await;
    assert_eq!(v["data"]["setTenantRights"]["rights"]["reclaimFromAny"], true, "{v}");
    assert_eq!(v["data"]["setTenantRights"]["rights"]["reclaimFrom"], json!([]), "{v}");
}

const SUBMIT: &str = "mutation($in: JobInput!) { submitJob(input: $in) { job { id priority } } }";
const DRY_RUN: &str = "mutation($in: JobInput!) { dryRunJob(input: $in) { admitted } }";

fn job(priority: &str) -> Value {
    json!({ "in": { "name": "j", "project": "pa", "priority": priority,
        "tasks": [{ "name": "main", "replicas": 1, "image": "busybox", "resources": { "gpus": 0 } }] } })
}

#[tokio::test]
async fn a_priority_class_above_the_tenants_is_refused_at_submit_dry_run_and_reprioritisation() {
    let World { _db, app, w } = world().await;
    for mutation in [SUBMIT, DRY_RUN] {
        let v = gql(&app, "member", mutation, job("critical")).await;
        assert_eq!((code(&v).as_str(), field(&v)), ("VALIDATION", "priority"), "{v}");
        let message = v["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains("tenant ta allows priority classes up to high"), "{message}");
    }
    let v = gql(&app, "member", SUBMIT, job("high")).await;
    assert_eq!(code(&v), "OK", "{v}");
    let id = v["data"]["submitJob"]["job"]["id"].clone();

    // Lowered below what a job already has: later requests are held to it, the job keeps its
    // priority.
    gql(&app, "root", SET, json!({ "t": w.ta.to_string(), "class": "normal" })).await;
    let set_priority = "mutation($id: ID!, $p: String!) { setJobPriority(id: $id, priority: $p) { priorityClass } }";
    let v = gql(&app, "member", set_priority, json!({ "id": id, "p": "high" })).await;
    assert_eq!((code(&v).as_str(), field(&v)), ("VALIDATION", "priority"), "{v}");
    let v = gql(&app, "member", set_priority, json!({ "id": id, "p": "low" })).await;
    assert_eq!(v["data"]["setJobPriority"]["priorityClass"], "low", "lowering is always allowed: {v}");
    assert_eq!(code(&gql(&app, "member", SUBMIT, job("high")).await), "VALIDATION");

    // Raised: critical is allowed, in this tenant only.
    gql(&app, "root", SET, json!({ "t": w.ta.to_string(), "class": "critical" })).await;
    assert_eq!(code(&gql(&app, "member", SUBMIT, job("critical")).await), "OK");
    let other = json!({ "in": { "name": "j", "project": "pb", "priority": "critical",
        "tasks": [{ "name": "main", "replicas": 1, "image": "busybox", "resources": { "gpus": 0 } }] } });
    assert_eq!(code(&gql(&app, "outsider", SUBMIT, other).await), "VALIDATION", "tenant tb still caps at high");
}
