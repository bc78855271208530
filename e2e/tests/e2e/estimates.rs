//! Run time prediction and estimated start with the real binaries (issue 22): finished runs
//! of a name become the history a later run is predicted from, and a waiting job's estimated
//! start (the running job's predicted end) is met within a few seconds.

use chrono::{DateTime, Utc};
use grus_testkit::stack::{id_of, job_input, seed_dev, submit};
use grus_testkit::{Stack, StackConfig};
use serde_json::{json, Value};

use crate::trail;

/// How far the real start may land from the estimate: the allocator's round, the dispatch and
/// the sim's placement take a few seconds the estimate does not count.
const TOLERANCE_S: i64 = 8;

async fn started_at(stack: &Stack, job: &Value) -> DateTime<Utc> {
    let events = trail::events(&stack.db.pool, id_of(job)).await;
    events.iter().find(|e| e.task_id.is_none() && e.to_state == "running").map(|e| e.at).expect("a running event")
}

/// One cluster of 2 GPUs. Three 1-GPU runs of `train-N` take 10 s each; then `train-3` takes
/// both GPUs for 10 s and `train-4`, behind it, waits for them. While `train-3` runs, the
/// waiting job is predicted to run ~10 s (from the three runs of its name) and expected to
/// start when `train-3` is predicted to end; it does, within [`TOLERANCE_S`].
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_jobs_estimated_start_is_met_within_its_tolerance() {
    let mut stack = Stack::start(StackConfig::default()).await;
    seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "est", "1x2xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;

    let mut history = Vec::new();
    for n in 0..3 {
        history.push(submit(&alice, job_input(&format!("train-{n}"), &[("main", 1, 1, &["A100-80GB"])], 10.0)).await);
    }
    for id in &history {
        stack.wait_state(&alice, id, "SUCCEEDED").await;
    }
    let whole = |name: &str| job_input(name, &[("main", 1, 2, &["A100-80GB"])], 10.0);
    let first = submit(&alice, whole("train-3")).await;
    let waiting = submit(&alice, whole("train-4")).await;
    stack.wait_state(&alice, &first, "RUNNING").await;
    let q = "query($id: ID!) { job(id: $id) { state queuePosition
        estimatedStart { at jobsAhead } predictedRuntime { p50Seconds p90Seconds samples basis } } }";
    let seen = alice.data(q, json!({ "id": waiting })).await["job"].clone();
    let read_at = Utc::now();
    assert_eq!(seen["predictedRuntime"]["samples"], 3, "{seen}");
    assert_eq!(seen["predictedRuntime"]["basis"], "same name", "{seen}");
    let p50 = seen["predictedRuntime"]["p50Seconds"].as_i64().unwrap();
    assert!((10..=13).contains(&p50), "the runs took ~10 s: {seen}");
    let estimate: DateTime<Utc> = seen["estimatedStart"]["at"].as_str().expect("an estimate").parse().unwrap();
    assert_eq!(seen["estimatedStart"]["jobsAhead"], 0, "{seen}");
    let first_started = started_at(&stack, &first).await;
    assert!(
        (estimate - (first_started + chrono::Duration::seconds(p50))).num_seconds().abs() <= 1,
        "expected when train-3 is predicted to end: {estimate} vs {first_started} + {p50} s"
    );
    assert!(estimate > read_at, "still ahead when read: {estimate} at {read_at}");

    stack.wait_state(&alice, &waiting, "RUNNING").await;
    let started = started_at(&stack, &waiting).await;
    let off = (started - estimate).num_seconds();
    assert!(off.abs() <= TOLERANCE_S, "started {off} s from its estimate ({started} vs {estimate})\n{}", stack.logs());
    let running = alice.data(q, json!({ "id": waiting })).await["job"].clone();
    assert_eq!((running["estimatedStart"].clone(), running["queuePosition"].clone()), (Value::Null, Value::Null));
}
