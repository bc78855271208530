//! Inference services with the real binaries (issue 21): autoscaling on a synthetic request
//! rate, up and back down; an agent kill -9 that takes no replica below the minimum; a rolling
//! update to a new revision that keeps the ready count; field-level VALIDATION for bad input.

use std::time::Duration;

use grus_testkit::stack::{id_of, seed_dev};
use grus_testkit::{Stack, StackConfig};
use serde_json::{json, Value};

use crate::trail;

const APPLY: &str = "mutation($input: ServiceInput!) { applyService(input: $input) { applied service { revision } } }";
const READ: &str = "query { service(project: \"vision\", name: \"chat\") {
    state revision desiredReplicas readyReplicas minReplicas
    replicas { id state spec replicas { node } }
    replicasByCluster { clusterId replicas ready endpoint }
    scalingHistory { fromReplicas toReplicas signal reason }
} }";

fn chat(image: &str) -> Value {
    json!({
        "name": "chat",
        "project": "vision",
        "minReplicas": 2,
        "maxReplicas": 4,
        "image": image,
        "resources": { "gpus": 1, "gpuModels": ["A100-80GB"], "cpuMilli": 1000, "memoryMib": 1024 },
        "port": 8000,
        "readiness": { "path": "/healthz" },
        "autoscaling": { "metric": "REQUEST_RATE", "target": 10.0, "scaleDownDelay": "6s" },
        "rollout": { "maxSurge": 1, "maxUnavailable": 0 },
        "labels": [{ "key": "grus.io/sim-duration-s", "value": "3600" }],
    })
}

async fn read(who: &grus_testkit::Gql) -> Value {
    who.data(READ, json!({})).await["service"].clone()
}

/// Polls the service until `done`, checking `invariant` at every look.
async fn wait_service(
    stack: &Stack,
    who: &grus_testkit::Gql,
    what: &str,
    invariant: impl Fn(&Value),
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let s = read(who).await;
        invariant(&s);
        if done(&s) {
            return s;
        }
        assert!(std::time::Instant::now() < deadline, "service: {what}\n{s:#}\n{}", stack.logs());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn revisions(s: &Value) -> Vec<i64> {
    s["replicas"].as_array().unwrap().iter().map(|r| r["spec"]["service"]["revision"].as_i64().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_scales_with_its_load_survives_an_agent_kill_and_rolls_to_a_new_revision() {
    let mut stack = Stack::start(StackConfig::default()).await;
    seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "svc", "2x4xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;

    let applied = alice.data(APPLY, json!({ "input": chat("server:v1") })).await;
    assert_eq!(applied["applyService"], json!({ "applied": "CREATED", "service": { "revision": 1 } }));
    let s = wait_service(&stack, &alice, "min replicas ready", |_| {}, |s| s["readyReplicas"] == 2).await;
    assert_eq!(s["state"], "READY");
    let protected: Vec<Value> = s["replicas"].as_array().unwrap().iter().map(|r| r["id"].clone()).collect();
    for r in s["replicas"].as_array().unwrap() {
        assert_eq!(r["spec"]["preemptible"], false, "the minimum's replicas are not preemptible: {r}");
        assert_eq!(r["spec"]["service"]["port"], 8000);
    }
    let nodes: std::collections::BTreeSet<&str> =
        s["replicas"].as_array().unwrap().iter().map(|r| r["replicas"][0]["node"].as_str().unwrap()).collect();
    assert_eq!(nodes.len(), 2, "the two replicas spread over the two nodes: {s}");

    // 35 requests/s at 10 per replica: 4 replicas.
    let load = "mutation($r: Float!) { setServiceLoad(project: \"vision\", name: \"chat\", requestsPerSecond: $r) { requestsPerSecond } }";
    alice.data(load, json!({ "r": 35.0 })).await;
    let s = wait_service(&stack, &alice, "scaled up", |_| {}, |s| s["readyReplicas"] == 4).await;
    assert_eq!(s["desiredReplicas"], 4);
    assert_eq!(
        s["replicasByCluster"],
        json!([{ "clusterId": "svc", "replicas": 4, "ready": 4, "endpoint": "http://chat.vision.sim.invalid:8000/" }])
    );

    // kill -9 of the agent: the replicas run on, the service never drops below its minimum
    // and the protected replicas are the same jobs afterwards.
    let at_least_min = |s: &Value| {
        let live = s["replicas"].as_array().unwrap().len();
        assert!(live >= 2, "fewer live replicas than the minimum: {s}");
    };
    stack.agent("svc").kill9();
    for _ in 0..8 {
        at_least_min(&read(&alice).await);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    stack.agent("svc").restart();
    let s = wait_service(&stack, &alice, "4 ready after the restart", at_least_min, |s| s["readyReplicas"] == 4).await;
    for id in &protected {
        let still = s["replicas"].as_array().unwrap().iter().any(|r| &r["id"] == id);
        assert!(still, "protected replica {id} survived the agent's restart: {s}");
    }

    // The load falls: back to the minimum after the scale-down delay, never below it.
    alice.data(load, json!({ "r": 5.0 })).await;
    let s = wait_service(&stack, &alice, "scaled down", at_least_min, |s| {
        s["desiredReplicas"] == 2 && s["replicas"].as_array().unwrap().len() == 2
    })
    .await;
    let history: Vec<(i64, i64)> = s["scalingHistory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["fromReplicas"].as_i64().unwrap(), e["toReplicas"].as_i64().unwrap()))
        .collect();
    assert!(history.contains(&(2, 4)) && history.contains(&(4, 2)), "{history:?}");
    let down = s["scalingHistory"].as_array().unwrap().iter().find(|e| e["toReplicas"] == 2 && e["fromReplicas"] == 4);
    assert_eq!(down.unwrap()["signal"], 5.0);

    // A new image: revision 2, rolled one surge replica at a time, ready count never under 2.
    let applied = alice.data(APPLY, json!({ "input": chat("server:v2") })).await;
    assert_eq!(applied["applyService"], json!({ "applied": "NEW_REVISION", "service": { "revision": 2 } }));
    let s = wait_service(
        &stack,
        &alice,
        "rolled to revision 2",
        |s| {
            assert!(s["readyReplicas"].as_i64().unwrap() >= 2, "the roll took the ready count under 2: {s}");
            assert!(s["replicas"].as_array().unwrap().len() <= 3, "more than desired + maxSurge: {s}");
        },
        |s| revisions(s) == [2, 2] && s["readyReplicas"] == 2,
    )
    .await;
    assert_eq!(s["state"], "READY");
    // The replaced replicas were cancelled with the roll's cause.
    for id in &protected {
        let events = trail::events(&stack.db.pool, id_of(id)).await;
        let end = events.iter().rev().find(|e| e.task_id.is_none() && e.to_state == "cancelled");
        let cause = end.map(|e| e.cause.clone()).unwrap_or_default();
        assert!(cause.starts_with("service chat scaled to") || cause.starts_with("replaced by revision 2"), "{cause}");
    }
    // One interface over every kind of work: the service and its replicas' jobs.
    let w = alice
        .data(
            "query { workloads(project: \"vision\") { __typename workloadType projectSlug queueName ownerSubject phase
                timeline { kind } } }",
            json!({}),
        )
        .await;
    let mut kinds: Vec<(String, String, String)> = w["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            assert_eq!((x["projectSlug"].as_str(), x["queueName"].as_str()), (Some("vision"), Some("default")), "{x}");
            assert_eq!(x["ownerSubject"], "dev:alice");
            let first = x["timeline"][0]["kind"].as_str();
            assert_eq!(first, Some(if x["__typename"] == "Service" { "created" } else { "pending" }), "{x}");
            let s = |k: &str| x[k].as_str().unwrap().to_owned();
            (s("__typename"), s("workloadType"), s("phase"))
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            ("Job".into(), "INFERENCE".into(), "RUNNING".into()),
            ("Job".into(), "INFERENCE".into(), "RUNNING".into()),
            ("Service".into(), "INFERENCE".into(), "READY".into()),
        ]
    );
    // Applying the same spec again is no new revision.
    let applied = alice.data(APPLY, json!({ "input": chat("server:v2") })).await;
    assert_eq!(applied["applyService"]["applied"], "UPDATED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_service_input_gets_field_errors_and_stores_nothing() {
    let stack = Stack::start(StackConfig::default()).await;
    seed_dev(&stack).await;
    let alice = stack.dev("alice");
    let cases: [(&str, Value, &str); 5] = [
        ("min above max", json!({ "minReplicas": 3, "maxReplicas": 2 }), "maxReplicas"),
        ("port", json!({ "port": 70000 }), "port"),
        ("unknown MIG profile", json!({ "resources": { "migProfile": "9g.1tb" } }), "resources.migProfile"),
        ("both rollout bounds 0", json!({ "rollout": { "maxSurge": 0, "maxUnavailable": 0 } }), "rollout"),
        (
            "utilization over 100",
            json!({ "autoscaling": { "metric": "GPU_UTILIZATION", "target": 150.0 } }),
            "autoscaling.target",
        ),
    ];
    for (what, patch, field) in cases {
        let mut input = chat("server:v1");
        for (k, v) in patch.as_object().unwrap() {
            input[k] = v.clone();
        }
        let (code, response) = alice.error_code(APPLY, json!({ "input": input })).await;
        assert_eq!(code, "VALIDATION", "{what}: {response}");
        let fields: Vec<&str> = response["errors"][0]["extensions"]["fields"]
            .as_array()
            .map(|f| f.iter().filter_map(|e| e["field"].as_str()).collect())
            .unwrap_or_default();
        assert!(fields.contains(&field), "{what}: {field} in {response}");
    }
    let listed = alice.data("query { services(project: \"vision\") { name } }", json!({})).await;
    assert_eq!(listed["services"], json!([]));
}
