//! Chaos soak with a Jepsen-style checker. A seeded random workload (single jobs, gangs,
//! shared GPUs, high priority, cancels) runs on two clusters while agents are killed with
//! `kill -9` or paused past the loss timeout, and Redis and the api are killed and started
//! again. Once every job has ended, one function per promise reads the history (the
//! simulators' journals, the database) and returns its violations; all are reported together
//! with the seed, which replays the same workload and fault schedule (timings aside).
//!
//! The short run (60 s) is part of the suite; the long run is the same test:
//! `GRUS_CHAOS_SECS=1200 GRUS_CHAOS_SEED=... cargo test -p grus-e2e --features e2e -- chaos`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, Utc};
use grus_testkit::stack::{id_of, job_input, seed_dev, set_gpu_quota};
use grus_testkit::{Gql, Stack, StackConfig};
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::trail;

const CLUSTERS: [&str; 2] = ["east", "west"];
/// The default queue's GPU limit (milli): below the fleet's 16 GPUs, so that admission, not
/// capacity, is what holds it and the quota rule has something to check.
const GPU_LIMIT: i64 = 12_000;
/// Bound on the wait for every job to end after the run (the machine is a loaded 2-core one).
const QUIESCE: Duration = Duration::from_secs(180);
const NOT_FINAL: [&str; 9] =
    ["PENDING", "ADMITTED", "DISPATCHED", "REJECTED", "SCHEDULED", "RUNNING", "PREEMPTING", "PREEMPTED", "UNKNOWN"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_soak_keeps_every_promise() {
    let seed = env_u64("GRUS_CHAOS_SEED")
        .unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64));
    let run_for = Duration::from_secs(env_u64("GRUS_CHAOS_SECS").unwrap_or(60));
    println!("chaos seed = {seed} (rerun with GRUS_CHAOS_SEED={seed})");
    // Short timeouts, so that a fault changes what the control plane decides within the run.
    let config = StackConfig::default()
        .api_flag("--cluster-loss-timeout", "4s")
        .api_flag("--dispatch-timeout", "15s")
        .agent_flag("--place-deadline", "15s");
    let mut stack = Stack::start(config).await;
    let tenancy = seed_dev(&stack).await;
    let (admin, alice) = (stack.dev("admin"), stack.dev("alice"));
    set_gpu_quota(&admin, &tenancy.default_queue, GPU_LIMIT, GPU_LIMIT).await;
    for cluster in CLUSTERS {
        stack.add_cluster(&admin, cluster, "2x4xA100-80GB").await;
    }
    stack.wait_clusters_ready(&admin).await;

    let mut h = History::default();
    run(&mut stack, &alice, &mut Rng(seed), run_for, &mut h).await;
    quiesce(&alice).await;
    for cluster in CLUSTERS {
        h.journals.push((cluster.to_owned(), stack.agents[cluster].journal()));
    }
    let (pool, ids) = (&stack.db.pool, h.submitted.as_slice());
    let runs = sim_runs(&h.journals);
    let rules: Vec<(&str, Vec<String>)> = vec![
        ("one cluster at a time", one_cluster_at_a_time(&runs)),
        ("one launch per replica and epoch", one_launch_per_epoch(&runs)),
        ("no job lost", no_job_lost(pool, seed, ids).await),
        ("no cancel without a cause", no_cancel_without_cause(pool, seed, &h).await),
        ("quota never exceeded", quota_never_exceeded(pool, seed, ids).await),
        ("billing equals the ledger", ledger_matches_runs(pool, seed, ids).await),
    ];
    let ends: Vec<(String, i64)> =
        rows(pool, seed, ids, "SELECT state, count(*) FROM jobs WHERE id = ANY($1) GROUP BY state ORDER BY state").await;
    println!(
        "chaos seed = {seed}: {} jobs accepted ({ends:?}), {} refused, {} cancels asked, {} sim runs",
        ids.len(),
        h.refused,
        h.cancelled.len(),
        runs.len()
    );
    let violations: Vec<String> =
        rules.iter().flat_map(|(rule, found)| found.iter().map(move |v| format!("[{rule}] {v}"))).collect();
    assert!(
        violations.is_empty(),
        "chaos seed = {seed} (rerun with GRUS_CHAOS_SEED={seed}): {} violation(s)\n{}\n{}",
        violations.len(),
        violations.join("\n"),
        stack.logs()
    );
}

#[derive(Default)]
struct History {
    /// Every job the api accepted, in order.
    submitted: Vec<i64>,
    /// Jobs the test asked to cancel, whatever the answer: a cancel that errs may have applied.
    cancelled: BTreeSet<i64>,
    refused: usize,
    /// Journal snapshots per cluster: at every agent kill (the restart compacts the journal,
    /// dropping forgotten jobs) and at the end.
    journals: Vec<(String, Vec<Value>)>,
}

/// What brings a faulted process back.
#[derive(Clone, Copy, Debug)]
enum Restore {
    Resume(&'static str),
    Restart(&'static str),
    Redis,
    Api,
}

/// The workload and the faults, for `run_for`; every process runs again when it returns.
async fn run(stack: &mut Stack, alice: &Gql, rng: &mut Rng, run_for: Duration, h: &mut History) {
    let t0 = Instant::now();
    let (mut next_job, mut next_fault) = (t0, t0 + rng.ms(5_000, 10_000));
    // One fault at a time: the next one waits until the last faulted process is back.
    let mut down: Option<(Instant, Restore)> = None;
    while t0.elapsed() < run_for {
        let now = Instant::now();
        if let Some((_, what)) = down.filter(|(until, _)| now >= *until) {
            restore(stack, what, t0).await;
            down = None;
            next_fault = next_fault.max(Instant::now() + rng.ms(1_000, 3_000));
        }
        if down.is_none() && now >= next_fault {
            down = Some(inject(stack, rng, h, t0));
            next_fault = now + rng.ms(5_000, 10_000);
        }
        // The testkit's client panics on a refused connection: nothing is sent to a dead api.
        if !matches!(down, Some((_, Restore::Api))) && now >= next_job {
            if !h.submitted.is_empty() && rng.below(20) == 0 {
                cancel_one(alice, rng, h, t0).await;
            } else {
                submit_one(alice, rng, h, t0).await;
            }
            next_job = Instant::now() + rng.ms(300, 600);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    if let Some((_, what)) = down {
        restore(stack, what, t0).await;
    }
}

fn inject(stack: &mut Stack, rng: &mut Rng, h: &mut History, t0: Instant) -> (Instant, Restore) {
    let cluster = CLUSTERS[rng.below(CLUSTERS.len())];
    let (down_for, what) = match rng.below(4) {
        0 => {
            stack.agent(cluster).kill9();
            // Nothing writes the journal between the kill and the restart, which compacts it.
            h.journals.push((cluster.to_owned(), stack.agents[cluster].journal()));
            (rng.ms(0, 3_000), Restore::Restart(cluster))
        }
        1 => {
            // Past the 4 s loss timeout: the control plane declares the cluster lost.
            stack.agents[cluster].pause();
            (rng.ms(5_000, 8_000), Restore::Resume(cluster))
        }
        2 => {
            stack.redis.kill9();
            (rng.ms(1_000, 3_000), Restore::Redis)
        }
        _ => {
            stack.api.kill9();
            (rng.ms(0, 2_000), Restore::Api)
        }
    };
    log(t0, format!("fault: down until {what:?}, in {down_for:?} (Resume: SIGSTOP; the others: kill -9)"));
    (Instant::now() + down_for, what)
}

async fn restore(stack: &mut Stack, what: Restore, t0: Instant) {
    match what {
        Restore::Resume(cluster) => stack.agents[cluster].resume(),
        Restore::Restart(cluster) => stack.agent(cluster).restart(),
        Restore::Redis => stack.redis.start_again(),
        Restore::Api => stack.api.start_again().await,
    }
    log(t0, format!("restored: {what:?}"));
}

async fn submit_one(alice: &Gql, rng: &mut Rng, h: &mut History, t0: Instant) {
    let (secs, gpus) = (rng.below(6) as f64 + 1.0, 1 + rng.below(2) as u32);
    let mut input = match rng.below(3) {
        0 => job_input("chaos-single", &[("main", 1, gpus, &[])], secs),
        1 => {
            let mut gang = job_input("chaos-gang", &[("worker", 2, 2, &[])], secs);
            gang["gang"] = json!({ "minMembers": 2 });
            gang
        }
        _ => {
            let mut shared = job_input("chaos-shared", &[("main", 1, 1, &[])], secs);
            shared["tasks"][0]["resources"]["gpuMilli"] = json!(500);
            shared
        }
    };
    if rng.below(5) == 0 {
        input["priority"] = json!("high");
    }
    let submit = "mutation($input: JobInput!) { submitJob(input: $input) { job { id } } }";
    let r = alice.request(submit, json!({ "input": input })).await;
    let id = &r["data"]["submitJob"]["job"]["id"];
    if id.is_string() {
        h.submitted.push(id_of(id));
    } else {
        h.refused += 1;
        // A full queue answers QUOTA_EXCEEDED; anything else is kept for the post-mortem.
        if r["errors"][0]["extensions"]["code"] != "QUOTA_EXCEEDED" {
            log(t0, format!("submission failed: {r}"));
        }
    }
}

async fn cancel_one(alice: &Gql, rng: &mut Rng, h: &mut History, t0: Instant) {
    // A recent job: most older ones have ended, and cancelling those only answers an error.
    let recent = &h.submitted[h.submitted.len().saturating_sub(10)..];
    let id = recent[rng.below(recent.len())];
    h.cancelled.insert(id);
    let r = alice.request("mutation($id: ID!) { cancelJob(id: $id) { state } }", json!({ "id": id.to_string() })).await;
    let answer = if r.get("errors").is_some() { &r["errors"][0]["message"] } else { &r["data"]["cancelJob"]["state"] };
    log(t0, format!("cancel of job {id}: {answer}"));
}

/// Polls until no job is open, at most [`QUIESCE`]; stuck jobs are the checker's to report.
async fn quiesce(alice: &Gql) {
    let query = "query($s: [JobState!]) { jobs(filter: { states: $s }, first: 100) { nodes { id state } } }";
    let until = Instant::now() + QUIESCE;
    loop {
        let r = alice.request(query, json!({ "s": NOT_FINAL })).await;
        if r["data"]["jobs"]["nodes"].as_array().is_some_and(Vec::is_empty) {
            return;
        }
        if Instant::now() > until {
            return println!("chaos: jobs still open after {QUIESCE:?}: {r}");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// One launch of a replica in a simulator, until its end (ms on the agents' clock, the one
/// machine's); `to` is None when no snapshot of the journal tells an end.
#[derive(Debug)]
struct SimRun {
    cluster: String,
    job: i64,
    task: String,
    replica: i64,
    epoch: i64,
    from: i64,
    to: Option<i64>,
}

/// (cluster, job, task, replica, epoch, launched_at): one launch, whichever snapshot holds it
/// (compaction rewrites a held replica's launch line with the same `launched_at`).
type LaunchKey = (String, i64, String, i64, i64, i64);

fn sim_runs(journals: &[(String, Vec<Value>)]) -> Vec<SimRun> {
    let mut ends: BTreeMap<LaunchKey, Option<i64>> = BTreeMap::new();
    for (cluster, journal) in journals {
        // Stop and fail lines name a replica, not a launch: they end its latest launch.
        let mut latest: BTreeMap<(i64, String, i64), LaunchKey> = BTreeMap::new();
        for e in journal {
            let (r, k) = (&e["replica"], &e["key"]);
            match e["op"].as_str() {
                Some("launch") => {
                    let (from, start) = (int(&r["launched_at"]), int(&r["launched_at"]) + int(&r["start_delay_ms"]));
                    let end = [
                        r["stopped_at"].as_i64(),
                        r["failed"][0].as_i64(),
                        r["fail_after_ms"].as_i64().map(|ms| start + ms),
                        r["duration_ms"].as_i64().map(|ms| start + ms),
                    ];
                    let replica = (int(&r["job"]), r["task"].as_str().unwrap_or("?").to_owned(), int(&r["replica"]));
                    let key = (cluster.clone(), replica.0, replica.1.clone(), replica.2, int(&r["epoch"]), from);
                    merge_end(&mut ends, key.clone(), end.into_iter().flatten().min());
                    latest.insert(replica, key);
                }
                Some("stop" | "fail") => {
                    let replica = (int(&k[0]), k[1].as_str().unwrap_or("?").to_owned(), int(&k[2]));
                    if let Some(key) = latest.get(&replica) {
                        merge_end(&mut ends, key.clone(), e["at"].as_i64());
                    }
                }
                _ => {}
            }
        }
    }
    let run = |((cluster, job, task, replica, epoch, from), to): (LaunchKey, Option<i64>)| SimRun {
        cluster,
        job,
        task,
        replica,
        epoch,
        from,
        to,
    };
    ends.into_iter().map(run).collect()
}

/// Keeps the earliest end any snapshot tells.
fn merge_end(ends: &mut BTreeMap<LaunchKey, Option<i64>>, key: LaunchKey, end: Option<i64>) {
    let slot = ends.entry(key).or_insert(end);
    *slot = match (*slot, end) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(-1)
}

/// 1. A job's replicas never run on two clusters at the same instant (fencing by epoch).
fn one_cluster_at_a_time(runs: &[SimRun]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in runs.iter().enumerate() {
        for b in runs[i + 1..].iter().filter(|b| b.job == a.job && b.cluster != a.cluster) {
            if a.from < b.to.unwrap_or(i64::MAX) && b.from < a.to.unwrap_or(i64::MAX) {
                out.push(format!("job {} ran on two clusters at once: {a:?} and {b:?}", a.job));
            }
        }
    }
    out
}

/// 2. A replica is launched once per epoch on a cluster: neither an agent's restart nor a
/// redelivered dispatch launches it again. No replica of the workload fails, so no restart
/// policy relaunches one legitimately.
fn one_launch_per_epoch(runs: &[SimRun]) -> Vec<String> {
    let mut launches: BTreeMap<(&str, i64, &str, i64, i64), Vec<i64>> = BTreeMap::new();
    for r in runs {
        launches.entry((r.cluster.as_str(), r.job, r.task.as_str(), r.replica, r.epoch)).or_default().push(r.from);
    }
    let twice = launches.into_iter().filter(|(_, at)| at.len() > 1);
    twice.map(|((c, job, task, i, epoch), at)| format!("{c}: {task}/{i} of job {job} launched in epoch {epoch} at {at:?}")).collect()
}

/// 3. Every accepted job is stored and has ended; a stuck one is shown with its last events.
async fn no_job_lost(pool: &PgPool, seed: u64, ids: &[i64]) -> Vec<String> {
    let mut out = Vec::new();
    if ids.is_empty() {
        out.push("no job was accepted: the soak exercised nothing".to_owned());
    }
    let stored: BTreeMap<i64, String> = rows(pool, seed, ids, "SELECT id, state FROM jobs WHERE id = ANY($1)").await.into_iter().collect();
    for id in ids {
        match stored.get(id).map(String::as_str) {
            None => out.push(format!("job {id} was accepted but is not in the database")),
            Some("succeeded" | "failed" | "cancelled") => {}
            Some(state) => {
                let events = trail::events(pool, *id).await;
                let last = &events[events.len().saturating_sub(5)..];
                out.push(format!("job {id} is still {state} after {QUIESCE:?}; its last events: {last:?}"));
            }
        }
    }
    out
}

/// 4. A job ends CANCELLED only when the test asked for it, and the cancel is its user's.
async fn no_cancel_without_cause(pool: &PgPool, seed: u64, h: &History) -> Vec<String> {
    let sql = "SELECT j.id, e.actor, e.cause FROM jobs j LEFT JOIN LATERAL (SELECT actor, cause FROM job_events \
               WHERE job_id = j.id AND task_id IS NULL AND to_state = 'cancelled' ORDER BY id LIMIT 1) e ON true \
               WHERE j.id = ANY($1) AND j.state = 'cancelled'";
    let cancelled: Vec<(i64, Option<String>, Option<String>)> = rows(pool, seed, &h.submitted, sql).await;
    let mut out = Vec::new();
    for (id, actor, cause) in cancelled {
        if !h.cancelled.contains(&id) {
            out.push(format!("job {id} ended CANCELLED but was never cancelled (by {actor:?}: {cause:?})"));
        } else if !actor.as_deref().is_some_and(|a| a.starts_with("user:")) {
            out.push(format!("job {id} was cancelled by {actor:?} ({cause:?}), not by its user"));
        }
    }
    out
}

/// 5. At no instant do a queue's running replicas (its ledger intervals) hold more GPU milli
/// than its limit. What is held peaks at some interval's start, so the starts are checked; an
/// interval ending at that instant has let go. A queue without a GPU limit yields no row.
async fn quota_never_exceeded(pool: &PgPool, seed: u64, ids: &[i64]) -> Vec<String> {
    let sql = "SELECT * FROM (SELECT l.queue_id, l.started_at, q.limit_amount, (SELECT sum(o.gpu_milli) \
               FROM usage_ledger o WHERE o.queue_id = l.queue_id AND o.started_at <= l.started_at \
               AND (o.ended_at IS NULL OR o.ended_at > l.started_at))::bigint AS held \
               FROM usage_ledger l JOIN queue_quotas q ON q.queue_id = l.queue_id AND q.resource = 'gpu' \
               WHERE l.job_id = ANY($1) AND q.limit_amount IS NOT NULL) s \
               WHERE held > limit_amount ORDER BY started_at LIMIT 10";
    let over: Vec<(i64, DateTime<Utc>, i64, i64)> = rows(pool, seed, ids, sql).await;
    over.into_iter().map(|(q, at, limit, held)| format!("queue {q} held {held} GPU milli at {at}, over its limit {limit}")).collect()
}

/// 6. Billing equals the ledger: each replica of an ended job has one ledger interval per
/// `running` event, each starting at such an event's time, and none left open.
async fn ledger_matches_runs(pool: &PgPool, seed: u64, ids: &[i64]) -> Vec<String> {
    let sql = "SELECT * FROM (SELECT r.job_id, r.id, \
               (SELECT count(*) FROM job_events e WHERE e.replica_id = r.id AND e.to_state = 'running') AS ran, \
               (SELECT count(*) FROM usage_ledger l WHERE l.replica_id = r.id) AS billed, \
               (SELECT count(*) FROM usage_ledger l WHERE l.replica_id = r.id AND (l.ended_at IS NULL OR NOT EXISTS \
                 (SELECT 1 FROM job_events e WHERE e.replica_id = r.id AND e.to_state = 'running' AND e.at = l.started_at))) AS wrong \
               FROM replicas r JOIN jobs j ON j.id = r.job_id \
               WHERE r.job_id = ANY($1) AND j.state IN ('succeeded', 'failed', 'cancelled')) s \
               WHERE ran <> billed OR wrong > 0 ORDER BY job_id, id";
    let mut out = Vec::new();
    for (job, replica, ran, billed, wrong) in rows::<(i64, i64, i64, i64, i64)>(pool, seed, ids, sql).await {
        out.push(format!(
            "replica {replica} of job {job}: {ran} running events, {billed} ledger intervals ({wrong} open or starting \
             at no running event): {:?}",
            trail::ledger(pool, Some(job)).await
        ));
    }
    out
}

/// The rows of `sql`, whose `$1` is the ids of the jobs the test submitted.
async fn rows<T>(pool: &PgPool, seed: u64, ids: &[i64], sql: &str) -> Vec<T>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow> + Send + Unpin,
{
    let fetched = sqlx::query_as(sql).bind(ids).fetch_all(pool).await;
    fetched.unwrap_or_else(|e| panic!("chaos seed = {seed}: {sql}: {e}"))
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    Some(v.trim().parse().unwrap_or_else(|e| panic!("{name}={v}: {e}")))
}

fn log(t0: Instant, what: impl std::fmt::Display) {
    println!("[chaos {} +{:.1}s] {what}", Utc::now().format("%H:%M:%S%.3f"), t0.elapsed().as_secs_f64());
}

/// SplitMix64: e2e does not depend on grus-scheduler (whose `SeededRng` seeds through it).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// In `0..n`; the modulo bias is negligible for the small `n` used here.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A duration of `lo..=hi` milliseconds.
    fn ms(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.next() % (hi - lo + 1))
    }
}
