//! grus-schedbench: placement throughput of the local scheduler on a synthetic fleet.
//!
//! Builds a seeded cluster and pending mix (see `grus_scheduler::synth`), runs one full pass
//! over every pending item with the `grus` policy (bounded as online, against the typical
//! workload of the pending mix), and reports placements per
//! second, the p99 latency of one placement decision, the pass's wall time and peak memory.
//! For scale it runs a naive first-fit that scans every node on a fresh copy of the same
//! cluster, in the same process. With `--preemption-gangs N` it measures instead a whole
//! scheduling cycle in which `N` high-priority gangs plan preemptions on a full fleet
//! (`schedbench/preemption.rs`).

#[path = "schedbench/fair_share.rs"]
mod fair_share;
#[path = "schedbench/fill.rs"]
mod fill;
#[path = "schedbench/preemption.rs"]
mod preemption;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use grus_scheduler::cluster::{Cluster, ReplicaAllocation};
use grus_scheduler::demand::Demand;
use grus_scheduler::job::TopologyScope;
use grus_scheduler::place::{device_options, explain, filter_node, Constraints, Domain, Placer};
use grus_scheduler::synth::{self, ClusterShape, PendingItem};

/// Measures placement throughput on a synthetic cluster.
#[derive(Parser, Debug)]
#[command(name = "grus-schedbench", version)]
struct Args {
    /// Nodes in the synthetic cluster.
    #[arg(long, default_value_t = 5000)]
    nodes: usize,
    /// GPUs on each node (NVLink islands of 4).
    #[arg(long, default_value_t = 8)]
    gpus_per_node: usize,
    /// Pending pods to place (gang members count one each).
    #[arg(long, default_value_t = 50_000)]
    pods: usize,
    /// Seed of the cluster and of the pending mix.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Feasible nodes scored per replica (default: the bench policy's own bound).
    #[arg(long)]
    max_feasible_nodes: Option<usize>,
    /// Passes per engine, each on a fresh copy of the cluster. Latencies are each item's
    /// fastest over the passes, the cycle time (wall and CPU) the median pass.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: u32,
    /// Score every option afresh, without the policy's per-node score memo (same decisions).
    #[arg(long)]
    no_memo: bool,
    /// Skip the naive first-fit baseline (it scans every node for every pod).
    #[arg(long)]
    no_baseline: bool,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    json: bool,
    /// Measure a scheduling cycle in which this many high-priority gangs (2 x 8 GPUs) plan
    /// preemptions on a fleet filled with lower-priority work, instead of the placement pass.
    #[arg(long)]
    preemption_gangs: Option<usize>,
    /// Measure a scheduling cycle in which this many queues compete for half the fleet (fair
    /// share decides the order), instead of the placement pass.
    #[arg(long)]
    fair_share_queues: Option<u32>,
    /// With --fair-share-queues: spread the queues over this many tenants of 4 projects each.
    #[arg(long, default_value_t = 1)]
    tenants: u32,
}

/// How one pending item went in a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Not tried: a shape refused earlier in the pass.
    Skipped,
    Placed {
        ns: u64,
    },
    /// Tried, did not fit, and was explained (the time includes the explanation).
    Refused {
        ns: u64,
    },
}

/// One pass over the pending items: what happened to each, and how long the whole took.
struct Trace {
    outcomes: Vec<Outcome>,
    elapsed: Duration,
    /// CPU time the pass ran for, when the kernel says (`/proc/self/schedstat`).
    cpu: Option<Duration>,
}

/// The passes of one engine summed up: each item's latency is its fastest over the passes
/// (the passes decide identically, so this drops what the machine's other load added to a
/// single run), the cycle time is the median pass.
struct Pass {
    placed_pods: usize,
    unplaced_pods: usize,
    /// Shapes refused and explained (later items of the same shape are skipped).
    refused_shapes: usize,
    cycle: Duration,
    cycle_best: Duration,
    /// Median CPU time of a pass, if known.
    cycle_cpu: Option<Duration>,
    /// Latency of each successful placement (a gang is one), sorted.
    placed_ns: Vec<u64>,
    /// Latency of each successful placement per kind (see [`kind`]), sorted.
    placed_ns_by_kind: [Vec<u64>; 4],
    /// Latency of each attempt, placed or refused (a refusal includes its explanation), sorted.
    attempts_ns: Vec<u64>,
}

impl Pass {
    fn from_traces(pending: &[PendingItem], traces: &[Trace]) -> Pass {
        let mut elapsed: Vec<Duration> = traces.iter().map(|t| t.elapsed).collect();
        elapsed.sort_unstable();
        let mut cpu: Vec<Duration> = traces.iter().filter_map(|t| t.cpu).collect();
        cpu.sort_unstable();
        let first = &traces[0];
        assert!(
            traces.iter().all(|t| {
                t.outcomes
                    .iter()
                    .zip(&first.outcomes)
                    .all(|(a, b)| std::mem::discriminant(a) == std::mem::discriminant(b))
            }),
            "passes over the same problem decided differently"
        );
        let mut pass = Pass {
            placed_pods: 0,
            unplaced_pods: 0,
            refused_shapes: 0,
            cycle: elapsed[elapsed.len() / 2],
            cycle_best: elapsed[0],
            cycle_cpu: (cpu.len() == traces.len()).then(|| cpu[cpu.len() / 2]),
            placed_ns: Vec::new(),
            placed_ns_by_kind: Default::default(),
            attempts_ns: Vec::new(),
        };
        for (i, item) in pending.iter().enumerate() {
            let fastest = |f: fn(&Outcome) -> Option<u64>| traces.iter().filter_map(|t| f(&t.outcomes[i])).min();
            match first.outcomes[i] {
                Outcome::Skipped => pass.unplaced_pods += item.pods(),
                Outcome::Placed { .. } => {
                    let ns = fastest(|o| if let Outcome::Placed { ns } = o { Some(*ns) } else { None }).unwrap_or(0);
                    pass.placed_pods += item.pods();
                    pass.placed_ns.push(ns);
                    pass.placed_ns_by_kind[kind(item)].push(ns);
                    pass.attempts_ns.push(ns);
                }
                Outcome::Refused { .. } => {
                    let ns = fastest(|o| if let Outcome::Refused { ns } = o { Some(*ns) } else { None }).unwrap_or(0);
                    pass.unplaced_pods += item.pods();
                    pass.refused_shapes += 1;
                    pass.attempts_ns.push(ns);
                }
            }
        }
        pass.placed_ns.sort_unstable();
        pass.attempts_ns.sort_unstable();
        pass.placed_ns_by_kind.iter_mut().for_each(|v| v.sort_unstable());
        pass
    }

    fn placements_per_sec(&self) -> f64 {
        self.placed_pods as f64 / self.cycle.as_secs_f64().max(1e-9)
    }

    fn placements_per_cpu_sec(&self) -> Option<f64> {
        self.cycle_cpu.map(|c| self.placed_pods as f64 / c.as_secs_f64().max(1e-9))
    }

    fn percentile_us(sorted: &[u64], p: f64) -> f64 {
        if sorted.is_empty() {
            return 0.0;
        }
        let i = ((sorted.len() - 1) as f64 * p).round() as usize;
        sorted[i] as f64 / 1000.0
    }

    fn p99_placement_us(&self) -> f64 {
        Pass::percentile_us(&self.placed_ns, 0.99)
    }
}

/// Names of the item kinds, indexed by [`kind`].
const KINDS: [&str; 4] = ["1-GPU", "share", "2-4 GPUs", "gang"];

fn kind(item: &PendingItem) -> usize {
    match item.members.as_slice() {
        [d] if d.is_fractional() => 1,
        [d] if d.gpus <= 1 => 0,
        [_] => 2,
        _ => 3,
    }
}

/// One pass over the pending items in order, as a scheduling cycle runs it over a backlog
/// larger than the cluster: a shape (members and scope) that did not fit is explained once and
/// not tried again in this pass, because the pass only adds allocations and a fuller cluster
/// refuses what an emptier one did. `place` applies the item or leaves the cluster unchanged.
fn run_pass(
    cluster: &mut Cluster,
    pending: &[PendingItem],
    mut place: impl FnMut(&mut Cluster, &PendingItem) -> bool,
) -> Trace {
    let cons = Constraints::none();
    let mut refused: HashSet<(&[Demand], TopologyScope)> = HashSet::new();
    let mut outcomes = Vec::with_capacity(pending.len());
    let cpu_start = cpu_time();
    let start = Instant::now();
    for item in pending {
        let shape = (item.members.as_slice(), item.scope);
        if refused.contains(&shape) {
            outcomes.push(Outcome::Skipped);
            continue;
        }
        let t = Instant::now();
        if place(cluster, item) {
            outcomes.push(Outcome::Placed { ns: t.elapsed().as_nanos() as u64 });
        } else {
            std::hint::black_box(explain(cluster, &item.members[0], &cons));
            outcomes.push(Outcome::Refused { ns: t.elapsed().as_nanos() as u64 });
            refused.insert(shape);
        }
    }
    let elapsed = start.elapsed();
    let cpu = cpu_time().zip(cpu_start).map(|(end, start)| end.saturating_sub(start));
    Trace { outcomes, elapsed, cpu }
}

/// First fit over every node in id order, no scoring: what a scheduler without an index does.
fn first_fit(cluster: &mut Cluster, item: &PendingItem) -> bool {
    let cons = Constraints::none();
    let mut placed: Vec<ReplicaAllocation> = Vec::with_capacity(item.members.len());
    for demand in &item.members {
        match first_fit_one(cluster, demand, &cons) {
            Some(a) => {
                cluster.allocate(&a).expect("the filter admitted this allocation");
                placed.push(a);
            }
            None => {
                for a in placed.iter().rev() {
                    cluster.release(a).expect("releasing what this attempt allocated");
                }
                return false;
            }
        }
    }
    true
}

fn first_fit_one(cluster: &Cluster, demand: &Demand, cons: &Constraints<'_>) -> Option<ReplicaAllocation> {
    cluster.nodes().iter().find_map(|node| {
        filter_node(node, demand, cons, Domain::Anywhere).ok()?;
        let devices = device_options(node, demand, Domain::Anywhere).into_iter().next()?;
        Some(ReplicaAllocation { node: node.id, cpu_milli: demand.cpu_milli, memory_mib: demand.memory_mib, devices })
    })
}

/// CPU time this (single-threaded) process has run, from the first field of
/// `/proc/self/schedstat` (nanoseconds on the CPU, as of the last scheduler tick, so to
/// within a few milliseconds). On a shared machine the wall time of a pass includes waiting
/// for a core; this does not. `None` where the kernel does not say.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    Some(Duration::from_nanos(stat.split_whitespace().next()?.parse().ok()?))
}

/// Peak resident set of this process (VmHWM), in MiB.
fn peak_rss_mb() -> anyhow::Result<f64> {
    let status = std::fs::read_to_string("/proc/self/status").context("read /proc/self/status")?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .context("no VmHWM line in /proc/self/status")?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .context("parse VmHWM")?;
    Ok(kb / 1024.0)
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    anyhow::ensure!(
        args.nodes > 0 && args.gpus_per_node > 0 && args.gpus_per_node <= 255,
        "empty or oversized cluster"
    );
    let shape = ClusterShape { nodes: args.nodes, gpus_per_node: args.gpus_per_node, seed: args.seed };
    let build = Instant::now();
    let cluster = synth::cluster(shape);
    let build_ms = build.elapsed().as_secs_f64() * 1000.0;
    if let Some(queues) = args.fair_share_queues {
        anyhow::ensure!(queues > 0, "--fair-share-queues needs at least one queue");
        let m = fair_share::measure(&cluster, queues, args.tenants, args.repeat);
        let median = m.cycle_ms[m.cycle_ms.len() / 2];
        let out = serde_json::json!({
            "nodes": args.nodes,
            "gpus_per_node": args.gpus_per_node,
            "seed": args.seed,
            "queues": queues,
            "tenants": args.tenants,
            "running_jobs": m.running_jobs,
            "pending_jobs": m.pending_jobs,
            "started": m.started,
            "cycle_ms": median,
            "cycle_ms_all": m.cycle_ms,
            "peak_rss_mb": peak_rss_mb()?,
        });
        println!("{}", if args.json { serde_json::to_string(&out)? } else { serde_json::to_string_pretty(&out)? });
        return Ok(());
    }
    if let Some(gangs) = args.preemption_gangs {
        let m = preemption::measure(&cluster, gangs, args.repeat);
        let median = m.cycle_ms[m.cycle_ms.len() / 2];
        let out = serde_json::json!({
            "nodes": args.nodes,
            "gpus_per_node": args.gpus_per_node,
            "seed": args.seed,
            "gangs": gangs,
            "running_jobs": m.running_jobs,
            "running_gpus": m.running_gpus,
            "fill_ms": m.fill_ms,
            "cycle_ms": median,
            "cycle_ms_all": m.cycle_ms,
            "evictions": m.evictions,
            "shrinks": m.shrinks,
            "awaiting_eviction": m.awaiting,
            "peak_rss_mb": peak_rss_mb()?,
        });
        println!("{}", if args.json { serde_json::to_string(&out)? } else { serde_json::to_string_pretty(&out)? });
        return Ok(());
    }
    let pending = synth::pending(cluster.models(), args.pods, args.seed);
    let pods: usize = pending.iter().map(PendingItem::pods).sum();
    let gpus_requested: f64 = pending.iter().flat_map(|i| &i.members).map(|d| d.total_milli() as f64 / 1000.0).sum();

    // A fresh policy per pass: its score memo starts cold, as in a cycle over a new snapshot.
    let new_policy = || {
        let policy = if args.no_memo { synth::bench_policy().without_memo() } else { synth::bench_policy() };
        match args.max_feasible_nodes {
            Some(n) => policy.with_max_feasible_nodes(n),
            None => policy,
        }
    };
    let policy = new_policy();
    // The typical workload of the pending mix, as the cycle derives it from its jobs.
    let workload_start = Instant::now();
    let workload = synth::typical_workload(&pending);
    let workload_ms = workload_start.elapsed().as_secs_f64() * 1000.0;
    // What a cycle's snapshot costs here: a copy of the cluster with its index.
    let snapshot = Instant::now();
    let copy = std::hint::black_box(cluster.clone());
    let snapshot_ms = snapshot.elapsed().as_secs_f64() * 1000.0;
    drop(copy);

    let cons = Constraints::none();
    let mut used_gpus = 0.0;
    let traces: Vec<Trace> = (0..args.repeat)
        .map(|_| {
            let policy = new_policy();
            let placer = Placer { policy: &policy, workload: &workload };
            let mut c = cluster.clone();
            let t = run_pass(&mut c, &pending, |c, item| {
                placer.try_place_gang(c, &item.members, item.scope, &cons).is_some()
            });
            used_gpus = c.gpu_used_milli() as f64 / 1000.0;
            t
        })
        .collect();
    let pass = Pass::from_traces(&pending, &traces);
    drop(traces);

    let baseline = (!args.no_baseline).then(|| {
        let traces: Vec<Trace> =
            (0..args.repeat).map(|_| run_pass(&mut cluster.clone(), &pending, first_fit)).collect();
        Pass::from_traces(&pending, &traces)
    });
    let peak = peak_rss_mb()?;
    let gangs = pending.iter().filter(|i| i.pods() > 1 || i.scope != TopologyScope::Any).count();

    if args.json {
        let out = serde_json::json!({
            "nodes": args.nodes,
            "gpus_per_node": args.gpus_per_node,
            "gpus": args.nodes * args.gpus_per_node,
            "pods": pods,
            "pending_items": pending.len(),
            "gpus_requested": gpus_requested,
            "gangs": gangs,
            "seed": args.seed,
            "policy": policy.name,
            "typical_shapes": workload.len(),
            "score_memo": !args.no_memo,
            "typical_workload_ms": workload_ms,
            "max_feasible_nodes": policy.max_feasible_nodes,
            "placed_pods": pass.placed_pods,
            "unplaced_pods": pass.unplaced_pods,
            "refused_shapes_explained": pass.refused_shapes,
            "gpus_used": used_gpus,
            "placements_per_sec": pass.placements_per_sec().round(),
            "p50_placement_us": Pass::percentile_us(&pass.placed_ns, 0.50),
            "p99_placement_us": pass.p99_placement_us(),
            "max_placement_us": Pass::percentile_us(&pass.placed_ns, 1.0),
            "p99_attempt_us": Pass::percentile_us(&pass.attempts_ns, 0.99),
            "p99_placement_us_by_kind": KINDS
                .iter()
                .zip(&pass.placed_ns_by_kind)
                .map(|(k, ns)| (k.to_string(), serde_json::json!(Pass::percentile_us(ns, 0.99))))
                .collect::<serde_json::Map<_, _>>(),
            "cycle_ms": pass.cycle.as_secs_f64() * 1000.0,
            "cycle_ms_best": pass.cycle_best.as_secs_f64() * 1000.0,
            "cycle_cpu_ms": pass.cycle_cpu.map(|c| c.as_secs_f64() * 1000.0),
            "placements_per_cpu_sec": pass.placements_per_cpu_sec().map(f64::round),
            "repeat": args.repeat,
            "cluster_build_ms": build_ms,
            "snapshot_ms": snapshot_ms,
            "peak_rss_mb": peak,
            "baseline_placements_per_sec": baseline.as_ref().map(|b| b.placements_per_sec().round()),
            "baseline_placed_pods": baseline.as_ref().map(|b| b.placed_pods),
            "baseline_cycle_ms": baseline.as_ref().map(|b| b.cycle.as_secs_f64() * 1000.0),
            "baseline_placements_per_cpu_sec": baseline.as_ref().and_then(Pass::placements_per_cpu_sec).map(f64::round),
            "baseline_p99_placement_us": baseline.as_ref().map(Pass::p99_placement_us),
        });
        println!("{out}");
    } else {
        println!(
            "cluster: {} nodes x {} GPUs ({} GPUs), built in {build_ms:.0} ms, copied in {snapshot_ms:.1} ms; seed {}",
            args.nodes,
            args.gpus_per_node,
            args.nodes * args.gpus_per_node,
            args.seed
        );
        println!(
            "pending: {pods} pods in {} items ({gangs} gangs), asking for {gpus_requested:.0} GPUs",
            pending.len()
        );
        println!(
            "policy:  {} (scores at most {} feasible nodes per replica), typical workload of {} shapes ({workload_ms:.1} ms)",
            policy.name,
            policy.max_feasible_nodes,
            workload.len()
        );
        println!("placed:  {} pods ({} unplaced), {used_gpus:.1} GPUs in use", pass.placed_pods, pass.unplaced_pods);
        println!(
            "grus:    {:.0} placements/s, placement p50 {:.1} us, p99 {:.1} us (attempts p99 {:.1} us), cycle {:.1} ms",
            pass.placements_per_sec(),
            Pass::percentile_us(&pass.placed_ns, 0.5),
            pass.p99_placement_us(),
            Pass::percentile_us(&pass.attempts_ns, 0.99),
            pass.cycle.as_secs_f64() * 1000.0
        );
        if let (Some(cpu), Some(rate)) = (pass.cycle_cpu, pass.placements_per_cpu_sec()) {
            println!(
                "         on the CPU: cycle {:.1} ms, {rate:.0} placements per CPU-second (best wall cycle {:.1} ms)",
                cpu.as_secs_f64() * 1000.0,
                pass.cycle_best.as_secs_f64() * 1000.0
            );
        }
        for (name, ns) in KINDS.iter().zip(&pass.placed_ns_by_kind) {
            println!(
                "  {name:>8}: {:>6} placed, p50 {:.1} us, p99 {:.1} us",
                ns.len(),
                Pass::percentile_us(ns, 0.5),
                Pass::percentile_us(ns, 0.99)
            );
        }
        if let Some(b) = &baseline {
            println!(
                "naive first-fit: {:.0} placements/s, {} pods placed, p99 {:.1} us, cycle {:.1} ms",
                b.placements_per_sec(),
                b.placed_pods,
                b.p99_placement_us(),
                b.cycle.as_secs_f64() * 1000.0
            );
        }
        println!("peak RSS: {peak:.1} MiB");
    }
    Ok(())
}
