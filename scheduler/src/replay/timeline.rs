//! Trace replay in time: pods arrive at their creation time, leave at their deletion time,
//! and wait in the real scheduling cycle's queue ([`crate::cycle::schedule`]: its ordering,
//! backfill and, if asked, preemption) while they do not fit, instead of being dropped as
//! in the published protocol ([`super::run`]).
//!
//! The protocol (also in BENCHMARKS.md, "Replay with departures and queues"):
//! 1. The replay starts at the creation time `t0` of the pod at the [`WARM_START_PCT`]
//!    quantile (the trace's first pods are months ahead of the rest); pods created before it
//!    and alive at `t0` arrive with the others at offset 0 for what remains of their run,
//!    pods gone by `t0` are left out. A pod's offset is `creation_time − t0`; it runs for
//!    `deletion_time − max(creation_time, t0)` seconds once started, however late.
//! 2. The trace's own times carry a tiny load (0.2 % of the GPUs on average for `default`),
//!    so arrivals are compressed by a factor `k`: a pod arrives at `offset / k`, and the
//!    trace's arrivals repeat back to back (pass `j` shifted by `j · span / k`) until the
//!    horizon `H`. Durations are not compressed. `k` gives the asked *offered load*
//!    `ρ = (k / span) · Σ g · min(d, H) / capacity`: the GPU time the arrivals ask per
//!    second of replay, each run counted up to the horizon, over the GPUs.
//! 3. One cycle every `cycle_s` seconds of replay time, from 0 to `H`: departures due by then
//!    release their capacity, arrivals due join the queue (one queue, every pod a job of one
//!    replica, submitted at its arrival, the queue guaranteed the whole cluster so that nothing
//!    borrows), and `cycle::schedule` runs with the policy under
//!    test, the trace's typical workload, backfill (one reservation) and consolidation (at
//!    most 2 moves at once, 12 an hour) as the cycle's defaults have them, and preemption off
//!    (or on: `qos` gives the priority, LS and Guaranteed 2 > Burstable 1 > BE 0, and only BE
//!    pods may be evicted). Starts take effect at once. An evicted or moved pod keeps running through its
//!    grace period (30 s; the eviction stays in flight, as the cluster agent keeps it) and then
//!    goes back to the queue with its first arrival time; it runs its whole duration when it
//!    starts again.
//! 4. Nothing is measured during the warm-up (the cluster starts empty). After it, each cycle
//!    samples the GPU allocation and the fragmentation `Σ_n F(n)` (against the typical
//!    workload, as in [`super::metrics`]); the figures are their means (time averages, % of
//!    GPU capacity). Queueing delay is start − arrival (up to a cycle of it is the cycle's
//!    own period) over the pods that arrived after the warm-up; a pod still waiting at `H`
//!    counts with `H − arrival` (censored: a p99 is then a lower bound).
//! 5. With synthetic load ([`TimelineConfig::synthetic`]) every device is measured: idle at
//!    the start, and while pods run each drives its devices at a fraction of its booking
//!    drawn uniformly from 20–100 % per pod ([`sharing::pod_fraction`], the same under every
//!    policy), summed per device. The utilization term then sees real differences, the
//!    sharing limit (if set) keeps shares off devices it would push over, and each cycle also
//!    samples how many GPUs hold two pods or more and what share of those run above 70 % busy
//!    (where co-located work slows each other down).
//!
//! Deterministic: a run is a pure function of the trace, the policy, the seed (only the
//! Random policy draws) and the configuration.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use crate::cluster::{Cluster, DeviceShare, Node};
use crate::cycle::{self, Decision, InFlightEviction, RunningJob, SchedulerConfig, SchedulerInput};
use crate::demand::Demand;
use crate::job::{Job, JobId, Resources};
use crate::queue::{Queue, Queues, ResourceVector};
use crate::score::fgd::node_fragmentation;
use crate::score::{Policy, ScoreContext, ScorePlugin};
use crate::trace::PodRow;

use super::sharing::{self, DeviceLoad, SyntheticLoad};
use super::{typical_demands, ReplayError, Trace};

/// The policies compared in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelinePolicy {
    /// A seeded random score per node state.
    Random,
    /// The fullest node that fits ([`crate::score::Binpack`]).
    BestFit,
    /// Published FGD ([`Policy::fgd`]).
    Fgd,
    /// The cycle's default ([`Policy::grus_bounded`]).
    Grus,
    /// The same without its utilization term ([`Policy::grus_blind`]): what measuring the
    /// devices' load changes (only with synthetic load; without it the term is a constant).
    GrusBlind,
}

impl TimelinePolicy {
    pub const ALL: [TimelinePolicy; 4] =
        [TimelinePolicy::Random, TimelinePolicy::BestFit, TimelinePolicy::Fgd, TimelinePolicy::Grus];

    pub fn name(self) -> &'static str {
        match self {
            TimelinePolicy::Random => "random",
            TimelinePolicy::BestFit => "bestfit",
            TimelinePolicy::Fgd => "fgd",
            TimelinePolicy::Grus => "grus",
            TimelinePolicy::GrusBlind => "grus-blind",
        }
    }

    fn policy(self, seed: u64) -> Policy {
        match self {
            TimelinePolicy::Random => Policy::new("random").with(1.0, RandomScore { seed }),
            TimelinePolicy::BestFit => Policy::binpack(),
            TimelinePolicy::Fgd => Policy::fgd(),
            TimelinePolicy::Grus => Policy::grus_bounded(),
            TimelinePolicy::GrusBlind => Policy::grus_blind(),
        }
    }
}

impl std::str::FromStr for TimelinePolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<TimelinePolicy, String> {
        [TimelinePolicy::GrusBlind]
            .into_iter()
            .chain(TimelinePolicy::ALL)
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown policy `{s}` (expected one of random, bestfit, fgd, grus, grus-blind)"))
    }
}

/// A pseudo-random score per node state and seed: SplitMix64 over the node's id, its usage
/// and the device, so that it runs through the same cycle as the other policies. Not over the
/// node's stamp, which is unique per process: a run would then depend on what ran before it.
struct RandomScore {
    seed: u64,
}

impl ScorePlugin for RandomScore {
    fn name(&self) -> &'static str {
        "random"
    }

    fn node_local(&self) -> bool {
        true
    }

    fn score(&self, _: &ScoreContext<'_>, node: &Node, _: &Demand, devices: &[DeviceShare]) -> f64 {
        let device = devices.first().map_or(0, |d| d.gpu as u64 + 1);
        let state =
            [node.id.index() as u64, node.cpu_used, node.memory_used, u64::from(node.pods), node.gpu_free_milli()];
        let z = state
            .into_iter()
            .chain([device])
            .fold(self.seed, |z, v| crate::rng::splitmix64_mix(z ^ v.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        z as f64 / u64::MAX as f64 * 100.0
    }
}

/// How a time replay runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelineConfig {
    /// Offered GPU load, as a fraction of capacity (step 2).
    pub load: f64,
    /// Seconds of replay time between cycles.
    pub cycle_s: u64,
    /// Length of the replay, and the part of it before anything is measured (the cluster
    /// starts empty), in seconds of replay time.
    pub horizon_s: u64,
    pub warmup_s: u64,
    pub preemption: bool,
    /// Synthetic GPU load (step 5), and the sharing limit placement works under; `None`: no
    /// device is measured.
    pub synthetic: Option<SyntheticLoad>,
}

/// What one time replay measured.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineResult {
    pub policy: &'static str,
    pub seed: u64,
    /// The compression factor `k`, and how many times the trace's arrivals repeat to fill
    /// the horizon.
    pub compression: f64,
    pub passes: usize,
    /// Cycles measured, and pods arrived after the warm-up (the rest of the figures count
    /// these).
    pub cycles: usize,
    pub pods_arrived: usize,
    pub pods_started: usize,
    pub pods_waiting_at_end: usize,
    pub evictions: usize,
    /// Running pods moved to make room for a multi-GPU pod (consolidation).
    pub moves: usize,
    /// Time-averaged GPU allocation and fragmentation, % of capacity.
    pub gpu_alloc_pct: f64,
    pub gpu_frag_pct: f64,
    /// Queueing delay over all arrived pods (censored at `W`), seconds.
    pub wait_p50_s: u64,
    pub wait_p99_s: u64,
    /// The same over the multi-GPU pods only.
    pub multi_gpu_pods: usize,
    pub multi_wait_p50_s: u64,
    pub multi_wait_p99_s: u64,
    /// Multi-GPU pods still waiting at `W`.
    pub multi_waiting_at_end: usize,
    /// The same as the multi-GPU figures over the pods that share a GPU.
    pub share_pods: usize,
    pub share_wait_p50_s: u64,
    pub share_wait_p99_s: u64,
    /// With synthetic load: GPUs held by two pods or more, and the share of them measured
    /// above 70 % busy (the default sharing limit), time averages.
    pub shared_gpus: f64,
    pub shared_hot_pct: f64,
    /// Queueing delay p99 per priority class of the pods' `qos` (BE and unknown, Burstable,
    /// LS and Guaranteed), whether or not preemption uses them.
    pub wait_p99_by_priority_s: [u64; 3],
}

/// Share of the pods (by creation time) before the replay starts. The trace's first pods
/// are months apart from the rest (four fifths of `default`'s pods were created in the last
/// fifth of its span): replayed from the first creation, the replay would be mostly empty.
/// The replay starts at this quantile instead, with the pods created before it that are
/// still alive there already waiting at time 0 for what remains of their run.
pub const WARM_START_PCT: usize = 5;

/// Per pod, when it arrives after the replay's start and how long it runs, in trace seconds;
/// `None` for a pod gone before the start.
fn times(pods: &[PodRow]) -> Result<Vec<Option<(u64, u64)>>, ReplayError> {
    let mut raw = Vec::with_capacity(pods.len());
    for p in pods {
        match (p.creation_time, p.deletion_time) {
            (Some(c), Some(d)) => raw.push((c, d.max(c))),
            _ => return Err(ReplayError::NoTimes(p.name.clone())),
        }
    }
    let mut created: Vec<u64> = raw.iter().map(|r| r.0).collect();
    created.sort_unstable();
    let start = created.get(created.len() * WARM_START_PCT / 100).copied().unwrap_or(0);
    Ok(raw
        .into_iter()
        .map(|(c, d)| {
            let from = c.max(start);
            (d > start || c >= start).then(|| (from - start, d - from))
        })
        .collect())
}

fn span_of(times: &[Option<(u64, u64)>]) -> f64 {
    times.iter().flatten().map(|t| t.0).max().unwrap_or(0).max(1) as f64
}

/// The compression factor that offers `load` over `horizon_s` (step 1):
/// `load = (k / span) · Σ g · min(d, horizon) / capacity`.
pub fn compression_for(pods: &[PodRow], capacity_milli: u64, load: f64, horizon_s: u64) -> Result<f64, ReplayError> {
    compression_of(pods, &times(pods)?, capacity_milli, load, horizon_s)
}

/// [`compression_for`] over the pods' times as [`times`] gives them.
fn compression_of(
    pods: &[PodRow],
    t: &[Option<(u64, u64)>],
    capacity_milli: u64,
    load: f64,
    horizon_s: u64,
) -> Result<f64, ReplayError> {
    if !(load.is_finite() && load > 0.0) {
        return Err(ReplayError::BadTimeline(format!("the load must be a positive fraction of capacity, got {load}")));
    }
    if horizon_s == 0 || capacity_milli == 0 {
        return Err(ReplayError::BadTimeline("the replay needs a horizon and GPUs".into()));
    }
    let work: f64 = t
        .iter()
        .zip(pods)
        .filter_map(|(x, p)| x.map(|(_, d)| p.total_gpu_milli() as f64 * d.min(horizon_s) as f64))
        .sum();
    if work == 0.0 {
        return Err(ReplayError::BadTimeline("the pods ask for no GPU time".into()));
    }
    Ok(load * span_of(t) * capacity_milli as f64 / work)
}

fn priority_of(p: &PodRow) -> (i32, bool) {
    match p.qos.as_deref() {
        Some("LS" | "Guaranteed") => (2, false),
        Some("Burstable") => (1, false),
        _ => (0, true),
    }
}

fn job_of(id: u64, p: &PodRow, arrival: u64, preemption: bool) -> Job {
    let resources = Resources {
        gpus: p.num_gpu,
        gpu_milli: if p.num_gpu > 0 { p.gpu_milli } else { 0 },
        gpu_models: p.allowed_models(),
        cpu_milli: p.cpu_milli,
        memory_mib: p.memory_mib,
        ..Resources::default()
    };
    let mut job = Job::single(id, 0, 1, resources);
    job.name = p.name.clone();
    job.submitted_at = arrival;
    let (priority, preemptible) = if preemption { priority_of(p) } else { (0, true) };
    job.priority = priority;
    job.preemptible = preemptible;
    job.may_preempt = preemption;
    job
}

fn percentile(sorted: &[u64], pct: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) * pct).div_ceil(100)]
}

struct Running {
    job: Job,
    replicas: Vec<cycle::PlacedReplica>,
    started_at: u64,
}

/// What kind of pod a wait belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PodKind {
    /// One GPU shared (less than 1000 milli).
    Share,
    Multi,
    /// CPU-only, or one whole GPU.
    Other,
}

fn kind_of(p: &PodRow) -> PodKind {
    match p.num_gpu {
        0 => PodKind::Other,
        1 if p.gpu_milli < 1000 => PodKind::Share,
        1 => PodKind::Other,
        _ => PodKind::Multi,
    }
}

/// The replay's state between cycles: the shell around [`cycle::schedule`], as the cluster
/// agent keeps it (running jobs, the queue, evictions in flight) with time made up.
struct Shell<'t> {
    trace: &'t Trace,
    times: Vec<Option<(u64, u64)>>,
    cluster: Cluster,
    workload: Vec<crate::score::TypicalDemand>,
    node_frag: Vec<f64>,
    pending: BTreeMap<JobId, Job>,
    running: BTreeMap<JobId, Running>,
    /// (end, job, started_at): a stale entry's job was evicted since (its start differs).
    ends: BinaryHeap<Reverse<(u64, JobId, u64)>>,
    /// Evictions and moves decided and not over: a victim in its grace period still runs.
    evictions: Vec<InFlightEviction>,
    /// When each move was decided, for the rate limit's hour.
    moves: Vec<u64>,
    /// Synthetic busy % per device, and the seed of the pods' fractions.
    busy: Option<(DeviceLoad, u64)>,
}

impl Shell<'_> {
    fn row(&self, id: JobId) -> &PodRow {
        &self.trace.pods[id.0 as usize % self.trace.pods.len()]
    }

    fn take(&mut self, r: &Running) {
        for p in &r.replicas {
            self.cluster.allocate(&p.allocation).expect("the cycle placed it on free capacity");
            self.changed(p, r.job.id, true);
        }
    }

    fn release(&mut self, r: &Running) {
        for p in &r.replicas {
            self.cluster.release(&p.allocation).expect("a running pod's allocation is held");
            self.changed(p, r.job.id, false);
        }
    }

    fn changed(&mut self, p: &cycle::PlacedReplica, job: JobId, placed: bool) {
        if let Some((busy, seed)) = self.busy.as_mut() {
            busy.change(&mut self.cluster, &p.allocation, sharing::pod_fraction(*seed, job.0), placed);
        }
        let n = p.allocation.node;
        self.node_frag[n.index()] = node_fragmentation(self.cluster.node(n), &self.workload);
    }

    /// Departures due by `now`, and victims whose grace period is over (back to the queue).
    fn leave(&mut self, now: u64, grace_s: u64) {
        while let Some(&Reverse((end, id, started))) = self.ends.peek() {
            if end > now {
                break;
            }
            self.ends.pop();
            if self.running.get(&id).is_some_and(|r| r.started_at == started) {
                let r = self.running.remove(&id).expect("checked");
                self.release(&r);
                for e in self.evictions.iter_mut().filter(|e| e.victim == id) {
                    e.victim_left = true;
                }
            }
        }
        for i in 0..self.evictions.len() {
            let e = &self.evictions[i];
            if e.victim_left || e.since.saturating_add(grace_s) > now {
                continue;
            }
            let victim = e.victim;
            self.evictions[i].victim_left = true;
            if let Some(r) = self.running.remove(&victim) {
                self.release(&r);
                self.pending.insert(victim, r.job);
            }
        }
    }

    fn input(&self, queues: &Queues, now: u64) -> SchedulerInput {
        SchedulerInput {
            cluster: self.cluster.clone(),
            queues: queues.clone(),
            running: self
                .running
                .values()
                .map(|r| RunningJob {
                    job: r.job.clone(),
                    replicas: r.replicas.clone(),
                    started_at: r.started_at,
                    privileged: false,
                })
                .collect(),
            pending: self.pending.values().cloned().collect(),
            evictions: self.evictions.clone(),
            holds: Vec::new(),
            past_usage: BTreeMap::new(),
            recent_moves: self.moves.iter().filter(|t| now.saturating_sub(**t) < 3600).count() as u32,
            now,
        }
    }
}

/// Replays `trace` in time under `policy` (see the module doc).
pub fn run(
    trace: &Trace,
    policy: TimelinePolicy,
    seed: u64,
    config: &TimelineConfig,
) -> Result<TimelineResult, ReplayError> {
    if config.cycle_s == 0 {
        return Err(ReplayError::BadTimeline("a cycle every 0 seconds".into()));
    }
    let horizon = config.horizon_s;
    if config.warmup_s >= horizon {
        return Err(ReplayError::BadTimeline(format!(
            "the warm-up ({} s) must end before the horizon",
            config.warmup_s
        )));
    }
    let t = times(&trace.pods)?;
    let k = compression_of(&trace.pods, &t, trace.capacity_milli, config.load, horizon)?;
    let span = span_of(&t);
    let n = trace.pods.len();
    // (arrival in replay seconds, pass · n + row), in arrival order; pass j starts at j·span/k.
    let passes = ((horizon as f64 * k / span).ceil() as usize).max(1);
    let mut arrivals: Vec<(f64, usize)> = Vec::new();
    for pass in 0..passes {
        for (row, x) in t.iter().enumerate() {
            if let Some((c, _)) = x {
                let a = (pass as f64 * span + *c as f64) / k;
                if a <= horizon as f64 {
                    arrivals.push((a, pass * n + row));
                }
            }
        }
    }
    arrivals.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));

    let mut cluster = trace.cluster()?;
    let workload = typical_demands(&trace.typical, cluster.models());
    let limit = config.synthetic.and_then(|s| s.limit_pct);
    let sched = SchedulerConfig {
        policy: policy.policy(seed),
        workload: workload.clone(),
        preemption: config.preemption,
        sharing_busy_limit_pct: limit,
        ..SchedulerConfig::default()
    };
    let grace = sched.eviction_grace_s;
    // Guaranteed the whole cluster: nothing borrows, so non-preemptible pods may start and
    // preemption goes by priority alone.
    let mut queue = Queue::new(0, 0, "trace");
    queue.guarantee = ResourceVector::capacity_of(&cluster);
    let queues = Queues::flat(vec![queue]).expect("one queue");
    if config.synthetic.is_some() {
        DeviceLoad::measure_idle(&mut cluster);
    }
    let mut shell = Shell {
        trace,
        times: t,
        node_frag: cluster.nodes().iter().map(|n| node_fragmentation(n, &workload)).collect(),
        cluster,
        workload,
        pending: BTreeMap::new(),
        running: BTreeMap::new(),
        ends: BinaryHeap::new(),
        evictions: Vec::new(),
        moves: Vec::new(),
        busy: config.synthetic.map(|_| (DeviceLoad::new(seed), seed)),
    };
    let mut arrived_at: HashMap<JobId, u64> = HashMap::new();
    // (wait, kind, priority class of `priority_of`).
    let mut waits: Vec<(u64, PodKind, usize)> = Vec::new();
    let (mut next, mut now, mut cycles, mut evictions, mut moves) = (0usize, 0u64, 0usize, 0usize, 0usize);
    let (mut alloc_sum, mut frag_sum, mut shared_sum, mut hot_sum) = (0.0, 0.0, 0.0, 0.0);
    let capacity = trace.capacity_milli as f64;
    let hot_pct = f64::from(cycle::DEFAULT_SHARING_BUSY_LIMIT_PCT);

    while now <= horizon {
        shell.leave(now, grace);
        while next < arrivals.len() && arrivals[next].0 <= now as f64 {
            let (arrival, key) = arrivals[next];
            let id = JobId(key as u64);
            let at = arrival.floor() as u64;
            if at >= config.warmup_s {
                arrived_at.insert(id, at);
            }
            shell.pending.insert(id, job_of(key as u64, &trace.pods[key % n], at, config.preemption));
            next += 1;
        }
        if !shell.pending.is_empty() {
            let input = shell.input(&queues, now);
            debug_assert_eq!(input.validate(), Ok(()), "the shell keeps a consistent snapshot");
            let decisions = cycle::schedule(&input, &sched);
            for d in &decisions.decisions {
                match d {
                    Decision::Move { .. } => {
                        shell.moves.push(now);
                        moves += 1;
                    }
                    Decision::Evict { .. } => evictions += 1,
                    Decision::Start { job, replicas, .. } => {
                        let job = *job;
                        let Some(j) = shell.pending.remove(&job) else { continue };
                        let r = Running { job: j, replicas: replicas.clone(), started_at: now };
                        shell.take(&r);
                        if let Some(at) = arrived_at.remove(&job) {
                            let row = shell.row(job);
                            waits.push((now - at, kind_of(row), priority_of(row).0 as usize));
                        }
                        let duration = shell.times[job.0 as usize % n].map_or(1, |x| x.1.max(1));
                        shell.ends.push(Reverse((now + duration, job, now)));
                        shell.running.insert(job, r);
                    }
                    // Trace pods are single replicas, never elastic: nothing grows or shrinks.
                    // Evictions in flight are tracked below.
                    Decision::Grow { .. } | Decision::Shrink { .. } | Decision::CancelEviction { .. } => {}
                }
            }
            let Shell { evictions: inflight, pending, .. } = &mut shell;
            InFlightEviction::track(inflight, &decisions, now, |j| pending.contains_key(&j));
        }
        if now >= config.warmup_s {
            cycles += 1;
            alloc_sum += shell.cluster.gpu_used_milli() as f64 / capacity;
            frag_sum += shell.node_frag.iter().sum::<f64>() / capacity;
            if let Some((busy, _)) = &shell.busy {
                let (shared, hot) = busy.shared_now(hot_pct);
                shared_sum += shared as f64;
                hot_sum += if shared == 0 { 0.0 } else { hot as f64 / shared as f64 };
            }
        }
        now += config.cycle_s;
    }

    // Pods still waiting: censored at the horizon.
    let left: Vec<JobId> = shell.pending.keys().copied().filter(|id| arrived_at.contains_key(id)).collect();
    let started = waits.len();
    for id in &left {
        if let Some(at) = arrived_at.get(id) {
            let row = shell.row(*id);
            waits.push((horizon.saturating_sub(*at), kind_of(row), priority_of(row).0 as usize));
        }
    }
    let sorted = |keep: &dyn Fn(&(u64, PodKind, usize)) -> bool| {
        let mut w: Vec<u64> = waits.iter().filter(|w| keep(w)).map(|w| w.0).collect();
        w.sort_unstable();
        w
    };
    let all = sorted(&|_| true);
    let multi = sorted(&|w| w.1 == PodKind::Multi);
    let share = sorted(&|w| w.1 == PodKind::Share);
    let by_priority = [0, 1, 2].map(|class| percentile(&sorted(&|w| w.2 == class), 99));
    let per_cycle = |sum: f64| if cycles == 0 { 0.0 } else { sum / cycles as f64 };
    Ok(TimelineResult {
        policy: policy.name(),
        seed,
        compression: k,
        passes,
        cycles,
        pods_arrived: started + left.len(),
        pods_started: started,
        pods_waiting_at_end: left.len(),
        evictions,
        moves,
        gpu_alloc_pct: 100.0 * per_cycle(alloc_sum),
        gpu_frag_pct: 100.0 * per_cycle(frag_sum),
        wait_p50_s: percentile(&all, 50),
        wait_p99_s: percentile(&all, 99),
        multi_gpu_pods: multi.len(),
        multi_wait_p50_s: percentile(&multi, 50),
        multi_wait_p99_s: percentile(&multi, 99),
        multi_waiting_at_end: waits[started..].iter().filter(|w| w.1 == PodKind::Multi).count(),
        share_pods: share.len(),
        share_wait_p50_s: percentile(&share, 50),
        share_wait_p99_s: percentile(&share, 99),
        shared_gpus: per_cycle(shared_sum),
        shared_hot_pct: 100.0 * per_cycle(hot_sum),
        wait_p99_by_priority_s: by_priority,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::NodeRow;

    fn pod(name: &str, num_gpu: u32, gpu_milli: u32, created: u64, deleted: u64) -> PodRow {
        PodRow {
            qos: Some("LS".into()),
            creation_time: Some(created),
            deletion_time: Some(deleted),
            ..PodRow::bare(name, 1000, num_gpu, gpu_milli)
        }
    }

    fn nodes(n: usize, gpus: u32) -> Vec<NodeRow> {
        (0..n)
            .map(|i| NodeRow {
                line: i + 2,
                name: format!("node-{i}"),
                cpu_milli: 64_000,
                memory_mib: 1 << 20,
                gpus,
                model: "T4".into(),
            })
            .collect()
    }

    fn config(load: f64, horizon_s: u64) -> TimelineConfig {
        TimelineConfig { load, cycle_s: 10, preemption: false, horizon_s, warmup_s: 0, synthetic: None }
    }

    #[test]
    fn compression_gives_the_asked_offered_load() {
        // 100 one-GPU pods of 100 s each, one per 1000 s, on 2 GPUs. The replay starts at the
        // sixth (5 %): the first five are gone by then. 95 pods ask 9.5e6 milli·s over a span
        // of 94,000 s: 50 % of 2000 milli needs k = 0.5 · 94,000 · 2000 / 9.5e6 = 9.895.
        let pods: Vec<PodRow> = (0..100).map(|i| pod(&format!("p{i:03}"), 1, 1000, i * 1000, i * 1000 + 100)).collect();
        assert_eq!(times(&pods).unwrap().iter().filter(|x| x.is_none()).count(), 5, "gone before the start");
        let k = compression_for(&pods, 2000, 0.5, 3600).unwrap();
        assert!((k - 9.895).abs() < 0.001, "{k}");
        // Runs count up to the horizon: with a 50 s horizon each pod offers half as much.
        let k = compression_for(&pods, 2000, 0.5, 50).unwrap();
        assert!((k - 19.79).abs() < 0.01, "{k}");
        assert!(compression_for(&pods, 2000, 0.0, 3600).is_err());
        assert!(compression_for(&pods, 2000, 0.5, 0).is_err());
    }

    #[test]
    fn pods_that_do_not_fit_wait_for_departures_instead_of_being_dropped() {
        // One node of 2 GPUs; a and b (2 GPUs, 100 s each) arrive together, c 10,000 s later.
        // At k = 1 (offered load 3 · 2000 · 100 / (10,000 · 2000) = 0.03) b waits for a.
        let pods = vec![pod("a", 2, 1000, 0, 100), pod("b", 2, 1000, 0, 100), pod("c", 2, 1000, 10_000, 10_100)];
        let trace = Trace::new(&nodes(1, 2), &pods).unwrap();
        for policy in TimelinePolicy::ALL {
            let r = run(&trace, policy, 42, &config(0.03, 10_000)).unwrap();
            assert!((r.compression - 1.0).abs() < 1e-9);
            assert_eq!((r.pods_arrived, r.pods_started, r.pods_waiting_at_end), (3, 3, 0), "{policy:?}");
            assert_eq!(r.wait_p99_s, 100, "b waits for a: {r:?}");
            assert_eq!(r.wait_p50_s, 0);
            assert_eq!(r.multi_gpu_pods, 3);
            // 2 GPUs held for 200 s of 10,000 (1,001 cycles, 20 of them full): 2 %.
            assert!((r.gpu_alloc_pct - 2.0).abs() < 0.1, "{}", r.gpu_alloc_pct);
        }
        // Ten times the load: ten passes of the three pods; the queue never drains, and the
        // pods left waiting at the horizon count with their censored wait.
        let r = run(&trace, TimelinePolicy::Grus, 42, &config(0.3, 10_000)).unwrap();
        assert_eq!(r.passes, 10);
        assert_eq!(r.pods_arrived, 30);
        assert!(r.gpu_alloc_pct > 19.0, "{r:?}");
        // A warm-up hides the start: nothing arrived before it is counted.
        let warm = TimelineConfig { warmup_s: 5_000, ..config(0.03, 10_000) };
        let r = run(&trace, TimelinePolicy::Grus, 42, &warm).unwrap();
        assert_eq!(r.pods_arrived, 1, "only c");
        assert!(run(&trace, TimelinePolicy::Grus, 42, &TimelineConfig { warmup_s: 10_000, ..warm }).is_err());
    }

    #[test]
    fn an_evicted_pod_leaves_after_its_grace_period_and_runs_again_later() {
        // One node of 2 GPUs. x (best effort, 2 GPUs, 1000 s) starts at once; y (LS, 2 GPUs,
        // 100 s) arrives 100 s later and evicts it: x holds its GPUs through the 30 s grace
        // period, then waits behind y and starts again for its whole run. z, far beyond the
        // horizon, keeps the arrivals from repeating.
        let mut x = pod("x", 2, 1000, 0, 1000);
        x.qos = Some("BE".into());
        let pods = vec![x, pod("y", 2, 1000, 100, 200), pod("z", 1, 1000, 100_000, 100_010)];
        let trace = Trace::new(&nodes(1, 2), &pods).unwrap();
        let on = TimelineConfig { preemption: true, ..config(0.01, 5_000) };
        let k = compression_for(&pods, 2000, on.load, on.horizon_s).unwrap();
        let on = TimelineConfig { load: on.load / k, ..on };
        let r = run(&trace, TimelinePolicy::Grus, 42, &on).unwrap();
        assert!((r.compression - 1.0).abs() < 1e-9 && r.passes == 1, "{r:?}");
        assert_eq!((r.evictions, r.moves), (1, 0), "{r:?}");
        assert_eq!((r.pods_started, r.pods_waiting_at_end), (2, 0), "{r:?}");
        // x waited 0 s at its first start (a wait counts once); y waited for the grace period.
        assert_eq!(r.wait_p99_s, 30, "{r:?}");
        // The GPUs are held for 100 + 30 (x), 100 (y) and 1000 (x again) of 5,000 s.
        assert!((r.gpu_alloc_pct - 100.0 * 1230.0 / 5000.0).abs() < 0.5, "{r:?}");
        assert_eq!(r.wait_p99_by_priority_s, [0, 0, 30], "x is best effort, y latency-sensitive");
        // Preemption off: y waits for x's whole run instead.
        let r = run(&trace, TimelinePolicy::Grus, 42, &TimelineConfig { preemption: false, ..on }).unwrap();
        assert_eq!((r.evictions, r.wait_p99_s), (0, 900), "{r:?}");
    }

    #[test]
    fn the_sharing_limit_keeps_every_shared_gpu_under_it_while_pods_come_and_go() {
        // 4 GPUs and shares of half a GPU, each 300 s long, one every 40 s: about two per
        // device, and a pair drives its device above 70 % about a quarter of the time (each
        // share 10–50 % busy).
        let pods: Vec<PodRow> = (0..200).map(|i| pod(&format!("s{i:03}"), 1, 500, i * 40, i * 40 + 300)).collect();
        let trace = Trace::new(&nodes(2, 2), &pods).unwrap();
        let load = |limit_pct| TimelineConfig { synthetic: Some(SyntheticLoad { limit_pct }), ..config(0.01, 2_000) };
        let k = compression_for(&pods, 4000, 0.01, 2_000).unwrap();
        let at_k1 = |c: TimelineConfig| TimelineConfig { load: c.load / k, ..c };
        for policy in [TimelinePolicy::Grus, TimelinePolicy::GrusBlind, TimelinePolicy::Fgd] {
            let free = run(&trace, policy, 7, &at_k1(load(None))).unwrap();
            assert!(free.shared_gpus > 1.0 && free.shared_hot_pct > 5.0, "{policy:?}: {free:?}");
            let limited = run(&trace, policy, 7, &at_k1(load(Some(70)))).unwrap();
            assert_eq!(limited.shared_hot_pct, 0.0, "{policy:?}: {limited:?}");
            // Refused shares wait instead of being dropped.
            assert!(limited.share_wait_p99_s >= free.share_wait_p99_s, "{policy:?}: {limited:?}");
        }
        // Without synthetic load nothing is measured.
        let r = run(&trace, TimelinePolicy::Grus, 7, &at_k1(config(0.01, 2_000))).unwrap();
        assert_eq!((r.shared_gpus, r.shared_hot_pct), (0.0, 0.0));
    }

    #[test]
    fn a_random_run_does_not_depend_on_what_ran_before_it() {
        // Pods of one and two GPUs on four nodes of 2: where random puts the small ones
        // decides when the large ones start.
        let pods: Vec<PodRow> =
            (0..80).map(|i| pod(&format!("p{i:02}"), 1 + (i % 3 == 0) as u32, 1000, i * 30, i * 30 + 200)).collect();
        let trace = Trace::new(&nodes(4, 2), &pods).unwrap();
        let first = run(&trace, TimelinePolicy::Random, 9, &config(0.9, 3_000)).unwrap();
        run(&trace, TimelinePolicy::Grus, 9, &config(0.5, 3_000)).unwrap();
        let again = run(&trace, TimelinePolicy::Random, 9, &config(0.9, 3_000)).unwrap();
        assert_eq!(first, again);
        let other = run(&trace, TimelinePolicy::Random, 10, &config(0.9, 3_000)).unwrap();
        assert_ne!(first, TimelineResult { seed: 10, ..other }, "the seed changes where pods go");
    }

    #[test]
    fn a_pod_list_without_times_is_refused() {
        let mut p = pod("a", 1, 1000, 0, 10);
        p.deletion_time = None;
        let trace = Trace::new(&nodes(1, 2), &[p]).unwrap();
        let err = run(&trace, TimelinePolicy::Fgd, 1, &config(1.0, 100)).unwrap_err();
        assert_eq!(err, ReplayError::NoTimes("a".into()));
    }
}
