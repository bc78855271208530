//! Recovery figures (BENCHMARKS.md "Recovery after faults"): for each fault, the time from the
//! faulted process being back to the control plane running new work again (a job submitted at
//! that moment reaching RUNNING) and to its cluster showing healthy. A benchmark, not a test of
//! timing: it asserts only that recovery happens, and prints the figures as JSON lines.
//!
//! `cargo test -p grus-e2e --features e2e -- --ignored recovery --nocapture`

use std::time::{Duration, Instant};

use grus_testkit::stack::{job_input, seed_dev, submit};
use grus_testkit::{Gql, Stack, StackConfig};
use serde_json::json;

#[derive(Clone, Copy, Debug)]
enum Fault {
    RestartRedis,
    /// An immediate shutdown of the database server (every session cut, crash recovery at the
    /// next start), down for a second.
    RestartPostgres,
    KillApi,
    /// `kill -9` of the replica leading the allocator; the other one takes over by itself.
    KillLeader,
    KillAgent,
    PauseAgentPastLoss,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: prints recovery times"]
async fn time_to_recover_after_each_fault() {
    let faults = [
        Fault::RestartRedis,
        Fault::RestartPostgres,
        Fault::KillApi,
        Fault::KillLeader,
        Fault::KillAgent,
        Fault::PauseAgentPastLoss,
    ];
    for fault in faults {
        let mut config = StackConfig::default().api_flag("--cluster-loss-timeout", "4s");
        match fault {
            Fault::RestartPostgres => config = config.private_postgres(),
            Fault::KillLeader => config = config.api_replicas(2),
            _ => {}
        }
        let mut stack = Stack::start(config).await;
        seed_dev(&stack).await;
        let (mut admin, mut alice) = (stack.dev("admin"), stack.dev("alice"));
        stack.add_cluster(&admin, "solo", "2x4xA100-80GB").await;
        stack.wait_clusters_ready(&admin).await;
        let warm = submit(&alice, job_input("warm", &[("main", 1, 1, &[])], 1.0)).await;
        stack.wait_state(&alice, &warm, "SUCCEEDED").await;

        match fault {
            Fault::RestartRedis => {
                stack.redis.kill9();
                tokio::time::sleep(Duration::from_secs(1)).await;
                stack.redis.start_again();
            }
            Fault::RestartPostgres => {
                let postgres = stack.postgres.as_mut().expect("a private PostgreSQL server");
                postgres.crash();
                tokio::time::sleep(Duration::from_secs(1)).await;
                postgres.start_again();
            }
            Fault::KillApi => {
                stack.api.kill9();
                stack.api.start_again().await;
            }
            Fault::KillLeader => {
                let leader = stack.leader().await;
                stack.api_at(leader).kill9();
                // The callers move to the survivor, as a load balancer would send them.
                let survivor = stack.api_at(1 - leader).base.clone();
                admin = Gql::dev(&survivor, "admin");
                alice = Gql::dev(&survivor, "alice");
            }
            Fault::KillAgent => stack.agent("solo").restart(),
            Fault::PauseAgentPastLoss => {
                stack.agents["solo"].pause();
                wait_health(&stack, &admin, "unreachable").await;
                stack.agents["solo"].resume();
            }
        }
        let back = Instant::now();
        let probe = submit(&alice, job_input("probe", &[("main", 1, 1, &[])], 30.0)).await;
        stack.wait_state(&alice, &probe, "RUNNING").await;
        let running = back.elapsed();
        wait_health(&stack, &admin, "healthy").await;
        let healthy = back.elapsed();
        println!(
            "{}",
            json!({
                "fault": format!("{fault:?}"),
                "new_job_running_s": (running.as_secs_f64() * 100.0).round() / 100.0,
                "cluster_healthy_s": (healthy.as_secs_f64() * 100.0).round() / 100.0,
            })
        );
    }
}

async fn wait_health(stack: &Stack, who: &Gql, health: &str) {
    let deadline = grus_testkit::Deadline::new(format!("cluster {health}"), grus_testkit::wait::PATIENCE);
    loop {
        let r = who.data("{ clusters { health } }", json!({})).await;
        if r["clusters"][0]["health"] == health {
            return;
        }
        deadline.tick(|| format!("{r}\n{}", stack.logs())).await;
    }
}
