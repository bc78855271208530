//! Elastic shrink: a low-priority elastic job fills the cluster; a high-priority job of its
//! queue arrives. The control plane sends it to the cluster because the elastic job's replicas
//! above its minimum make room; the agent stops just two of them after their grace period
//! (the job keeps running, never `preempting`), starts the high-priority job, and once that
//! ends the elastic job grows back into the replicas it gave back and completes.

use std::time::Duration;

use grus_testkit::stack::{id_of, job_input, seed_dev, set_gpu_quota, submit};
use grus_testkit::{Stack, StackConfig};
use serde_json::json;
use sqlx::PgPool;

use crate::trail;

/// Replicas of `job` running, and whole GPUs the cluster's last capacity summary calls free.
async fn running_and_free(pool: &PgPool, job: i64) -> (i64, i64) {
    sqlx::query_as(
        "SELECT (SELECT count(*) FROM replicas WHERE job_id = $1 AND state = 'running'),
                (SELECT COALESCE(sum(n::bigint), 0)::bigint FROM clusters c,
                   jsonb_array_elements(c.capacity->'models') m,
                   jsonb_array_elements_text(m->'free_whole_per_node') n
                 WHERE c.id = 'solo')",
    )
    .bind(job)
    .fetch_one(pool)
    .await
    .expect("replicas and capacity")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elastic_job_shrinks_for_a_higher_priority_job_and_grows_back() {
    let config = StackConfig::default().agent_flag("--eviction-grace", "2s");
    let mut stack = Stack::start(config).await;
    let t = seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    set_gpu_quota(&admin, &t.default_queue, 4000, 8000).await;
    stack.add_cluster(&admin, "solo", "1x4xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;
    let pool = stack.db.pool.clone();

    let mut elastic_input = job_input("elastic", &[("main", 1, 1, &["A100-80GB"])], 25.0);
    elastic_input["elastic"] = json!({ "min": 1, "max": 4 });
    elastic_input["priority"] = json!("low");
    elastic_input["preemptible"] = json!(true);
    let elastic = submit(&alice, elastic_input).await;
    stack.wait_state(&alice, &elastic, "RUNNING").await;
    let elastic_id = id_of(&elastic);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    // Full, as the control plane sees it: no room for the next job but what shrinking makes.
    while running_and_free(&pool, elastic_id).await != (4, 0) {
        assert!(tokio::time::Instant::now() < deadline, "the elastic job never filled the cluster\n{}", stack.logs());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let mut urgent_input = job_input("urgent", &[("main", 1, 2, &["A100-80GB"])], 3.0);
    urgent_input["priority"] = json!("high");
    let urgent = submit(&alice, urgent_input).await;
    let urgent_id = id_of(&urgent);
    stack.wait_state(&alice, &urgent, "SUCCEEDED").await;
    stack.wait_state(&alice, &elastic, "SUCCEEDED").await;

    // The control plane sent the urgent job into the room the elastic job gives back.
    let urgent_events = trail::events(&pool, urgent_id).await;
    let dispatched =
        urgent_events.iter().find(|e| e.task_id.is_none() && e.to_state == "dispatched").expect("dispatched");
    assert!(dispatched.cause.contains(&format!("room from elastic job(s) {elastic_id}")), "{:?}", dispatched.cause);

    // The elastic job was never evicted: two of its replicas were given back, then ran again.
    let events = trail::events(&pool, elastic_id).await;
    let states = trail::job_states(&events);
    assert!(!states.iter().any(|s| s == "preempting" || s == "preempted"), "{states:?}");
    assert_eq!(states.last().map(String::as_str), Some("succeeded"), "{states:?}");
    let why = format!("shrank to make room for job {urgent_id}");
    let given_back: Vec<i64> = events
        .iter()
        .filter(|e| e.replica_id.is_some() && e.to_state == "evicted" && e.cause.contains(&why))
        .map(|e| e.replica_id.unwrap())
        .collect();
    assert_eq!(given_back.len(), 2, "two replicas given back for a 2-GPU job: {events:?}");
    let per_replica = trail::replica_states(&events);
    for r in &given_back {
        let s = &per_replica[r];
        let evicted = s.iter().position(|x| x == "evicted").unwrap();
        assert!(s[evicted..].iter().any(|x| x == "running"), "replica {r} grew back: {s:?}");
    }

    // The ledger: the given-back replicas' runs ended by preemption before the urgent job
    // started, and they ran again after it ended.
    let runs = trail::ledger(&pool, Some(elastic_id)).await;
    let cut: Vec<&trail::Interval> = runs.iter().filter(|i| i.ended_by_preemption).collect();
    assert_eq!(cut.len(), 2, "{runs:?}");
    let urgent_runs = trail::ledger(&pool, Some(urgent_id)).await;
    assert_eq!(urgent_runs.len(), 1, "{urgent_runs:?}");
    for i in &cut {
        assert!(i.ended_at.expect("closed") <= urgent_runs[0].started_at, "{runs:?} {urgent_runs:?}");
    }
    let urgent_end = urgent_runs[0].ended_at.expect("closed");
    let regrown = runs.iter().filter(|i| given_back.contains(&i.replica_id) && i.started_at >= urgent_end).count();
    assert_eq!(regrown, 2, "both grew back after the urgent job: {runs:?}");
}
