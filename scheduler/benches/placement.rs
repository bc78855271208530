//! Criterion benches of the placement hot paths at 5,000 nodes x 8 GPUs: the capacity index
//! update behind every allocate/release, and one placement decision for a 1-GPU pod, a GPU
//! share, and a gang of four 8-GPU members (with and without a rack scope), with the bench's
//! `grus` policy against the typical workload of the mix.
//!
//! The cluster is the seeded synthetic fleet of `grus-schedbench`, filled to about half its
//! GPUs with the bench mix first, so the index holds partly used nodes and devices as it does
//! in steady state. Each placement bench undoes its allocation, so every iteration sees the
//! same cluster; the release is part of the measured time.
//!
//! Times are the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not wall time: on a
//! shared machine wall time mostly measures how long the thread waited for a core.

use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use grus_scheduler::cluster::{Cluster, DeviceShare, ReplicaAllocation};
use grus_scheduler::demand::Demand;
use grus_scheduler::job::TopologyScope;
use grus_scheduler::place::{Constraints, Domain, Placer};
use grus_scheduler::resources::ModelSet;
use grus_scheduler::score::TypicalDemand;
use grus_scheduler::synth::{self, ClusterShape};

const NODES: usize = 5000;

/// CPU time of the calling thread.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Criterion measurement of thread CPU time, formatted like wall time.
struct CpuTime;

impl Measurement for CpuTime {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        thread_cpu_time()
    }

    fn end(&self, start: Duration) -> Duration {
        thread_cpu_time().saturating_sub(start)
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Wall time's formatter (nanoseconds scaled to a readable unit) for CPU nanoseconds.
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, typical_value: f64, values: &mut [f64]) -> &'static str {
        WallTime.formatter().scale_values(typical_value, values)
    }

    fn scale_throughputs(&self, typical_value: f64, throughput: &Throughput, values: &mut [f64]) -> &'static str {
        WallTime.formatter().scale_throughputs(typical_value, throughput, values)
    }

    fn scale_for_machines(&self, values: &mut [f64]) -> &'static str {
        WallTime.formatter().scale_for_machines(values)
    }
}

/// The synthetic fleet, half full, and the typical workload of the mix that filled it.
fn half_full() -> (Cluster, Vec<TypicalDemand>) {
    let mut c = synth::cluster(ClusterShape { nodes: NODES, gpus_per_node: 8, seed: 1 });
    let pending = synth::pending(c.models(), 40_000, 1);
    let workload = synth::typical_workload(&pending);
    let policy = synth::bench_policy();
    let placer = Placer { policy: &policy, workload: &workload };
    let target = c.gpu_capacity_milli() / 2;
    for item in pending {
        if c.gpu_used_milli() >= target {
            break;
        }
        let _ = placer.try_place_gang(&mut c, &item.members, item.scope, &Constraints::none());
    }
    (c, workload)
}

fn demand(gpus: u32, milli: u32) -> Demand {
    Demand {
        gpus,
        milli,
        gpu_memory_mib: 0,
        models: ModelSet::ANY,
        cpu_milli: 4000,
        memory_mib: 16384,
        mig: None,
        sharing_busy_limit_pct: None,
    }
}

fn release_all(c: &mut Cluster, allocs: &[ReplicaAllocation]) {
    for a in allocs.iter().rev() {
        c.release(a).expect("releasing what the bench placed");
    }
}

fn benches(cr: &mut Criterion<CpuTime>) {
    let (mut c, workload) = half_full();
    let policy = synth::bench_policy();
    let placer = Placer { policy: &policy, workload: &workload };
    let cons = Constraints::none();

    // A device that is free and healthy: the update moves the node between index entries.
    let (node, gpu) = c
        .nodes()
        .iter()
        .find_map(|n| Some((n.id, n.gpus.iter().position(|g| g.is_whole_free())? as u8)).filter(|_| n.healthy))
        .expect("a half-full fleet has a free device");
    let alloc =
        ReplicaAllocation { node, cpu_milli: 1000, memory_mib: 1024, devices: vec![DeviceShare::plain(gpu, 500, 0)] };
    cr.bench_function("index update: allocate + release one share", |b| {
        b.iter(|| {
            c.allocate(black_box(&alloc)).expect("the device is free");
            c.release(black_box(&alloc)).expect("just allocated");
        })
    });

    // The cluster does not change between iterations, so after the first the policy's score
    // memo answers for every node: the cost of a placement whose candidates did not change.
    // The cold variant starts from an empty memo each time (a new snapshot's first pod).
    let one = demand(1, 1000);
    cr.bench_function("best_allocation: 1-GPU pod", |b| {
        b.iter(|| placer.best_allocation(&c, black_box(&one), &cons, Domain::Anywhere, &[]))
    });
    cr.bench_function("best_allocation: 1-GPU pod, cold memo", |b| {
        b.iter_batched(
            synth::bench_policy,
            |policy| {
                let placer = Placer { policy: &policy, workload: &workload };
                placer.best_allocation(&c, black_box(&one), &cons, Domain::Anywhere, &[])
            },
            BatchSize::SmallInput,
        )
    });

    let share = demand(1, 250);
    cr.bench_function("best_allocation: 250-milli share", |b| {
        b.iter(|| placer.best_allocation(&c, black_box(&share), &cons, Domain::Anywhere, &[]))
    });

    let gang = vec![demand(8, 1000); 4];
    for (name, scope) in [("any", TopologyScope::Any), ("rack", TopologyScope::Rack)] {
        cr.bench_function(&format!("place_gang: 4 x 8 GPUs, scope {name} (+ release)"), |b| {
            b.iter(|| {
                let allocs = placer.try_place_gang(&mut c, black_box(&gang), scope, &cons).expect("half full: fits");
                release_all(&mut c, &allocs);
            })
        });
    }
}

criterion_group! {
    name = placement;
    config = Criterion::default()
        .with_measurement(CpuTime)
        .sample_size(50)
        .measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(placement);
