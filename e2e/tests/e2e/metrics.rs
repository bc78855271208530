//! Per-replica resource use and metrics history with the real binaries (issue 22): the sim
//! agent's synthetic CPU, memory, disk and network readings reach a running replica's `usage`,
//! the job's history holds them beside its GPU samples, and the cluster's history its devices'.

use grus_testkit::stack::{job_input, seed_dev, submit};
use grus_testkit::{Stack, StackConfig};
use serde_json::{json, Value};

/// A running job of 2 replicas: each replica's latest use, the job's totals in its history and
/// aggregates, and the cluster's GPU history; once the job ended, no replica reports use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_replicas_resource_use_and_the_jobs_history_reach_the_api() {
    let mut stack = Stack::start(StackConfig::default()).await;
    seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    stack.add_cluster(&admin, "metrics", "1x4xA100-80GB").await;
    stack.wait_clusters_ready(&admin).await;
    let job = submit(&alice, job_input("profiled", &[("main", 2, 1, &["A100-80GB"])], 40.0)).await;
    stack.wait_state(&alice, &job, "RUNNING").await;

    let selection = "replicas { state usage { cpuCores memoryMib diskReadBps netRxBps at } }
        utilization { usageSamples maxCpuCores maxMemoryMib }
        metricHistory { resolutionSeconds points { samples busyPctAvg usageSamples cpuCoresAvg memoryMibMax } }";
    let seen = stack
        .wait_job(&alice, &job, selection, "resource use of both replicas and a history point with it", |j| {
            let replicas = j["replicas"].as_array().map(Vec::as_slice).unwrap_or_default();
            let points = j["metricHistory"]["points"].as_array().map(Vec::as_slice).unwrap_or_default();
            replicas.len() == 2
                && replicas.iter().all(|r| !r["usage"].is_null())
                && points.iter().any(|p| p["usageSamples"].as_i64() > Some(0) && p["samples"].as_i64() > Some(0))
        })
        .await;
    for r in seen["replicas"].as_array().unwrap() {
        let cores = r["usage"]["cpuCores"].as_f64().unwrap();
        // The sim keeps a job ~90 % busy: about that share of the 1 core each replica asked for.
        assert!((0.5..=1.0).contains(&cores), "{r}");
        assert!(r["usage"]["memoryMib"].as_i64().unwrap() > 0, "{r}");
    }
    let point = seen["metricHistory"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["usageSamples"].as_i64() > Some(0))
        .unwrap()
        .clone();
    let total = point["cpuCoresAvg"].as_f64().unwrap();
    assert!((1.0..=2.0).contains(&total), "the job's total is both replicas': {point}");
    assert!(point["busyPctAvg"].as_f64().unwrap() > 50.0, "{point}");
    assert!(seen["utilization"]["usageSamples"].as_i64().unwrap() >= 1, "{seen}");
    assert!(seen["utilization"]["maxCpuCores"].as_f64().unwrap() >= total - 1e-9, "{seen}");

    let cluster = admin
        .data(
            "query { cluster(id: \"metrics\") { metricHistory { points { samples busyPctAvg cpuCoresAvg } } } }",
            json!({}),
        )
        .await;
    let points = cluster["cluster"]["metricHistory"]["points"].as_array().cloned().unwrap_or_default();
    assert!(!points.is_empty(), "{cluster}");
    // 2 of the cluster's 4 devices run the job ~90 % busy: the mean over its devices is ~45 %.
    let busy = points.last().unwrap()["busyPctAvg"].as_f64().unwrap();
    assert!((20.0..=60.0).contains(&busy), "{cluster}");
    assert_eq!(points.last().unwrap()["cpuCoresAvg"], Value::Null);

    stack.wait_state(&alice, &job, "SUCCEEDED").await;
    let ended =
        alice.data("query($id: ID!) { job(id: $id) { replicas { usage { cpuCores } } } }", json!({ "id": job })).await;
    assert!(ended["job"]["replicas"].as_array().unwrap().iter().all(|r| r["usage"].is_null()), "{ended}");
}
