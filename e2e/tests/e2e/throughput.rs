//! End-to-end latency and throughput (BENCHMARKS.md "End to end"): the real `grus-api` and
//! `GRUS_BENCH_AGENTS` `grus-agent` processes (sim backend, `GRUS_BENCH_NODES` nodes of 8 A100
//! each), a fresh PostgreSQL database and a private Redis. For each arrival rate of
//! `GRUS_BENCH_RATES` (jobs/s), jobs are submitted open loop (each at its scheduled instant,
//! whatever the answers before it) for `GRUS_BENCH_SECS` seconds: 90 % one GPU, 10 % gangs of
//! 2 x 8 GPUs, each running 2 s. From the job events it reports submit→admitted, →dispatched
//! and →running percentiles (submit = when the client sent the request) and whether the rate
//! was sustained: every job of the window running within `GRUS_BENCH_GRACE_SECS` (5) after it.
//!
//! A benchmark, not a test of timing: it asserts only that the jobs ran. Release build:
//!
//! ```sh
//! cargo build --release -p grus-api -p grus-agent
//! GRUS_BENCH_RATES=100,500,1000,2000 cargo test --release -p grus-e2e --features e2e -- \
//!   --ignored throughput --nocapture
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use grus_testkit::stack::{id_of, job_input, seed_dev};
use grus_testkit::{Stack, StackConfig};
use serde_json::json;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: prints latency percentiles and the sustained rate"]
async fn submit_to_running_latency_and_sustained_rate() {
    let agents: usize = env_or("GRUS_BENCH_AGENTS", 4);
    let nodes: usize = env_or("GRUS_BENCH_NODES", 1000);
    let secs: u64 = env_or("GRUS_BENCH_SECS", 10);
    let grace: u64 = env_or("GRUS_BENCH_GRACE_SECS", 5);
    let rates: Vec<u64> = std::env::var("GRUS_BENCH_RATES")
        .unwrap_or_else(|_| "100,250,500".into())
        .split(',')
        .map(|r| r.trim().parse().expect("GRUS_BENCH_RATES: jobs per second, comma-separated"))
        .collect();
    // The production allocator interval: rounds must start on events, not on the timer.
    let config = StackConfig::default()
        .api_flag("--allocator-interval", "1s")
        .agent_flag("--place-deadline", "120s")
        .api_flag("--dispatch-timeout", "120s");
    let mut stack = Stack::start(config).await;
    seed_dev(&stack).await;
    let admin = stack.dev("admin");
    for i in 0..agents {
        stack.add_cluster(&admin, &format!("bench-{i}"), &format!("{nodes}x8xA100-80GB")).await;
    }
    stack.wait_clusters_ready(&admin).await;

    for rate in rates {
        let total = (rate * secs) as usize;
        let start = tokio::time::Instant::now() + Duration::from_millis(200);
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..total {
            let at = start + Duration::from_secs_f64(i as f64 / rate as f64);
            let alice = stack.dev("alice");
            let input = if i % 10 == 9 {
                let mut gang = job_input("bench-gang", &[("main", 2, 8, &[])], 2.0);
                gang["gang"] = json!({ "minMembers": 2 });
                gang
            } else {
                job_input("bench", &[("main", 1, 1, &[])], 2.0)
            };
            tasks.spawn(async move {
                tokio::time::sleep_until(at).await;
                let sent = Utc::now();
                let submit = "mutation($input: JobInput!) { submitJob(input: $input) { job { id } } }";
                let r = alice.request(submit, json!({ "input": input })).await;
                let id = &r["data"]["submitJob"]["job"]["id"];
                id.is_string().then(|| (id_of(id), sent))
            });
        }
        let mut sent: BTreeMap<i64, DateTime<Utc>> = BTreeMap::new();
        let mut refused = 0;
        while let Some(r) = tasks.join_next().await {
            match r.expect("submission task") {
                Some((id, at)) => {
                    sent.insert(id, at);
                }
                None => refused += 1,
            }
        }
        let ids: Vec<i64> = sent.keys().copied().collect();
        // Every job of the window running (or already done) within the grace.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(grace);
        let started = loop {
            let (n,): (i64,) = sqlx::query_as(
                "SELECT count(DISTINCT job_id) FROM job_events WHERE job_id = ANY($1) AND task_id IS NULL \
                 AND to_state = 'running'",
            )
            .bind(&ids)
            .fetch_one(&stack.db.pool)
            .await
            .expect("started jobs");
            if n as usize == ids.len() || tokio::time::Instant::now() >= deadline {
                break n as usize;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let firsts: Vec<(i64, String, DateTime<Utc>)> = sqlx::query_as(
            "SELECT job_id, to_state, min(at) FROM job_events WHERE job_id = ANY($1) AND task_id IS NULL \
             AND to_state IN ('admitted', 'dispatched', 'running') GROUP BY job_id, to_state",
        )
        .bind(&ids)
        .fetch_all(&stack.db.pool)
        .await
        .expect("job events");
        let states: Vec<(String, i64)> =
            sqlx::query_as("SELECT state, count(*) FROM jobs WHERE id = ANY($1) GROUP BY state ORDER BY state")
                .bind(&ids)
                .fetch_all(&stack.db.pool)
                .await
                .expect("job states");
        let mut lat: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for (job, state, at) in &firsts {
            let ms = (*at - sent[job]).num_microseconds().unwrap_or(0) as f64 / 1000.0;
            let key = match state.as_str() {
                "admitted" => "admitted",
                "dispatched" => "dispatched",
                _ => "running",
            };
            lat.entry(key).or_default().push(ms.max(0.0));
        }
        let pct = |v: &mut Vec<f64>, p: f64| -> f64 {
            if v.is_empty() {
                return f64::NAN;
            }
            v.sort_by(f64::total_cmp);
            let i = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
            (v[i] * 10.0).round() / 10.0
        };
        let mut out = json!({
            "rate_per_s": rate, "secs": secs, "agents": agents, "nodes_per_agent": nodes,
            "submitted": total, "accepted": ids.len(), "refused": refused,
            "started_within_grace": started, "sustained": started == ids.len() && refused == 0,
            "states_after_grace": states.into_iter().collect::<BTreeMap<_, _>>(),
        });
        for (key, mut v) in lat {
            out[format!("to_{key}_ms")] = json!({
                "p50": pct(&mut v, 50.0), "p95": pct(&mut v, 95.0), "p99": pct(&mut v, 99.0), "n": v.len(),
            });
        }
        println!("{out}");
        if started < ids.len() {
            println!("{}", stack.logs());
        }
        // Let the window's jobs finish before the next rate.
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
}
