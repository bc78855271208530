//! Job policies: `TaskSucceeded(main) -> CompleteJob` ends the whole job when its main task
//! succeeds, stopping a sidecar that would otherwise run for an hour.

use grus_testkit::stack::{id_of, job_input, seed_dev, submit};
use grus_testkit::{Stack, StackConfig};
use serde_json::json;

use crate::trail;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_succeeded_of_main_completes_the_whole_job() {
    let mut stack = Stack::start(StackConfig::default()).await;
    seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "solo", "1x4xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;

    let mut input = job_input("ensemble", &[("main", 1, 1, &[]), ("sidecar", 2, 1, &[])], 3600.0);
    input["labels"] = json!([
        { "key": "grus.io/sim-duration-s", "value": "3600" },
        { "key": "grus.io/sim-duration-s.main", "value": "2" }
    ]);
    input["policies"] = json!([{ "on": "TASK_SUCCEEDED", "task": "main", "do": "COMPLETE_JOB" }]);
    let id = submit(&alice, input).await;
    let job = stack
        .wait_job(&alice, &id, "tasks { name state replicas { index state } }", "SUCCEEDED with no live replica", |j| {
            j["state"] == "SUCCEEDED"
                && j["tasks"].as_array().is_some_and(|ts| {
                    ts.iter()
                        .flat_map(|t| t["replicas"].as_array().cloned().unwrap_or_default())
                        .all(|r| !matches!(r["state"].as_str(), Some("pending" | "placed" | "running")))
                })
        })
        .await;
    let task = |name: &str| job["tasks"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap().clone();
    assert_eq!(task("main")["state"], "succeeded", "{job}");
    for r in task("sidecar")["replicas"].as_array().unwrap() {
        assert_ne!(r["state"], "succeeded", "the sidecar was stopped, it did not finish its hour: {job}");
    }

    let pool = &stack.db.pool;
    let events = trail::events(pool, id_of(&id)).await;
    let last = events.iter().rev().find(|e| e.task_id.is_none()).expect("job events");
    assert_eq!(last.to_state, "succeeded");
    assert!(last.cause.contains("task main succeeded"), "the policy is the cause: {}", last.cause);
    // Every replica ran once and its interval is closed; the sidecars' end at the stop.
    let ledger = trail::ledger(pool, Some(id_of(&id))).await;
    assert_eq!(ledger.len(), 3, "{ledger:?}");
    assert!(ledger.iter().all(|iv| iv.ended_at.is_some()), "{ledger:?}");
    let main_end = ledger.iter().map(|iv| iv.ended_at.unwrap()).min().unwrap();
    assert!(
        ledger.iter().all(|iv| iv.ended_at.unwrap() - main_end < chrono::Duration::minutes(10)),
        "nothing ran on towards its hour: {ledger:?}"
    );
    // The simulator stopped both sidecars (its journal records the stops).
    let stops: Vec<_> = stack
        .agent("solo")
        .journal()
        .into_iter()
        .filter(|e| e["op"] == "stop" && e["key"][0] == id_of(&id) && e["key"][1] == "sidecar")
        .collect();
    assert_eq!(stops.len(), 2, "{stops:?}");
}
