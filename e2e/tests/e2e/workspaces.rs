//! Interactive workspaces with the real binaries (issue 21): an idle one is warned, then
//! stopped at its idle timeout; a busy one beside it keeps running; billing names each job's
//! workload type.

use grus_testkit::stack::{id_of, job_input, seed_dev, submit};
use grus_testkit::{Stack, StackConfig};
use serde_json::json;

use crate::trail;

/// Two notebooks of one GPU each with a 20 s idle timeout: one keeps its GPU busy, the other
/// does not (the sim's `grus.io/sim-busy-pct`). The idle one gets the warning event, then is
/// cancelled with the idle cause; the busy one still runs. (Activity is a device's: two
/// shares of one GPU look alike, so each notebook has a GPU of its own here.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_workspace_is_warned_then_stopped_and_a_busy_one_keeps_running() {
    let mut stack = Stack::start(StackConfig::default()).await;
    seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "ws", "1x2xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;

    let notebook = |name: &str, busy_pct: &str| {
        let mut input = job_input(name, &[("main", 1, 1, &["A100-80GB"])], 3600.0);
        input["labels"].as_array_mut().unwrap().push(json!({ "key": "grus.io/sim-busy-pct", "value": busy_pct }));
        input["workspace"] = json!({ "port": 8888, "idleTimeout": "20s", "idleAction": "STOP" });
        input
    };
    let idle = submit(&alice, notebook("idle-notebook", "0")).await;
    let busy = submit(&alice, notebook("busy-notebook", "60")).await;
    let kind = alice
        .data(
            "query($id: ID!) { job(id: $id) { workloadType workspace { port idleTimeoutSeconds idleAction } } }",
            json!({ "id": idle }),
        )
        .await;
    assert_eq!(
        kind["job"],
        json!({ "workloadType": "WORKSPACE", "workspace": { "port": 8888, "idleTimeoutSeconds": 20, "idleAction": "STOP" } })
    );

    stack.wait_state(&alice, &idle, "CANCELLED").await;
    let events = trail::events(&stack.db.pool, id_of(&idle)).await;
    let job_level: Vec<&trail::Event> = events.iter().filter(|e| e.task_id.is_none()).collect();
    let warned = job_level.iter().position(|e| e.cause.starts_with("idle: no GPU activity since"));
    let stopped = job_level.iter().position(|e| e.to_state == "cancelled");
    let (Some(warned), Some(stopped)) = (warned, stopped) else {
        panic!("a warning, then the stop: {job_level:?}\n{}", stack.logs());
    };
    assert!(warned < stopped, "{job_level:?}");
    assert!(job_level[stopped].cause.starts_with("stopped: idle for 20s"), "{}", job_level[stopped].cause);
    let grace = job_level[stopped].at - job_level[warned].at;
    assert!(grace >= chrono::Duration::seconds(4), "the warning came {grace} before the stop");

    let busy_now = alice.data("query($id: ID!) { job(id: $id) { state endpoint } }", json!({ "id": busy })).await;
    assert_eq!(busy_now["job"]["state"], "RUNNING", "the busy notebook keeps running\n{}", stack.logs());
    // Its URL, as the sim makes one up.
    let url = format!("http://job-{}.vision.sim.invalid:8888/", id_of(&busy));
    assert_eq!(busy_now["job"]["endpoint"], url.as_str());
    let busy_events = trail::events(&stack.db.pool, id_of(&busy)).await;
    assert!(!busy_events.iter().any(|e| e.cause.starts_with("idle")), "{busy_events:?}");
}
