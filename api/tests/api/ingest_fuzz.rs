//! Ingestion under fuzzing, against the real PostgreSQL and Redis: seeded random streams of
//! agent events (every kind, with ids, epochs, states, timestamps, strings and device lists
//! drawn from both plausible and hostile values, mixed with mutated and arbitrary payloads) are
//! appended to a cluster's stream and ingested. Whatever arrives, the ingester never fails a
//! step or panics, acknowledges every entry (applied, skipped or dead-lettered: none wedges the
//! stream), and the stored history keeps the invariants: every recorded job transition is one
//! the job state machine allows, no replica holds two open ledger intervals, and a job has at
//! most one live dispatch.
//!
//! `GRUS_FUZZ_CASES=N` (events per run, default 400) and `GRUS_FUZZ_SEED` replay or lengthen a
//! campaign; the seed is printed. BENCHMARKS.md ("Fuzzing") records the executions run.

use std::str::FromStr;

use grus_api::domain::JobState;
use grus_protocol::codec::{encode, Envelope};
use grus_protocol::event::Event;
use grus_protocol::keys;
use grus_protocol::wire::{
    CapacitySummary, DeviceRef, GpuInfo, GpuMetrics, JobSnapshot, ModelCapacity, NodeInfo, PoolCapacity, ReplicaExit,
    ReplicaSnapshot, ReplicaUsage, State, Termination,
};
use grus_testkit::seed::{self, dispatched_job, fixture};
use grus_testkit::TestDb;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::ingest::{config, conn, drain, ingester, now_ms, pending_count, publish_raw, TestCluster};

/// What the generator draws ids and names from: the jobs that exist, and others.
struct World {
    jobs: Vec<u64>,
    tasks: Vec<&'static str>,
}

fn pick<T: Clone>(rng: &mut StdRng, from: &[T]) -> T {
    from[rng.gen_range(0..from.len())].clone()
}

/// A string an agent might send, or one meant to break something: empty, long, NUL, unicode,
/// SQL, control characters.
fn text(rng: &mut StdRng) -> String {
    match rng.gen_range(0..9) {
        0 => String::new(),
        1 => "x".repeat(rng.gen_range(1..300_000)),
        2 => "nul\0inside".into(),
        3 => "ünïcødé ✓ 🚀".into(),
        4 => "'); DROP TABLE jobs; --".into(),
        5 => "\u{7}\u{1b}[31mred\r\n".into(),
        6 => format!("node-{}", rng.gen_range(0..4)),
        7 => "main".into(),
        _ => format!("{}", rng.gen::<u64>()),
    }
}

fn int_u64(rng: &mut StdRng) -> u64 {
    let any = u64::from(rng.gen::<u32>());
    pick(rng, &[0, 1, 2, 3, u64::MAX, i64::MAX as u64, (i64::MAX as u64) + 1, any])
}

fn timestamp(rng: &mut StdRng) -> i64 {
    let now = now_ms();
    pick(rng, &[now, now - 60_000, now + 3_600_000, 0, -1, i64::MIN, i64::MAX, 253_402_300_800_000])
}

fn devices(rng: &mut StdRng) -> Vec<DeviceRef> {
    let n = pick(rng, &[0usize, 1, 2, 8, 5_000]);
    (0..n).map(|_| DeviceRef::share(pick(rng, &[0, 1, 7, u32::MAX]), pick(rng, &[0, 500, 1000, u32::MAX]))).collect()
}

fn job_id(rng: &mut StdRng, world: &World) -> u64 {
    if rng.gen_bool(0.8) {
        pick(rng, &world.jobs)
    } else {
        int_u64(rng)
    }
}

fn task(rng: &mut StdRng, world: &World) -> String {
    if rng.gen_bool(0.8) {
        pick(rng, &world.tasks).to_owned()
    } else {
        text(rng)
    }
}

fn node(rng: &mut StdRng) -> NodeInfo {
    let gpus = (0..pick(rng, &[0u32, 1, 8, 300]))
        .map(|index| GpuInfo {
            index,
            uuid: rng.gen_bool(0.5).then(|| text(rng)),
            model: pick(rng, &["A100-80GB", "H100", ""]).to_owned(),
            memory_mib: int_u64(rng),
            numa: rng.gen(),
            nvlink_group: rng.gen(),
            healthy: rng.gen(),
            mig: false,
        })
        .collect();
    NodeInfo {
        name: text(rng),
        labels: [(text(rng), text(rng))].into_iter().collect(),
        rack: rng.gen_bool(0.3).then(|| text(rng)),
        pool: None,
        cpu_milli: int_u64(rng),
        memory_mib: int_u64(rng),
        healthy: rng.gen(),
        gpus,
    }
}

fn event(rng: &mut StdRng, world: &World) -> Event {
    match rng.gen_range(0..10) {
        0 => Event::Hello { version: text(rng), capabilities: (0..rng.gen_range(0..4)).map(|_| text(rng)).collect() },
        1 => Event::Inventory { nodes: (0..rng.gen_range(0..4)).map(|_| node(rng)).collect() },
        2 => Event::Capacity {
            summary: CapacitySummary {
                models: vec![ModelCapacity {
                    model: text(rng),
                    total_gpus: rng.gen(),
                    free_whole_per_node: vec![rng.gen(); rng.gen_range(0..5)],
                    free_milli_per_device: vec![rng.gen(); rng.gen_range(0..5)],
                    movable_per_node: vec![],
                    mig_free: Default::default(),
                    largest_gang_gpus: [(text(rng), rng.gen())].into_iter().collect(),
                }],
                cpu_free_milli: int_u64(rng),
                memory_free_mib: int_u64(rng),
                pending_jobs: rng.gen(),
                pools: (0..rng.gen_range(0..3))
                    .map(|_| PoolCapacity { name: text(rng), nodes: rng.gen(), models: vec![] })
                    .collect(),
            },
        },
        3 => Event::Metrics {
            gpus: (0..rng.gen_range(0..4))
                .map(|_| GpuMetrics {
                    node: text(rng),
                    index: rng.gen(),
                    busy_pct: pick(rng, &[0.0, 55.5, 100.0, -1.0, f32::MAX, 1e30]),
                    memory_used_mib: int_u64(rng),
                    power_w: rng.gen_bool(0.5).then(|| rng.gen()),
                    temperature_c: None,
                })
                .collect(),
            replicas: (0..rng.gen_range(0..3))
                .map(|_| ReplicaUsage {
                    job: job_id(rng, world),
                    task: text(rng),
                    replica: rng.gen(),
                    cpu_milli: int_u64(rng),
                    memory_mib: int_u64(rng),
                    disk_read_bps: int_u64(rng),
                    disk_write_bps: rng.gen(),
                    net_rx_bps: int_u64(rng),
                    net_tx_bps: rng.gen(),
                })
                .collect(),
        },
        4 => Event::Snapshot {
            jobs: (0..rng.gen_range(0..4))
                .map(|_| JobSnapshot {
                    job: job_id(rng, world),
                    epoch: pick(rng, &[1, 1, 2, 0, u64::MAX]),
                    state: pick(rng, &State::ALL),
                    replicas: (0..rng.gen_range(0..3))
                        .map(|_| ReplicaSnapshot {
                            task: task(rng, world),
                            replica: pick(rng, &[0, 1, u32::MAX]),
                            state: pick(rng, &State::ALL),
                            node: rng.gen_bool(0.7).then(|| text(rng)),
                            devices: devices(rng),
                        })
                        .collect(),
                })
                .collect(),
            inventory: if rng.gen_bool(0.2) { vec![node(rng)] } else { Vec::new() },
        },
        // Job state reports are most of a real stream.
        _ => {
            // Job, task, replica, or a replica without its task (which names nothing).
            let level = rng.gen_range(0..4);
            Event::JobState {
                job: job_id(rng, world),
                task: (level == 1 || level == 2).then(|| task(rng, world)),
                replica: (level >= 2).then(|| pick(rng, &[0, 1, u32::MAX])),
                state: pick(rng, &State::ALL),
                node: rng.gen_bool(0.7).then(|| text(rng)),
                devices: devices(rng),
                at: timestamp(rng),
                epoch: pick(rng, &[1, 1, 1, 2, 0, u64::MAX, i64::MAX as u64 + 1]),
                reason: rng.gen_bool(0.3).then(|| text(rng)),
                checkpoint: None,
                endpoint: None,
                exit: rng
                    .gen_bool(0.2)
                    .then(|| ReplicaExit::new(rng.gen_bool(0.5).then(|| rng.gen()), pick(rng, &Termination::ALL))),
            }
        }
    }
}

/// One stream entry: mostly encoded events, some mutated or arbitrary payloads, and envelopes
/// naming another cluster or another control plane.
fn payload(rng: &mut StdRng, world: &World, cluster: &str, n: usize) -> Vec<u8> {
    let id = format!("fuzz-{n}");
    let ev = event(rng, world);
    match rng.gen_range(0..20) {
        0 => (0..rng.gen_range(0..200)).map(|_| rng.gen::<u8>()).collect(),
        1 => {
            let mut bytes = encode(&Envelope::new(&id, cluster, now_ms(), ev)).into_bytes();
            let at = rng.gen_range(0..bytes.len());
            bytes[at] = rng.gen();
            bytes
        }
        2 => encode(&Envelope::new(&id, "some-other-cluster", now_ms(), ev)).into_bytes(),
        3 => encode(&Envelope::new(&id, cluster, now_ms(), ev).with_control_plane(Some("another-incarnation")))
            .into_bytes(),
        // A redelivery of an earlier message id: applied once at most.
        4 if n > 0 => {
            encode(&Envelope::new(format!("fuzz-{}", rng.gen_range(0..n)), cluster, now_ms(), ev)).into_bytes()
        }
        _ => encode(&Envelope::new(&id, cluster, timestamp(rng), ev)).into_bytes(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzzed_event_streams_never_wedge_ingestion_or_break_stored_invariants() {
    let cases: usize = std::env::var("GRUS_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400);
    let seed: u64 =
        std::env::var("GRUS_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| rand::thread_rng().gen());
    println!("ingest fuzz: {cases} events, seed {seed} (GRUS_FUZZ_SEED={seed} replays it)");
    let db = TestDb::new().await;
    let pool = &db.pool;
    let cluster = TestCluster::new(pool).await;
    let f = fixture(pool, "fuzz").await;
    let mut jobs = Vec::new();
    for (replicas, gpus) in [(1, 1), (2, 4), (1, 8), (3, 1)] {
        jobs.push(dispatched_job(pool, &f, &cluster.id, replicas, gpus).await as u64);
    }
    seed::cluster_with_token(pool, "fuzz-elsewhere", &grus_testkit::env::unique("tok")).await;
    jobs.push(dispatched_job(pool, &f, "fuzz-elsewhere", 1, 1).await as u64);
    let world = World { jobs, tasks: vec!["train"] };

    let (mut ing, metrics) = ingester(pool, config()).await;
    let mut c = conn().await;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut published = 0;
    while published < cases {
        // Batches, so that a step reads several entries and a bad one sits among good ones.
        for _ in 0..rng.gen_range(1..40).min(cases - published) {
            let bytes = payload(&mut rng, &world, &cluster.id, published);
            publish_raw(&mut c, &cluster.id, &bytes).await;
            published += 1;
        }
        drain(&mut ing).await;
        assert_eq!(pending_count(&mut c, &cluster.id).await, 0, "seed {seed}: an entry was left unacknowledged");
    }
    let dead: usize =
        redis::cmd("XLEN").arg(keys::dead_letter_stream(&cluster.id)).query_async(&mut c).await.expect("dead letters");
    println!("ingest fuzz: {published} entries ingested, {dead} dead-lettered, metrics {metrics:?}");
    // Regression: a hostile send time (i64::MIN) made the lag gauge read 292 million years.
    let lag = metrics.lag_seconds.get();
    assert!((0.0..=86_400.0).contains(&lag), "seed {seed}: ingestion lag gauge {lag} s");

    let transitions: Vec<(i64, Option<String>, String)> =
        sqlx::query_as("SELECT job_id, from_state, to_state FROM job_events WHERE task_id IS NULL ORDER BY id")
            .fetch_all(pool)
            .await
            .expect("job events");
    for (job, from, to) in transitions {
        let to = JobState::from_str(&to).unwrap_or_else(|_| panic!("seed {seed}: job {job} stored state {to:?}"));
        if let Some(from) = from {
            let from = JobState::from_str(&from).unwrap_or_else(|_| panic!("seed {seed}: job {job}: {from:?}"));
            assert!(from.can_become(to), "seed {seed}: job {job} went {from:?} -> {to:?}, which the machine forbids");
        }
    }
    let open_twice: Vec<(i64,)> = sqlx::query_as(
        "SELECT replica_id FROM usage_ledger WHERE ended_at IS NULL GROUP BY replica_id HAVING count(*) > 1",
    )
    .fetch_all(pool)
    .await
    .expect("ledger");
    assert!(open_twice.is_empty(), "seed {seed}: replicas with two open ledger intervals: {open_twice:?}");
    let live_twice: Vec<(i64,)> = sqlx::query_as(
        "SELECT job_id FROM dispatches WHERE outcome IN ('pending', 'acknowledged') GROUP BY job_id HAVING count(*) > 1",
    )
    .fetch_all(pool)
    .await
    .expect("dispatches");
    assert!(live_twice.is_empty(), "seed {seed}: jobs with two live dispatches: {live_twice:?}");
    let stored: (i64,) = sqlx::query_as("SELECT count(*) FROM jobs").fetch_one(pool).await.expect("jobs");
    assert_eq!(stored.0, 5, "seed {seed}: ingestion created or removed jobs");
}
