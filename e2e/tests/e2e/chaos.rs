//! Chaos soak with a Jepsen-style checker. A seeded random workload (single jobs, gangs,
//! shared GPUs, high priority, cancels) runs on two clusters and two api replicas while agents
//! are killed with `kill -9` or paused past the loss timeout, Redis and either api replica (the
//! allocator's leader or not) are killed and started again, and the database server (a private
//! PostgreSQL) crashes and restarts. Once every job has ended, one function per promise reads the history (the
//! simulators' journals, the database) and returns its violations; all are reported together
//! with the seed, which replays the same workload and fault schedule (timings aside).
//!
//! The short run (60 s) is part of the suite; the long run is the same test:
//! `GRUS_CHAOS_SECS=1200 GRUS_CHAOS_SEED=... cargo test -p grus-e2e --features e2e -- chaos`.
//! `GRUS_CHAOS_POSTGRES=0` leaves the database server's crashes out of the faults.

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
        .private_postgres()
        .api_replicas(2)
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

    // Alice through each replica: a submission goes to one that runs, as through a load balancer.
    let callers: Vec<Gql> =
        std::iter::once(alice.clone()).chain(stack.replicas.iter().map(|r| Gql::dev(&r.base, "alice"))).collect();
    let mut h = History::default();
    run(&mut stack, &callers, &mut Rng(seed), run_for, &mut h).await;
    quiesce(&alice).await;
    for cluster in CLUSTERS {
        h.journals.push((cluster.to_owned(), stack.agents[cluster].journal()));
    }
    let pool = &stack.db.pool;
    // Every job in the database, also one whose submission answered an error after its commit
    // (a replica killed or the database lost mid-request): the rules hold for it too.
    let every: Vec<(i64,)> = sqlx::query_as("SELECT id FROM jobs ORDER BY id").fetch_all(pool).await.expect("jobs");
    let ids: Vec<i64> = every.into_iter().map(|(id,)| id).collect();
    let ids = ids.as_slice();
    let runs = sim_runs(&h.journals);
    let rules: Vec<(&str, Vec<String>)> = vec![
        ("one cluster at a time", one_cluster_at_a_time(&runs)),
        ("one launch per replica and epoch", one_launch_per_epoch(&runs)),
        ("no job lost", no_job_lost(pool, seed, &h.submitted, ids).await),
        ("no cancel without a cause", no_cancel_without_cause(pool, seed, ids, &h.cancelled).await),
        ("quota never exceeded", quota_never_exceeded(pool, seed, ids).await),
        ("cancelled replicas stop", cancelled_replicas_stop_within_the_grace(pool, seed, ids).await),
        ("billing equals the ledger", ledger_matches_runs(pool, seed, ids).await),
    ];
    let sql = "SELECT state, count(*) FROM jobs WHERE id = ANY($1) GROUP BY state ORDER BY state";
    let ends: Vec<(String, i64)> = rows(pool, seed, ids, sql).await;
    println!(
        "chaos seed = {seed}: {} jobs accepted ({ends:?}), {} refused, {} cancels asked, {} sim runs",
        ids.len(),
        h.refused,
        h.cancelled.len(),
        runs.len()
    );
    // Why jobs failed (no rule forbids it: a replica lost with its node fails its job), for the
    // post-mortem of a long run.
    let sql = "SELECT j.id, e.cause FROM jobs j JOIN LATERAL (SELECT cause FROM job_events WHERE job_id = j.id \
               AND task_id IS NULL AND to_state = 'failed' ORDER BY id LIMIT 1) e ON true \
               WHERE j.id = ANY($1) AND j.state = 'failed' ORDER BY j.id";
    for (job, cause) in rows::<(i64, String)>(pool, seed, ids, sql).await {
        println!("chaos seed = {seed}: job {job} failed: {cause}");
    }
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

/// A fault in effect: SIGSTOP of an agent, `kill -9` of a process, or the database server's
/// immediate shutdown.
#[derive(Clone, Copy, Debug)]
enum Fault {
    PausedAgent(&'static str),
    KilledAgent(&'static str),
    KilledRedis,
    /// Api replica `index` (the allocator's leader or not: the log says).
    KilledApi {
        index: usize,
    },
    CrashedPostgres,
}

/// The workload and the faults, for `run_for`; every process runs again when it returns.
/// `callers` is alice through each api replica, in [`Stack::api_at`]'s order.
async fn run(stack: &mut Stack, callers: &[Gql], rng: &mut Rng, run_for: Duration, h: &mut History) {
    let t0 = Instant::now();
    let (mut next_job, mut next_fault) = (t0, t0 + rng.ms(5_000, 10_000));
    // One fault at a time: the next one waits until the last faulted process is back.
    let mut down: Option<(Instant, Fault)> = None;
    while t0.elapsed() < run_for {
        let now = Instant::now();
        if let Some((_, fault)) = down.filter(|(until, _)| now >= *until) {
            recover(stack, fault, t0).await;
            down = None;
            next_fault = next_fault.max(Instant::now() + rng.ms(1_000, 3_000));
        }
        if down.is_none() && now >= next_fault {
            down = Some(inject(stack, rng, h, t0).await);
            next_fault = now + rng.ms(5_000, 10_000);
        }
        // The testkit's client panics on a refused connection: nothing is sent to a dead api.
        if now >= next_job {
            let pick = rng.below(callers.len());
            let alice = match down {
                Some((_, Fault::KilledApi { index })) if index == pick => &callers[(index + 1) % callers.len()],
                _ => &callers[pick],
            };
            if !h.submitted.is_empty() && rng.below(20) == 0 {
                cancel_one(alice, rng, h, t0).await;
            } else {
                submit_one(alice, rng, h, t0).await;
            }
            next_job = Instant::now() + rng.ms(300, 600);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    if let Some((_, fault)) = down {
        recover(stack, fault, t0).await;
    }
}

async fn inject(stack: &mut Stack, rng: &mut Rng, h: &mut History, t0: Instant) -> (Instant, Fault) {
    let cluster = CLUSTERS[rng.below(CLUSTERS.len())];
    let kinds = if std::env::var("GRUS_CHAOS_POSTGRES").is_ok_and(|v| v == "0") { 5 } else { 6 };
    let (down_for, fault) = match rng.below(kinds) {
        0 => {
            stack.agent(cluster).kill9();
            // Nothing writes the journal between the kill and the restart, which compacts it.
            h.journals.push((cluster.to_owned(), stack.agents[cluster].journal()));
            (rng.ms(0, 3_000), Fault::KilledAgent(cluster))
        }
        1 => {
            // Past the heartbeat's 15 s TTL and the 4 s loss timeout: the control plane
            // declares the cluster lost while its jobs run on.
            stack.agents[cluster].pause();
            (rng.ms(20_000, 26_000), Fault::PausedAgent(cluster))
        }
        2 => {
            stack.redis.kill9();
            (rng.ms(1_000, 3_000), Fault::KilledRedis)
        }
        3 | 4 => {
            let index = rng.below(stack.api_count());
            let leader = stack.api_at(index).is_leader().await;
            stack.api_at(index).kill9();
            if leader {
                log(t0, format!("api replica {index} led the allocator: another one must take over"));
            }
            (rng.ms(0, 2_000), Fault::KilledApi { index })
        }
        _ => {
            stack.postgres.as_mut().expect("the soak's own PostgreSQL").crash();
            (rng.ms(1_000, 3_000), Fault::CrashedPostgres)
        }
    };
    log(t0, format!("fault: {fault:?} for {down_for:?}"));
    (Instant::now() + down_for, fault)
}

async fn recover(stack: &mut Stack, fault: Fault, t0: Instant) {
    match fault {
        Fault::PausedAgent(cluster) => stack.agents[cluster].resume(),
        Fault::KilledAgent(cluster) => stack.agent(cluster).restart(),
        Fault::KilledRedis => stack.redis.start_again(),
        Fault::KilledApi { index } => stack.api_at(index).start_again().await,
        Fault::CrashedPostgres => stack.postgres.as_mut().expect("the soak's own PostgreSQL").start_again(),
    }
    log(t0, format!("recovered from {fault:?}"));
}

async fn submit_one(alice: &Gql, rng: &mut Rng, h: &mut History, t0: Instant) {
    let (kind, secs) = (rng.below(3), rng.below(6) as f64 + 1.0);
    // One replica of 1 or 2 GPUs, a gang of 2 x 2 GPUs, or half a GPU.
    let (replicas, gpus) = [(1, 1 + rng.below(2) as u32), (2, 2), (1, 1)][kind];
    let name = format!("chaos-{}", ["single", "gang", "shared"][kind]);
    let mut input = job_input(&name, &[("main", replicas, gpus, &[])], secs);
    match kind {
        1 => input["gang"] = json!({ "minMembers": 2 }),
        2 => input["tasks"][0]["resources"]["gpuMilli"] = json!(500),
        _ => {}
    }
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
            println!("chaos: jobs still open after {QUIESCE:?}: {r}");
            return;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Launches of replicas in the simulators, keyed by (cluster, job, task, replica, epoch,
/// launched_at), whichever snapshot holds them (compaction rewrites a held replica's launch
/// line as it was), with their ends: ms on the agents' clock (the one machine's), None when
/// no snapshot tells an end.
type LaunchKey = (String, i64, String, i64, i64, i64);
type Runs = BTreeMap<LaunchKey, Option<i64>>;

fn sim_runs(journals: &[(String, Vec<Value>)]) -> Runs {
    let mut runs = Runs::new();
    for (cluster, journal) in journals {
        // Stop and fail lines name a replica, not a launch: they end its latest launch.
        let mut latest: BTreeMap<(i64, String, i64), LaunchKey> = BTreeMap::new();
        for e in journal {
            let (r, k) = (&e["replica"], &e["key"]);
            match e["op"].as_str() {
                Some("launch") => {
                    let from = int(&r["launched_at"]);
                    let start = from + int(&r["start_delay_ms"]);
                    let end = [
                        r["stopped_at"].as_i64(),
                        r["failed"][0].as_i64(),
                        r["fail_after_ms"].as_i64().map(|ms| start + ms),
                        r["duration_ms"].as_i64().map(|ms| start + ms),
                    ];
                    let replica = (int(&r["job"]), r["task"].as_str().unwrap_or("?").to_owned(), int(&r["replica"]));
                    let key = (cluster.clone(), replica.0, replica.1.clone(), replica.2, int(&r["epoch"]), from);
                    merge_end(&mut runs, key.clone(), end.into_iter().flatten().min());
                    latest.insert(replica, key);
                }
                Some("stop" | "fail") => {
                    let replica = (int(&k[0]), k[1].as_str().unwrap_or("?").to_owned(), int(&k[2]));
                    if let Some(key) = latest.get(&replica) {
                        merge_end(&mut runs, key.clone(), e["at"].as_i64());
                    }
                }
                _ => {}
            }
        }
    }
    runs
}

/// Keeps the earliest end any snapshot tells.
fn merge_end(runs: &mut Runs, key: LaunchKey, end: Option<i64>) {
    let slot = runs.entry(key).or_insert(end);
    *slot = match (*slot, end) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(-1)
}

/// Rule 1: A job's replicas never run on two clusters at the same instant (fencing by epoch).
fn one_cluster_at_a_time(runs: &Runs) -> Vec<String> {
    let runs: Vec<_> = runs.iter().collect();
    let mut out = Vec::new();
    for (i, (a, a_to)) in runs.iter().enumerate() {
        for (b, b_to) in runs[i + 1..].iter().filter(|(b, _)| b.1 == a.1 && b.0 != a.0) {
            if a.5 < b_to.unwrap_or(i64::MAX) && b.5 < a_to.unwrap_or(i64::MAX) {
                let (a, b) = (format!("{a:?} until {a_to:?}"), format!("{b:?} until {b_to:?}"));
                out.push(format!("a job ran on two clusters at once: {a} and {b}"));
            }
        }
    }
    out
}

/// Rule 2: A replica is launched once per epoch on a cluster: neither an agent's restart nor a
/// redelivered dispatch launches it again. No replica of the workload fails, so no restart
/// policy relaunches one legitimately.
fn one_launch_per_epoch(runs: &Runs) -> Vec<String> {
    let mut launches: BTreeMap<(&str, i64, &str, i64, i64), Vec<i64>> = BTreeMap::new();
    for (cluster, job, task, replica, epoch, from) in runs.keys() {
        launches.entry((cluster.as_str(), *job, task.as_str(), *replica, *epoch)).or_default().push(*from);
    }
    let twice = launches.into_iter().filter(|(_, at)| at.len() > 1);
    twice.map(|((c, job, task, i, epoch), at)| format!("{c}: job {job} {task}/{i}, epoch {epoch}: {at:?}")).collect()
}

/// Rule 3: Every accepted job is stored, and every stored job has ended; a stuck one is shown
/// with its last events.
async fn no_job_lost(pool: &PgPool, seed: u64, accepted: &[i64], stored: &[i64]) -> Vec<String> {
    let mut out = Vec::new();
    if accepted.is_empty() {
        out.push("no job was accepted: the soak exercised nothing".to_owned());
    }
    let ids: BTreeSet<i64> = accepted.iter().chain(stored).copied().collect();
    let ids: Vec<i64> = ids.into_iter().collect();
    let stored: Vec<(i64, String)> = rows(pool, seed, &ids, "SELECT id, state FROM jobs WHERE id = ANY($1)").await;
    let stored: BTreeMap<i64, String> = stored.into_iter().collect();
    for id in &ids {
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

/// Rule 4: A job ends CANCELLED only when the test asked for it, and the cancel is its user's.
async fn no_cancel_without_cause(pool: &PgPool, seed: u64, ids: &[i64], asked: &BTreeSet<i64>) -> Vec<String> {
    let sql = "SELECT j.id, e.actor, e.cause FROM jobs j LEFT JOIN LATERAL (SELECT actor, cause FROM job_events \
               WHERE job_id = j.id AND task_id IS NULL AND to_state = 'cancelled' ORDER BY id LIMIT 1) e ON true \
               WHERE j.id = ANY($1) AND j.state = 'cancelled'";
    let cancelled: Vec<(i64, Option<String>, Option<String>)> = rows(pool, seed, ids, sql).await;
    let mut out = Vec::new();
    for (id, actor, cause) in cancelled {
        if !asked.contains(&id) {
            out.push(format!("job {id} ended CANCELLED but was never cancelled (by {actor:?}: {cause:?})"));
        } else if !actor.as_deref().is_some_and(|a| a.starts_with("user:")) {
            out.push(format!("job {id} was cancelled by {actor:?} ({cause:?}), not by its user"));
        }
    }
    out
}

/// A ledger interval open at an instant: job, replica, GPU milli, start, end, the job's state.
type Holder = (i64, i64, i64, DateTime<Utc>, Option<DateTime<Utc>>, String);

/// Rule 5: At no instant do a queue's running replicas (its ledger intervals) hold more GPU milli
/// than its limit. What is held peaks at some interval's start, so the starts are checked; an
/// interval ending at that instant has let go. A queue without a GPU limit yields no row.
///
/// Quota follows admission: a cancelled job gives its quota back when it is cancelled, while
/// its replicas stop within the cancel grace. Its intervals count until the cancel, and
/// `cancelled_replicas_stop_within_the_grace` bounds the rest.
async fn quota_never_exceeded(pool: &PgPool, seed: u64, ids: &[i64]) -> Vec<String> {
    let sql = "WITH iv AS (SELECT l.job_id, l.replica_id, l.queue_id, l.gpu_milli, l.started_at, \
               CASE WHEN c.at IS NULL THEN l.ended_at ELSE LEAST(COALESCE(l.ended_at, c.at), c.at) END AS ended_at \
               FROM usage_ledger l LEFT JOIN LATERAL (SELECT min(e.at) AS at FROM job_events e \
               WHERE e.job_id = l.job_id AND e.task_id IS NULL AND e.to_state = 'cancelled') c ON true \
               WHERE l.job_id = ANY($1)) \
               SELECT DISTINCT * FROM (SELECT l.queue_id, l.started_at, q.limit_amount, (SELECT sum(o.gpu_milli) \
               FROM iv o WHERE o.queue_id = l.queue_id AND o.started_at <= l.started_at \
               AND (o.ended_at IS NULL OR o.ended_at > l.started_at))::bigint AS held \
               FROM iv l JOIN queue_quotas q ON q.queue_id = l.queue_id AND q.resource = 'gpu' \
               WHERE q.limit_amount IS NOT NULL) s WHERE held > limit_amount ORDER BY started_at LIMIT 10";
    let over: Vec<(i64, DateTime<Utc>, i64, i64)> = rows(pool, seed, ids, sql).await;
    let mut out = Vec::new();
    for (q, at, limit, held) in over {
        // Who held the GPUs then, and how each of those jobs ended.
        let holders: Vec<Holder> = sqlx::query_as(
            "SELECT o.job_id, o.replica_id, o.gpu_milli, o.started_at, o.ended_at, j.state FROM usage_ledger o \
             JOIN jobs j ON j.id = o.job_id WHERE o.queue_id = $1 AND o.started_at <= $2 \
             AND (o.ended_at IS NULL OR o.ended_at > $2) ORDER BY o.job_id",
        )
        .bind(q)
        .bind(at)
        .fetch_all(pool)
        .await
        .unwrap_or_default();
        out.push(format!("queue {q}: {held} > {limit} at {at}; held by {holders:?}"));
    }
    out
}

/// Rule 5b: A cancelled job's replicas stop within the cancel grace (the agent's `--cancel-grace`,
/// 30 s by default) plus the time its agent was away: beyond that, a cancel would hold GPUs
/// the quota already gave to others.
async fn cancelled_replicas_stop_within_the_grace(pool: &PgPool, seed: u64, ids: &[i64]) -> Vec<String> {
    let sql = "SELECT l.job_id, l.replica_id, EXTRACT(EPOCH FROM (l.ended_at - c.at))::float8 FROM usage_ledger l \
               JOIN LATERAL (SELECT min(e.at) AS at FROM job_events e WHERE e.job_id = l.job_id \
               AND e.task_id IS NULL AND e.to_state = 'cancelled') c ON c.at IS NOT NULL \
               WHERE l.job_id = ANY($1) AND l.ended_at > c.at + interval '60 seconds'";
    let late: Vec<(i64, i64, f64)> = rows(pool, seed, ids, sql).await;
    late.into_iter()
        .map(|(job, replica, secs)| format!("replica {replica} of cancelled job {job} ran {secs:.1}s past its cancel"))
        .collect()
}

/// Rule 6: Billing equals the ledger: each replica of an ended job has one ledger interval per
/// `running` event, each starting at such an event's time, and none left open.
async fn ledger_matches_runs(pool: &PgPool, seed: u64, ids: &[i64]) -> Vec<String> {
    let sql = "SELECT * FROM (SELECT r.job_id, r.id, \
               (SELECT count(*) FROM job_events e WHERE e.replica_id = r.id AND e.to_state = 'running') AS ran, \
               (SELECT count(*) FROM usage_ledger l WHERE l.replica_id = r.id) AS billed, \
               (SELECT count(*) FROM usage_ledger l WHERE l.replica_id = r.id AND (l.ended_at IS NULL \
                 OR NOT EXISTS (SELECT 1 FROM job_events e WHERE e.replica_id = r.id AND e.to_state = 'running' \
                 AND e.at = l.started_at))) AS wrong \
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
