//! Batched ingestion equals one event at a time: the same seeded stream of agent events
//! (lifecycles of several jobs interleaved, with redeliveries, stale and newer epochs, unknown
//! jobs and units, out-of-order states, ends that requeue or give the job back, and other kinds
//! of events in between) is ingested into two databases with the same jobs, by an ingester
//! reading one entry at a time (one transaction each) and by one reading up to 256 (runs
//! written set-based); every table ingestion writes must end up the same.

use grus_api::domain::JobState;
use grus_protocol::codec::{encode, Envelope};
use grus_protocol::event::Event;
use grus_protocol::wire::{DeviceRef, ReplicaExit, State, Termination};
use grus_scheduler::rng::SeededRng;
use grus_testkit::env::unique;
use grus_testkit::seed::{self, dispatched_job, fixture, SYSTEM};
use grus_testkit::TestDb;
use sqlx::PgPool;

use super::ingest::{a100_node, config, conn, ingester, now_ms, publish_raw, TestCluster};

/// The test's only randomness, from its seed.
struct Rng(SeededRng);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.0.below(100) < percent
    }
}

/// A report: (task and replica, state, epoch).
type Line = (Option<(&'static str, u32)>, State, u64);

/// A job's reports as an agent would send them, with one of several endings.
fn lifecycle(rng: &mut Rng, replicas: u32) -> Vec<Line> {
    let mut out: Vec<Line> = vec![(None, State::Scheduled, 1)];
    out.extend((0..replicas).map(|r| (Some(("main", r)), State::Placed, 1)));
    out.push((Some(("main", u32::MAX)), State::Placed, 1));
    if rng.chance(15) {
        out.push((None, State::Rejected, 1)); // given back after placing
        return out;
    }
    out.extend((0..replicas).map(|r| (Some(("main", r)), State::Running, 1)));
    out.push((Some(("main", u32::MAX)), State::Running, 1));
    out.push((None, State::Running, 1));
    let end = [State::Succeeded, State::Failed, State::Preempted, State::Cancelled, State::Evicted][rng.below(5)];
    if end == State::Evicted && replicas > 0 {
        // One replica stops and runs again (its interval closes and a new one opens).
        out.push((Some(("main", 0)), State::Evicted, 1));
        out.push((Some(("main", 0)), State::Pending, 1));
        out.push((Some(("main", 0)), State::Placed, 1));
        out.push((Some(("main", 0)), State::Running, 1));
        out.push((None, State::Succeeded, 1));
        return out;
    }
    out.extend((0..replicas).map(|r| (Some(("main", r)), end, 1)));
    out.push((Some(("main", u32::MAX)), end, 1));
    out.push((None, end, 1));
    out
}

/// A report no well-behaved agent sends in that order: any unit, any state, any epoch.
fn noise(rng: &mut Rng) -> Line {
    let unit = match rng.below(4) {
        0 => None,
        1 => Some(("main", u32::MAX)),
        2 => Some(("main", rng.below(3) as u32)),
        _ => Some(("nope", 0)),
    };
    (unit, State::ALL[rng.below(State::ALL.len())], [0, 1, 1, 1, 2][rng.below(5)])
}

/// The encoded stream: `jobs` (id, replicas) interleaved, with noise and redeliveries.
fn stream(seed: u64, cluster: &str, jobs: &[(i64, u32)]) -> Vec<String> {
    let mut rng = Rng(SeededRng::new(seed));
    let mut scripts: Vec<(i64, u32, std::collections::VecDeque<Line>)> =
        jobs.iter().map(|&(id, n)| (id, n, lifecycle(&mut rng, n).into())).collect();
    scripts.push((999_999, 1, vec![(None, State::Running, 1), (Some(("main", 0)), State::Running, 1)].into()));
    let base = now_ms() - 60_000;
    let mut sent: Vec<String> = Vec::new();
    let inventory = Event::Inventory { nodes: vec![a100_node("n0", 4), a100_node("n1", 4), a100_node("n2", 4)] };
    sent.push(encode(&Envelope::new(unique("inv"), cluster, base, inventory)));
    let mut k = 0i64;
    while scripts.iter().any(|s| !s.2.is_empty()) {
        k += 1;
        if rng.chance(8) && !sent.is_empty() {
            let copy = sent[rng.below(sent.len())].clone(); // a redelivery
            sent.push(copy);
            continue;
        }
        if rng.chance(3) {
            let cap = Event::Capacity { summary: Default::default() };
            sent.push(encode(&Envelope::new(unique("cap"), cluster, base + k, cap)));
            continue;
        }
        let live: Vec<usize> = (0..scripts.len()).filter(|&i| !scripts[i].2.is_empty()).collect();
        let i = live[rng.below(live.len())];
        let (job, replicas, script) = &mut scripts[i];
        let (unit, state, epoch) = if rng.chance(10) { noise(&mut rng) } else { script.pop_front().expect("live") };
        let unit = unit.map(|(t, r)| (t, if r == u32::MAX { None } else { Some(r) }));
        let replica = unit.and_then(|u| u.1);
        let node = replica.map(|r| format!("n{}", r % 3));
        let devices = match (replica, state) {
            (Some(r), State::Placed | State::Running) if r < *replicas => vec![DeviceRef::share(r, 1000)],
            _ => vec![],
        };
        let event = Event::JobState {
            job: *job as u64,
            task: unit.map(|u| u.0.to_owned()),
            replica,
            state,
            node,
            devices,
            at: base + k * 10,
            epoch,
            reason: rng.chance(20).then(|| "because".to_owned()),
            checkpoint: None,
            endpoint: None,
            exit: (replica.is_some() && state.is_terminal()).then(|| ReplicaExit::new(Some(3), Termination::Error)),
        };
        sent.push(encode(&Envelope::new(unique("m"), cluster, base + k * 10, event)));
    }
    sent
}

/// Steps until a step handles nothing (one entry per step takes as many steps as entries).
async fn drain(ing: &mut grus_api::ingest::Ingester) {
    for _ in 0..10_000 {
        if ing.step().await.expect("step") == 0 && ing.step().await.expect("step") == 0 {
            return;
        }
    }
    panic!("the stream never drained");
}

/// Every table ingestion writes, as text (ids of events, and times the database stamps itself,
/// also on events no agent message carries, left out: they differ between any two runs).
async fn tables(pool: &PgPool) -> Vec<(&'static str, String)> {
    let queries: [(&str, &str); 9] = [
        ("jobs", "SELECT id, state, epoch, cluster_id, why_pending IS NULL FROM jobs ORDER BY id"),
        ("tasks", "SELECT id, job_id, state FROM tasks ORDER BY id"),
        (
            "replicas",
            "SELECT id, state, node, devices, cluster_id, epoch, exit_code, termination FROM replicas ORDER BY id",
        ),
        (
            "job_events",
            "SELECT job_id, task_id, replica_id, from_state, to_state, cause, actor,
                    CASE WHEN message_id IS NULL THEN NULL ELSE at END AS at,
                    cluster_id, epoch, message_id
             FROM job_events ORDER BY id",
        ),
        (
            "dispatches",
            "SELECT job_id, epoch, cluster_id, outcome, reason, acknowledged_at IS NULL FROM dispatches ORDER BY 1, 2",
        ),
        (
            "usage_ledger",
            "SELECT replica_id, job_id, gpu_model, gpu_milli, started_at, ended_at, ended_by_preemption
             FROM usage_ledger ORDER BY replica_id, started_at",
        ),
        ("ingested_messages", "SELECT message_id, kind, outcome FROM ingested_messages ORDER BY message_id"),
        ("stale_cancels", "SELECT job_id, epoch, cluster_id FROM stale_cancels ORDER BY 1, 2"),
        (
            "queue_usage",
            "SELECT queue_id, resource, sum(amount) FROM queue_usage_deltas GROUP BY 1, 2 HAVING sum(amount) <> 0
             ORDER BY 1, 2",
        ),
    ];
    let mut out = Vec::new();
    for (name, q) in queries {
        let (text,): (Option<String>,) = sqlx::query_as(&format!("SELECT json_agg(t)::text FROM ({q}) t"))
            .fetch_one(pool)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        out.push((name, text.unwrap_or_default()));
    }
    out
}

/// The same jobs in a fresh database: (id, replicas) each.
async fn seeded(pool: &PgPool, cluster: &str) -> Vec<(i64, u32)> {
    let f = fixture(pool, "p").await;
    let mut jobs = Vec::new();
    for replicas in [1, 2, 1, 3, 1, 2] {
        jobs.push((dispatched_job(pool, &f, cluster, replicas, 1).await, replicas));
    }
    // One job already given up: its reports are stale.
    let given_up = dispatched_job(pool, &f, cluster, 1, 1).await;
    seed::transition(pool, given_up, JobState::Rejected, SYSTEM).await;
    jobs.push((given_up, 1));
    jobs
}

#[tokio::test]
async fn a_batch_of_events_changes_the_database_as_the_same_events_one_at_a_time() {
    for seed in [1u64, 7, 42, 1234, 99_991] {
        let one = TestDb::new().await;
        let many = TestDb::new().await;
        let c = TestCluster::new(&one.pool).await;
        seed::cluster_with_token(&many.pool, &c.id, &unique("tok")).await;
        let jobs = seeded(&one.pool, &c.id).await;
        assert_eq!(seeded(&many.pool, &c.id).await, jobs, "both databases hold the same jobs");

        let mut r = conn().await;
        for payload in stream(seed, &c.id, &jobs) {
            publish_raw(&mut r, &c.id, payload.as_bytes()).await;
        }
        let (mut alone, m1) = ingester(&one.pool, grus_api::ingest::IngestConfig { batch: 1, ..config() }).await;
        drain(&mut alone).await;
        let (mut batched, m2) = ingester(&many.pool, config()).await;
        drain(&mut batched).await;

        for ((name, a), (_, b)) in tables(&one.pool).await.into_iter().zip(tables(&many.pool).await) {
            let rows = |t: &str| t.split("}, \n {").map(str::to_owned).collect::<Vec<_>>();
            let (ra, rb) = (rows(&a), rows(&b));
            let first = ra.iter().zip(&rb).position(|(x, y)| x != y);
            assert!(
                a == b,
                "seed {seed}: table {name} differs (one at a time, then batched): {} rows vs {}; first difference at \
                 row {first:?}:\n{:?}\n{:?}",
                ra.len(),
                rb.len(),
                first.map(|i| &ra[i]),
                first.map(|i| &rb[i]),
            );
        }
        let counts =
            |m: &grus_api::ingest::IngestMetrics| [&m.applied, &m.stale, &m.ignored, &m.duplicate].map(|c| c.get());
        assert_eq!(counts(&m1), counts(&m2), "seed {seed}: outcomes differ");
        assert!(m2.batches.get() > 0, "seed {seed}: the batched ingester read batches");
        assert_eq!(m2.batch_fallbacks.get(), 0, "seed {seed}: no batch fell back");
    }
}
