//! The scheduling cycle: `schedule(input, config) -> Decisions`, a pure function of a snapshot.
//!
//! Order of one cycle (README.md explains the why):
//! 1. In-flight evictions: cancelled when their preemptor is gone or already running; the
//!    remaining preemptors (privileged) go first.
//! 2. Queues by fair-share deficit (weighted DRF), jobs by priority then age. Each job's gang is
//!    placed all-or-nothing (`min_members`, or the elastic minimum); the queue's, project's and
//!    tenant's limits and the borrowing rules are checked on the actual placement. Jobs that stay
//!    inside their guarantee go first, then those that borrow.
//! 3. A job that does not fit plans a preemption if it is entitled (see `preempt`); the victims
//!    get `Evict` with a grace period and the preemptor waits with its nodes reserved.
//! 4. Otherwise the highest-ranked blocked gang reserves the nodes it would use once running
//!    jobs end; later jobs may use those nodes only if they end before it could start (backfill).
//! 5. Extra replicas (elastic up to max, beyond `min_members`) grow on what is left.
//!
//! The cycle owns no state between calls: usage, borrowed status, reservations and shares are
//! derived from the input every time. The only memory is the input's in-flight evictions.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, VecDeque};

use crate::cluster::{Cluster, NodeId, ReplicaAllocation};
use crate::demand::Demand;
use crate::explain::{FilterReason, NodeRejections, PreemptionFailure, Unplaced};
use crate::fairshare::{fair_shares, FairShareConfig, PastUsage, QueueDemand, QueueShare};
use crate::job::{Job, JobId, QueueId, TopologyScope};
use crate::place::{Constraints, Domain, GangFailure, Placer};
use crate::preempt::{choose_victims, eligible_victims, Preemptor, Probe, VictimInfo};
use crate::queue::{
    classify_borrowed, Admission, HeldUsage, Queues, QuotaViolation, ResourceKey, ResourceVector, Usage,
};
use crate::resources::{ModelSet, ModelTable};
use crate::score::{Policy, TypicalDemand, TYPICAL_COVERAGE_PCT};

/// One replica of a job and where it sits.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PlacedReplica {
    /// Index into the job's `tasks`.
    pub task: usize,
    pub allocation: ReplicaAllocation,
}

/// A job that holds capacity (running, or preempting-victim in its grace period).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningJob {
    pub job: Job,
    pub replicas: Vec<PlacedReplica>,
    pub started_at: u64,
    /// Never chosen as a victim (a preemptor, or marked so by an operator).
    pub privileged: bool,
}

/// An eviction decided by an earlier cycle. It is in flight while its victim still holds
/// capacity in the snapshot (grace period, teardown). The shell may keep it after the victim
/// left, until its preemptor starts or a `CancelEviction` names it: the waiting preemptor then
/// keeps its place at the front. It must drop it when the requeued victim starts again (a new
/// run is not under eviction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlightEviction {
    pub victim: JobId,
    pub preemptor: JobId,
    /// When the eviction was decided.
    pub since: u64,
    /// The victim has no live replica any more (it may still hold capacity while torn down):
    /// such an eviction is never cancelled, only waited for.
    pub victim_left: bool,
}

/// Everything one cycle looks at. `cluster` already holds the allocations of `running`.
#[derive(Clone, Debug)]
pub struct SchedulerInput {
    pub cluster: Cluster,
    pub queues: Queues,
    pub running: Vec<RunningJob>,
    pub pending: Vec<Job>,
    pub evictions: Vec<InFlightEviction>,
    /// Decayed past usage per queue (only read when `FairShareConfig::half_life_s` is set).
    pub past_usage: BTreeMap<QueueId, PastUsage>,
    /// Seconds; the cycle never reads a clock.
    pub now: u64,
}

/// Reservations for blocked gangs (backfill).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackfillConfig {
    /// Blocked gangs that may hold a reservation at once (0 disables reservations).
    pub max_reservations: usize,
    /// Only jobs of at least this priority reserve.
    pub min_priority: i32,
}

#[derive(Debug)]
pub struct SchedulerConfig {
    pub policy: Policy,
    pub workload: Vec<TypicalDemand>,
    pub fair_share: FairShareConfig,
    pub preemption: bool,
    /// Grace period given to every victim.
    pub eviction_grace_s: u64,
    pub backfill: BackfillConfig,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            policy: Policy::grus_bounded(),
            workload: Vec::new(),
            fair_share: FairShareConfig::default(),
            preemption: true,
            eviction_grace_s: 30,
            backfill: BackfillConfig { max_reservations: 1, min_priority: 0 },
        }
    }
}

/// What the shell should do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Start a pending job with these replicas (its gang, plus any extras that fit).
    /// `borrowed`: the job lies above its queue's guarantee (reclaimable by other queues).
    Start { job: JobId, replicas: Vec<PlacedReplica>, borrowed: bool },
    /// Add replicas to a running elastic (or partially placed) job.
    Grow { job: JobId, replicas: Vec<PlacedReplica> },
    /// Evict a whole running job after `grace_s` seconds, to make room for `preemptor`, which is
    /// now privileged and waits.
    Evict { job: JobId, preemptor: JobId, grace_s: u64 },
    /// An eviction in flight is no longer needed (its preemptor is placed, gone, or fits elsewhere).
    CancelEviction { job: JobId, preemptor: JobId },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReservationKind {
    /// A preemptor waiting for its victims: nobody else may use these nodes.
    Preemption,
    /// A blocked gang: other jobs may use these nodes only if they end by `earliest_start`.
    Backfill { earliest_start: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    pub job: JobId,
    pub nodes: BTreeSet<NodeId>,
    pub kind: ReservationKind,
}

/// The outcome of one cycle.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decisions {
    pub decisions: Vec<Decision>,
    /// Why each pending job that was not started is waiting.
    pub unplaced: BTreeMap<JobId, Unplaced>,
    pub reservations: Vec<Reservation>,
    /// Fair-share state per queue after the cycle.
    pub shares: BTreeMap<QueueId, QueueShare>,
}

impl Decisions {
    pub fn starts(&self) -> impl Iterator<Item = (JobId, &[PlacedReplica])> {
        self.decisions.iter().filter_map(|d| match d {
            Decision::Start { job, replicas, .. } => Some((*job, replicas.as_slice())),
            _ => None,
        })
    }

    pub fn evictions(&self) -> impl Iterator<Item = (JobId, JobId)> + '_ {
        self.decisions.iter().filter_map(|d| match d {
            Decision::Evict { job, preemptor, .. } => Some((*job, *preemptor)),
            _ => None,
        })
    }
}

/// Runs one cycle. Deterministic: the same input and config give the same decisions.
///
/// Precondition: the input is consistent ([`SchedulerInput::validate`]); the shell checks it
/// once after building the snapshot, since a cluster that disagrees with its running jobs is a
/// bug in the shell that no decision could repair. Without a configured typical workload
/// (`config.workload` empty), the cycle derives it from its own jobs ([`typical_workload`]).
pub fn schedule(input: &SchedulerInput, config: &SchedulerConfig) -> Decisions {
    let derived;
    let workload = if config.workload.is_empty() {
        derived = typical_workload(input);
        &derived[..]
    } else {
        &config.workload[..]
    };
    let mut cycle = Cycle::new(input, config);
    cycle.placer.workload = workload;
    cycle.run()
}

/// The typical workload of a snapshot for fragmentation-aware scoring: FGD's 95 % coverage
/// ([`TypicalDemand::from_demands`]) over the replicas of the pending jobs (each task at its
/// target count) and of the running ones (as placed), resolved against the cluster's
/// models; tasks naming only models the cluster lacks are left out. Pure and deterministic,
/// one pass over the jobs. Empty when there are no jobs: the policy then treats each demand
/// as its own typical workload.
pub fn typical_workload(input: &SchedulerInput) -> Vec<TypicalDemand> {
    let models = input.cluster.models();
    let pending = input
        .pending
        .iter()
        .flat_map(|j| j.tasks.iter().zip(replica_targets(j)).map(|(t, (_, target))| (&t.resources, target as u64)));
    let running = input
        .running
        .iter()
        .flat_map(|r| r.replicas.iter().filter_map(|p| r.job.tasks.get(p.task)).map(|t| (&t.resources, 1)));
    TypicalDemand::from_demands(
        pending.chain(running).filter_map(|(res, n)| Some((Demand::resolve(res, models)?, n))),
        TYPICAL_COVERAGE_PCT,
    )
}

/// Why a snapshot cannot be scheduled.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum InputError {
    #[error("job {0:?} appears twice among the running and pending jobs")]
    DuplicateJob(JobId),
    #[error("job {job:?}: replica on node {node:?} names a node or GPU that does not exist")]
    UnknownPlace { job: JobId, node: NodeId },
    #[error("job {job:?}: replica of task #{task}, which the job does not have")]
    UnknownTask { job: JobId, task: usize },
    #[error("node {0:?}: the cluster's usage differs from the sum of the running replicas on it")]
    UsageMismatch(NodeId),
}

impl SchedulerInput {
    /// Checks that every job appears once, that running replicas name existing nodes, devices
    /// and tasks, and that the cluster's usage is exactly that of the running replicas.
    pub fn validate(&self) -> Result<(), InputError> {
        let mut seen = BTreeSet::new();
        for id in self.running.iter().map(|r| r.job.id).chain(self.pending.iter().map(|j| j.id)) {
            if !seen.insert(id) {
                return Err(InputError::DuplicateJob(id));
            }
        }
        let nodes = self.cluster.nodes();
        // Per node: CPU, memory, pods, and milli per device.
        let mut sums: Vec<(u64, u64, u32, Vec<u64>)> = nodes.iter().map(|n| (0, 0, 0, vec![0; n.gpus.len()])).collect();
        for r in &self.running {
            for p in &r.replicas {
                let a = &p.allocation;
                if p.task >= r.job.tasks.len() {
                    return Err(InputError::UnknownTask { job: r.job.id, task: p.task });
                }
                let unknown = || InputError::UnknownPlace { job: r.job.id, node: a.node };
                let sum = sums.get_mut(a.node.index()).ok_or_else(unknown)?;
                sum.0 += a.cpu_milli;
                sum.1 += a.memory_mib;
                sum.2 += 1;
                for d in &a.devices {
                    *sum.3.get_mut(d.gpu as usize).ok_or_else(unknown)? += d.milli as u64;
                }
            }
        }
        for (node, (cpu, mem, pods, milli)) in nodes.iter().zip(sums) {
            let devices_agree = node.gpus.iter().zip(&milli).all(|(g, m)| g.used_milli as u64 == *m);
            if node.cpu_used != cpu || node.memory_used != mem || node.pods != pods || !devices_agree {
                return Err(InputError::UsageMismatch(node.id));
            }
        }
        Ok(())
    }
}

/// Replicas per task: (required for the gang, target). The gang is the first `gang_size`
/// replicas in task order; an elastic job's target is its maximum.
pub fn replica_targets(job: &Job) -> Vec<(u32, u32)> {
    let mut left = job.gang_size();
    job.tasks
        .iter()
        .map(|t| {
            let target = job.elastic.map_or(t.replicas, |e| e.max);
            let required = left.min(target);
            left -= required;
            (required, target)
        })
        .collect()
}

/// Why a placement attempt failed.
#[derive(Clone, Debug)]
enum Fail {
    Capacity(Unplaced),
    Quota(QuotaViolation),
    Reserved(JobId),
}

fn constraints(job: &Job) -> Constraints<'_> {
    Constraints { node_selector: &job.node_selector, tolerations: &job.tolerations }
}

fn resolve(job: &Job, models: &ModelTable) -> Result<Vec<Demand>, Unplaced> {
    job.tasks
        .iter()
        .map(|t| {
            Demand::resolve(&t.resources, models).ok_or_else(|| Unplaced::UnknownGpuModel {
                task: t.name.clone(),
                models: t.resources.gpu_models.clone(),
            })
        })
        .collect()
}

/// The usage of the gang whatever models it lands on: total GPU milli, CPU, memory.
fn lower_bound(job: &Job, req: &[(u32, u32)]) -> ResourceVector {
    let (mut gpu, mut cpu, mut mem) = (0u64, 0u64, 0u64);
    for (t, &(r, _)) in job.tasks.iter().zip(req) {
        gpu += r as u64 * t.resources.total_gpu_milli();
        cpu += r as u64 * t.resources.cpu_milli;
        mem += r as u64 * t.resources.memory_mib;
    }
    ResourceVector::new().with(ResourceKey::Gpus, gpu).with(ResourceKey::Cpu, cpu).with(ResourceKey::Memory, mem)
}

/// The demands with GPU model `name` taken out of every GPU demand, or `None` when that
/// changes nothing or leaves a demand with no model.
fn without_model(demands: &[Demand], models: &ModelTable, name: &str) -> Option<Vec<Demand>> {
    let id = models.get(name)?;
    let mut changed = false;
    let mut out = Vec::with_capacity(demands.len());
    for d in demands {
        if d.gpus == 0 || !d.models.allows(id) {
            out.push(d.clone());
            continue;
        }
        let mut set = ModelSet::default();
        let allowed: Vec<_> = if d.models.is_any() { models.ids().collect() } else { d.models.iter().collect() };
        for m in allowed.into_iter().filter(|m| *m != id) {
            set.insert(m);
        }
        if set.is_any() {
            return None;
        }
        changed = true;
        out.push(Demand { models: set, ..d.clone() });
    }
    changed.then_some(out)
}

fn release_all(cluster: &mut Cluster, placed: &[PlacedReplica]) {
    for p in placed.iter().rev() {
        cluster.release(&p.allocation).expect("releasing an allocation made in this attempt");
    }
}

/// Whether a failed placement should say why. Explaining scans every node; the preemption
/// search and reservations only need to know whether it fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Explain {
    Yes,
    No,
}

/// Places the gang (required replicas of every task, each task in its topology scope) or
/// nothing.
fn place_required(
    placer: &Placer<'_>,
    cluster: &mut Cluster,
    job: &Job,
    demands: &[Demand],
    req: &[(u32, u32)],
    explain: Explain,
) -> Result<Vec<PlacedReplica>, Unplaced> {
    let cons = constraints(job);
    let mut placed: Vec<PlacedReplica> = Vec::new();
    for (i, (task, &(required, _))) in job.tasks.iter().zip(req).enumerate() {
        if required == 0 {
            continue;
        }
        let members = vec![demands[i].clone(); required as usize];
        let attempt = match explain {
            Explain::Yes => placer.place_gang(cluster, &members, task.topology, &cons),
            Explain::No => placer.try_place_gang(cluster, &members, task.topology, &cons).ok_or(GangFailure {
                member: 0,
                placed: 0,
                rejections: NodeRejections::default(),
            }),
        };
        match attempt {
            Ok(allocs) => placed.extend(allocs.into_iter().map(|allocation| PlacedReplica { task: i, allocation })),
            Err(f) => {
                let placed_before = placed.len() as u32;
                release_all(cluster, &placed);
                return Err(Unplaced::NoFit {
                    task: task.name.clone(),
                    placed: placed_before + f.placed as u32,
                    needed: job.gang_size(),
                    nodes: f.rejections,
                });
            }
        }
    }
    Ok(placed)
}

/// Places the gang and admits it against the quotas on the models it actually got; when a
/// model's quota is the obstacle, tries again without that model. On success the allocations
/// are applied to `cluster` (not to `usage`).
#[allow(clippy::too_many_arguments)]
fn place_admitted(
    placer: &Placer<'_>,
    cluster: &mut Cluster,
    usage: &Usage,
    queues: &Queues,
    job: &Job,
    demands: &[Demand],
    req: &[(u32, u32)],
    require_guarantee: bool,
    explain: Explain,
) -> Result<(Vec<PlacedReplica>, ResourceVector, Admission), Fail> {
    let mut demands = demands.to_vec();
    loop {
        let placed = place_required(placer, cluster, job, &demands, req, explain).map_err(Fail::Capacity)?;
        let delta = ResourceVector::of_allocations(cluster, placed.iter().map(|p| &p.allocation));
        let violation = match usage.admit(queues, job.queue, job.priority, &delta, job.preemptible) {
            Ok(Admission::Borrowing) if require_guarantee => {
                let name = queues.queue(job.queue).map_or_else(String::new, |q| q.name.clone());
                QuotaViolation::CannotBorrow { queue: name }
            }
            Ok(admission) => return Ok((placed, delta, admission)),
            Err(v) => v,
        };
        release_all(cluster, &placed);
        match violation.gpu_model().and_then(|m| without_model(&demands, cluster.models(), m)) {
            Some(d) => demands = d,
            None => return Err(Fail::Quota(violation)),
        }
    }
}

/// Lifts (`true`) or restores (`false`) the mask on reserved nodes.
fn set_health(cluster: &mut Cluster, nodes: &[NodeId], healthy: bool) {
    for &n in nodes {
        cluster.set_node_health(n, healthy);
    }
}

/// Gives back an allocation that was released a moment ago, even where its node or devices are
/// masked or unhealthy now (the job was there; health only stops new placements).
fn force_allocate(cluster: &mut Cluster, a: &ReplicaAllocation) {
    let node_down = !cluster.node(a.node).healthy;
    let gpus_down: Vec<u8> =
        a.devices.iter().map(|d| d.gpu).filter(|&g| !cluster.node(a.node).gpus[g as usize].healthy).collect();
    if node_down {
        cluster.set_node_health(a.node, true);
    }
    for &g in &gpus_down {
        cluster.set_gpu_health(a.node, g, true);
    }
    cluster.allocate(a).expect("giving back what was just released");
    for &g in &gpus_down {
        cluster.set_gpu_health(a.node, g, false);
    }
    if node_down {
        cluster.set_node_health(a.node, false);
    }
}

/// Where more replicas of a task go so that they stay inside its topology scope.
fn domain_of(cluster: &Cluster, scope: TopologyScope, first: &ReplicaAllocation) -> Domain {
    match scope {
        TopologyScope::Any => Domain::Anywhere,
        TopologyScope::Node => Domain::Node(first.node),
        TopologyScope::NvLink => match first.devices.first() {
            Some(d) => Domain::NvLink(first.node, cluster.node(first.node).gpus[d.gpu as usize].nvlink_group),
            None => Domain::Node(first.node),
        },
        TopologyScope::Rack => match cluster.node(first.node).rack {
            Some(r) => Domain::Rack(r),
            None => Domain::Node(first.node),
        },
    }
}

/// Adds replicas toward each task's target, one at a time, inside the task's scope, while
/// they fit and the quotas admit them. Applies them to `cluster` and `usage`.
#[allow(clippy::too_many_arguments)]
fn place_extras(
    placer: &Placer<'_>,
    cluster: &mut Cluster,
    usage: &mut Usage,
    queues: &Queues,
    job: &Job,
    demands: &[Demand],
    have: &[PlacedReplica],
    targets: &[(u32, u32)],
) -> Vec<PlacedReplica> {
    let cons = constraints(job);
    let mut added: Vec<PlacedReplica> = Vec::new();
    for (i, (task, &(_, target))) in job.tasks.iter().zip(targets).enumerate() {
        loop {
            let gang: Vec<ReplicaAllocation> =
                have.iter().chain(&added).filter(|p| p.task == i).map(|p| p.allocation.clone()).collect();
            if gang.len() as u32 >= target {
                break;
            }
            let alloc = match gang.first() {
                None => placer
                    .place_gang(cluster, std::slice::from_ref(&demands[i]), task.topology, &cons)
                    .ok()
                    .and_then(|mut v| v.pop()),
                Some(first) => {
                    let domain = domain_of(cluster, task.topology, first);
                    placer.best_allocation(cluster, &demands[i], &cons, domain, &gang).map(|(a, _)| {
                        cluster.allocate(&a).expect("the filter admitted this allocation");
                        a
                    })
                }
            };
            let Some(a) = alloc else { break };
            let delta = ResourceVector::of_allocations(cluster, [&a]);
            if usage.admit(queues, job.queue, job.priority, &delta, job.preemptible).is_err() {
                cluster.release(&a).expect("releasing an allocation made a moment ago");
                break;
            }
            usage.add(job.queue, job.priority, &delta);
            added.push(PlacedReplica { task: i, allocation: a });
        }
    }
    added
}

/// What a preemptor's placement would take: its nodes and its usage.
#[derive(Clone, Debug, Default)]
struct Hold {
    nodes: BTreeSet<NodeId>,
    usage: ResourceVector,
}

/// A job holding capacity during the cycle.
struct Held<'a> {
    job: &'a Job,
    replicas: Vec<PlacedReplica>,
    started_at: u64,
    privileged: bool,
    usage: ResourceVector,
    /// Started in this cycle: never a victim, and its extras were already tried.
    new: bool,
}

/// Queue order: largest deficit first, then lowest queue id.
#[derive(PartialEq)]
struct QueueTurn {
    deficit: f64,
    queue: QueueId,
}

impl Eq for QueueTurn {}

impl Ord for QueueTurn {
    fn cmp(&self, other: &Self) -> Ordering {
        self.deficit.total_cmp(&other.deficit).then_with(|| other.queue.cmp(&self.queue))
    }
}

impl PartialOrd for QueueTurn {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

struct Cycle<'a> {
    input: &'a SchedulerInput,
    cfg: &'a SchedulerConfig,
    placer: Placer<'a>,
    cluster: Cluster,
    usage: Usage,
    capacity: ResourceVector,
    shares: BTreeMap<QueueId, QueueShare>,
    past_share: BTreeMap<QueueId, f64>,
    held: BTreeMap<JobId, Held<'a>>,
    /// Victim -> preemptor, for evictions in flight and decided now.
    evicting: BTreeMap<JobId, JobId>,
    /// Victim -> when its eviction was decided.
    evicting_since: BTreeMap<JobId, u64>,
    /// Victims with no live replica left: waited for, never cancelled.
    left: BTreeSet<JobId>,
    reservations: Vec<Reservation>,
    /// Running jobs above their queue's guarantee; computed when first needed, dropped whenever
    /// a job starts or grows.
    borrowed: Option<BTreeSet<JobId>>,
    /// Nodes made unschedulable on `cluster` because a reservation holds them.
    masked: BTreeSet<NodeId>,
    /// Shapes of jobs that could not start and found no preemption plan: the same shape fails
    /// again in this cycle, without another placement, explanation and plan.
    failed_shapes: BTreeMap<String, Unplaced>,
    decisions: Vec<Decision>,
    unplaced: BTreeMap<JobId, Unplaced>,
}

impl<'a> Cycle<'a> {
    fn new(input: &'a SchedulerInput, cfg: &'a SchedulerConfig) -> Cycle<'a> {
        let cluster = input.cluster.clone();
        let mut usage = Usage::default();
        let mut held = BTreeMap::new();
        for r in &input.running {
            let u = ResourceVector::of_allocations(&cluster, r.replicas.iter().map(|p| &p.allocation));
            usage.add(r.job.queue, r.job.priority, &u);
            held.insert(
                r.job.id,
                Held {
                    job: &r.job,
                    replicas: r.replicas.clone(),
                    started_at: r.started_at,
                    privileged: r.privileged,
                    usage: u,
                    new: false,
                },
            );
        }
        let capacity = ResourceVector::capacity_of(&cluster);
        let fs = &cfg.fair_share;
        let demands: Vec<QueueDemand> = input
            .queues
            .queues()
            .map(|q| {
                let mut demand = usage.queue(q.id);
                for j in input.pending.iter().filter(|j| j.queue == q.id) {
                    demand.add(&lower_bound(j, &replica_targets(j)));
                }
                QueueDemand {
                    queue: q.id,
                    weight: q.weight,
                    usage: usage.queue(q.id),
                    demand,
                    past: input.past_usage.get(&q.id).cloned(),
                }
            })
            .collect();
        let shares = fair_shares(&capacity, &demands, fs, input.now);
        let past_share = match fs.half_life_s {
            Some(h) => input.past_usage.iter().map(|(q, p)| (*q, p.dominant_share(&capacity, input.now, h))).collect(),
            None => BTreeMap::new(),
        };
        Cycle {
            input,
            cfg,
            placer: Placer { policy: &cfg.policy, workload: &cfg.workload },
            cluster,
            usage,
            capacity,
            shares,
            past_share,
            held,
            evicting: BTreeMap::new(),
            evicting_since: input.evictions.iter().map(|e| (e.victim, e.since)).fold(
                BTreeMap::new(),
                |mut m, (v, t)| {
                    // Several entries for one victim: the earliest decision counts.
                    let at = m.entry(v).or_insert(t);
                    *at = (*at).min(t);
                    m
                },
            ),
            left: input.evictions.iter().filter(|e| e.victim_left).map(|e| e.victim).collect(),
            reservations: Vec::new(),
            masked: BTreeSet::new(),
            borrowed: None,
            failed_shapes: BTreeMap::new(),
            decisions: Vec::new(),
            unplaced: BTreeMap::new(),
        }
    }

    fn run(mut self) -> Decisions {
        let input = self.input;
        let pending: BTreeMap<JobId, &Job> =
            input.pending.iter().filter(|j| !self.held.contains_key(&j.id)).map(|j| (j.id, j)).collect();

        // 1. Evictions in flight: keep those whose preemptor still waits, cancel the rest.
        let mut waiting: BTreeMap<JobId, Vec<JobId>> = BTreeMap::new();
        let mut evictions = input.evictions.clone();
        evictions.sort_by_key(|e| (e.preemptor, e.victim, e.since));
        for e in &evictions {
            let victim_holds = self.held.contains_key(&e.victim);
            if pending.contains_key(&e.preemptor) {
                let victims = waiting.entry(e.preemptor).or_default();
                if victim_holds && !victims.contains(&e.victim) {
                    victims.push(e.victim);
                    self.evicting.insert(e.victim, e.preemptor);
                }
            } else if victim_holds && !e.victim_left {
                self.decisions.push(Decision::CancelEviction { job: e.victim, preemptor: e.preemptor });
            }
        }
        // The input's order must not matter.
        for victims in waiting.values_mut() {
            victims.sort_unstable();
        }
        let mut preemptors: Vec<&Job> = waiting.keys().map(|id| pending[id]).collect();
        preemptors.sort_by_key(|j| (std::cmp::Reverse(j.priority), j.submitted_at, j.id));
        for p in preemptors {
            let old = waiting.remove(&p.id).unwrap_or_default();
            self.consider(p, old);
        }

        // 2. Queues by deficit, jobs by priority then age.
        let mut per_queue: BTreeMap<QueueId, VecDeque<&Job>> = BTreeMap::new();
        let rest: Vec<&Job> =
            pending.values().copied().filter(|j| !self.unplaced.contains_key(&j.id) && !self.started(j.id)).collect();
        for j in rest {
            if input.queues.queue(j.queue).is_none() {
                let (queue, resource) = QuotaViolation::UnknownQueue(j.queue).describe();
                self.unplaced.insert(j.id, Unplaced::QueueLimit { queue, resource });
                continue;
            }
            per_queue.entry(j.queue).or_default().push_back(j);
        }
        for jobs in per_queue.values_mut() {
            jobs.make_contiguous().sort_by_key(|j| (std::cmp::Reverse(j.priority), j.submitted_at, j.id));
        }
        // Two passes, as Kueue orders its queue heads: first each queue's jobs up to the first
        // that would borrow, then the rest. A job that reclaims its guarantee thus starts
        // before the borrowed job it evicted can come back, even when the shell forgot the
        // eviction; inside a queue, priority order holds.
        let mut borrowing: BTreeMap<QueueId, VecDeque<&Job>> = BTreeMap::new();
        self.serve_queues(per_queue, Some(&mut borrowing));
        // Borrowed capacity goes by priority first (then deficit): a job entitled to preempt a
        // lower-priority borrower of its project is served before that borrower can come back.
        let mut levels: BTreeMap<std::cmp::Reverse<i32>, BTreeMap<QueueId, VecDeque<&Job>>> = BTreeMap::new();
        for (q, jobs) in borrowing {
            for j in jobs {
                levels.entry(std::cmp::Reverse(j.priority)).or_default().entry(q).or_default().push_back(j);
            }
        }
        for (_, level) in levels {
            self.serve_queues(level, None);
        }

        // 3. Growth on what is left.
        self.grow();

        let mut shares = self.shares.clone();
        for (q, s) in shares.iter_mut() {
            *s = s.with_usage(&self.usage.queue(*q), &self.capacity, self.past(*q), &self.cfg.fair_share);
        }
        Decisions { decisions: self.decisions, unplaced: self.unplaced, reservations: self.reservations, shares }
    }

    /// Serves queues by deficit, one job at a time. With `defer`, a queue stops at its first job
    /// that would borrow: that job and the rest of the queue are set aside there, in order.
    fn serve_queues(
        &mut self,
        mut per_queue: BTreeMap<QueueId, VecDeque<&'a Job>>,
        mut defer: Option<&mut BTreeMap<QueueId, VecDeque<&'a Job>>>,
    ) {
        let mut heap: BinaryHeap<QueueTurn> =
            per_queue.keys().map(|&q| QueueTurn { deficit: self.deficit(q), queue: q }).collect();
        while let Some(QueueTurn { queue, .. }) = heap.pop() {
            let jobs = per_queue.get_mut(&queue).expect("queued above");
            let Some(job) = jobs.pop_front() else { continue };
            if let Some(later) = defer.as_deref_mut() {
                if self.would_borrow(job) {
                    // The queue stops here for this pass: its later (lower-ranked) jobs must not
                    // overtake the one that borrows.
                    let later = later.entry(queue).or_default();
                    later.push_back(job);
                    later.extend(jobs.drain(..));
                    continue;
                }
            }
            self.consider(job, Vec::new());
            if !jobs.is_empty() {
                heap.push(QueueTurn { deficit: self.deficit(queue), queue });
            }
        }
    }

    /// Whether the job's gang would go above its queue's guarantee (on the model-independent
    /// part of its request); jobs the quota refuses anyway are not deferred.
    fn would_borrow(&self, job: &Job) -> bool {
        let lb = lower_bound(job, &replica_targets(job));
        matches!(self.usage.admit(&self.input.queues, job.queue, job.priority, &lb, true), Ok(Admission::Borrowing))
    }

    fn started(&self, job: JobId) -> bool {
        self.held.get(&job).is_some_and(|h| h.new)
    }

    fn past(&self, q: QueueId) -> f64 {
        self.past_share.get(&q).copied().unwrap_or(0.0)
    }

    fn deficit(&self, q: QueueId) -> f64 {
        match self.shares.get(&q) {
            Some(s) => s.with_usage(&self.usage.queue(q), &self.capacity, self.past(q), &self.cfg.fair_share).deficit,
            None => 0.0,
        }
    }

    /// Makes a reservation's nodes unschedulable for the rest of the cycle. Masks stay on (a
    /// job that may backfill lifts them for its own attempt only), so that a cycle with many
    /// reservations does not toggle every reserved node for every job.
    fn add_reservation(&mut self, r: Reservation) {
        for &n in &r.nodes {
            if self.cluster.node(n).healthy {
                self.cluster.set_node_health(n, false);
                self.masked.insert(n);
            }
        }
        self.reservations.push(r);
    }

    /// Holds what a waiting preemptor will use once its victims are gone: its nodes (no other
    /// job may use them) and its quota (counted in its queue's usage now, so that a smaller job
    /// of the same queue cannot take the room the evictions make and be evicted in turn).
    fn hold_for_preemptor(&mut self, job: &Job, hold: Hold) {
        self.usage.add(job.queue, job.priority, &hold.usage);
        self.add_reservation(Reservation { job: job.id, nodes: hold.nodes, kind: ReservationKind::Preemption });
    }

    /// Masked nodes of backfill reservations, less those another reservation holds; with
    /// `ends_at`, only reservations the job leaves in time (`None`: every backfill reservation).
    fn backfill_nodes(&self, job: JobId, ends_at: Option<u64>) -> Vec<NodeId> {
        let mut open = BTreeSet::new();
        let mut held = BTreeSet::new();
        for r in self.reservations.iter().filter(|r| r.job != job) {
            match (r.kind, ends_at) {
                (ReservationKind::Backfill { earliest_start }, Some(end)) if end <= earliest_start => {
                    open.extend(r.nodes.iter().copied())
                }
                (ReservationKind::Backfill { .. }, None) => open.extend(r.nodes.iter().copied()),
                _ => held.extend(r.nodes.iter().copied()),
            }
        }
        open.difference(&held).copied().filter(|n| self.masked.contains(n)).collect()
    }

    /// Counts masked nodes as reserved, not unhealthy, in an explanation.
    fn relabel(&self, u: Unplaced) -> Unplaced {
        match u {
            Unplaced::NoFit { task, placed, needed, mut nodes } => {
                let unhealthy = nodes.counts.get(&FilterReason::NodeUnhealthy).copied().unwrap_or(0);
                let reserved = unhealthy.min(self.masked.len() as u32);
                if reserved > 0 {
                    if unhealthy == reserved {
                        nodes.counts.remove(&FilterReason::NodeUnhealthy);
                    } else {
                        nodes.counts.insert(FilterReason::NodeUnhealthy, unhealthy - reserved);
                    }
                    nodes.counts.insert(FilterReason::Reserved, reserved);
                }
                Unplaced::NoFit { task, placed, needed, nodes }
            }
            other => other,
        }
    }

    /// One pending job: place it, or plan a preemption, or reserve, and record why it waits.
    /// `old_victims` are evictions already in flight for it.
    fn consider(&mut self, job: &'a Job, old_victims: Vec<JobId>) {
        if let Err(e) = job.validate() {
            self.cancel(job.id, &old_victims);
            self.unplaced.insert(job.id, Unplaced::Invalid { reason: e.to_string() });
            return;
        }
        let shape = format!(
            "{:?}",
            (
                job.queue,
                job.priority,
                job.preemptible,
                job.max_runtime_s,
                &job.tasks,
                job.gang_size(),
                job.elastic,
                &job.node_selector,
                &job.tolerations
            )
        );
        if old_victims.is_empty() {
            if let Some(u) = self.failed_shapes.get(&shape) {
                self.unplaced.insert(job.id, u.clone());
                return;
            }
        }
        let fail = match self.try_place(job) {
            Ok(()) => {
                self.cancel(job.id, &old_victims);
                return;
            }
            Err(f) => f,
        };
        if let Fail::Reserved(behind) = fail {
            self.cancel(job.id, &old_victims);
            let unplaced = Unplaced::Reserved { behind: behind.0 };
            if old_victims.is_empty() {
                self.failed_shapes.insert(shape, unplaced.clone());
            }
            self.unplaced.insert(job.id, unplaced);
            return;
        }
        // Still waiting for victims, and they are still enough: keep waiting.
        if !old_victims.is_empty() {
            if let Some(hold) = self.fits_without(job, &old_victims) {
                self.hold_for_preemptor(job, hold);
                self.unplaced
                    .insert(job.id, Unplaced::AwaitingEviction { victims: old_victims.iter().map(|v| v.0).collect() });
                return;
            }
            for v in &old_victims {
                self.evicting.remove(v);
            }
        }
        let preemptable = match &fail {
            Fail::Capacity(Unplaced::NoFit { .. }) => true,
            Fail::Quota(QuotaViolation::UnknownQueue(_)) => false,
            Fail::Quota(_) => true,
            _ => false,
        };
        let plan = if self.cfg.preemption && preemptable { Some(self.plan(job, &fail)) } else { None };
        match plan {
            Some(Ok((victims, hold))) => {
                for v in old_victims.iter().filter(|v| !victims.contains(v) && !self.left.contains(v)) {
                    self.decisions.push(Decision::CancelEviction { job: *v, preemptor: job.id });
                }
                for v in &victims {
                    self.evicting.insert(*v, job.id);
                    if !old_victims.contains(v) {
                        self.decisions.push(Decision::Evict {
                            job: *v,
                            preemptor: job.id,
                            grace_s: self.cfg.eviction_grace_s,
                        });
                    }
                }
                self.hold_for_preemptor(job, hold);
                self.unplaced
                    .insert(job.id, Unplaced::AwaitingEviction { victims: victims.iter().map(|v| v.0).collect() });
            }
            plan => {
                self.cancel(job.id, &old_victims);
                let unplaced = match (fail, plan) {
                    (Fail::Capacity(fit), Some(Err(why))) => Unplaced::NoPreemptionPlan { fit: Box::new(fit), why },
                    (Fail::Capacity(fit), _) => fit,
                    (Fail::Quota(v), _) => {
                        let (queue, resource) = v.describe();
                        Unplaced::QueueLimit { queue, resource }
                    }
                    (Fail::Reserved(b), _) => Unplaced::Reserved { behind: b.0 },
                };
                if matches!(unplaced, Unplaced::NoFit { .. } | Unplaced::NoPreemptionPlan { .. }) {
                    self.reserve(job);
                }
                // Capacity and quota only shrink during a cycle: the same shape fails the same way.
                if old_victims.is_empty() {
                    self.failed_shapes.insert(shape, unplaced.clone());
                }
                self.unplaced.insert(job.id, unplaced);
            }
        }
    }

    fn cancel(&mut self, preemptor: JobId, victims: &[JobId]) {
        for v in victims {
            self.evicting.remove(v);
            if !self.left.contains(v) {
                self.decisions.push(Decision::CancelEviction { job: *v, preemptor });
            }
        }
    }

    /// Places a job on the cycle's cluster (outside reservations it may not use) and records
    /// the start. On failure nothing changes.
    fn try_place(&mut self, job: &'a Job) -> Result<(), Fail> {
        let demands = resolve(job, self.cluster.models()).map_err(Fail::Capacity)?;
        let req = replica_targets(job);
        let queues = &self.input.queues;
        // Cheap check first: the model-independent part of the quota.
        self.usage
            .admit(queues, job.queue, job.priority, &lower_bound(job, &req), job.preemptible)
            .map_err(Fail::Quota)?;
        let lifted = self.backfill_nodes(job.id, job.max_runtime_s.map(|m| self.input.now.saturating_add(m)));
        set_health(&mut self.cluster, &lifted, true);
        let result = place_admitted(
            &self.placer,
            &mut self.cluster,
            &self.usage,
            queues,
            job,
            &demands,
            &req,
            false,
            Explain::Yes,
        );
        // Only the gang now: extra replicas (elastic or beyond `min_members`) are best effort and
        // come in the growth step, after every pending job had its turn, folded into the Start.
        let result = result.map(|(placed, delta, _)| {
            self.usage.add(job.queue, job.priority, &delta);
            placed
        });
        set_health(&mut self.cluster, &lifted, false);
        match result {
            Ok(placed) => {
                let usage = ResourceVector::of_allocations(&self.cluster, placed.iter().map(|p| &p.allocation));
                // As `classify_borrowed` will see it: the queue's work of at least this priority,
                // this job included, goes past the guarantee.
                let borrowed = queues
                    .queue(job.queue)
                    .is_some_and(|q| !self.usage.at_or_above(job.queue, job.priority).within_guarantee(&q.guarantee));
                self.decisions.push(Decision::Start { job: job.id, replicas: placed.clone(), borrowed });
                self.borrowed = None;
                self.held.insert(
                    job.id,
                    Held { job, replicas: placed, started_at: self.input.now, privileged: false, usage, new: true },
                );
                Ok(())
            }
            Err(Fail::Capacity(u)) => {
                // Would it fit without the backfill reservations? Then it waits behind one.
                let reserved = self.backfill_nodes(job.id, None);
                if !reserved.is_empty() {
                    set_health(&mut self.cluster, &reserved, true);
                    let trial = place_admitted(
                        &self.placer,
                        &mut self.cluster,
                        &self.usage,
                        queues,
                        job,
                        &demands,
                        &req,
                        false,
                        Explain::No,
                    );
                    let behind = trial.ok().map(|(placed, _, _)| {
                        release_all(&mut self.cluster, &placed);
                        self.reservations
                            .iter()
                            .find(|r| placed.iter().any(|p| r.nodes.contains(&p.allocation.node)))
                            .map_or(job.id, |r| r.job)
                    });
                    set_health(&mut self.cluster, &reserved, false);
                    if let Some(behind) = behind {
                        return Err(Fail::Reserved(behind));
                    }
                }
                Err(Fail::Capacity(self.relabel(u)))
            }
            Err(e) => Err(e),
        }
    }

    fn held_usage(&self) -> Vec<HeldUsage> {
        self.held
            .iter()
            .map(|(id, h)| HeldUsage {
                job: *id,
                queue: h.job.queue,
                priority: h.job.priority,
                started_at: h.started_at,
                usage: h.usage.clone(),
            })
            .collect()
    }

    /// Runs `f` with a probe on the cycle's own cluster and usage (reserved nodes masked).
    /// Everything the probe changes is undone before this returns, so no copy is needed.
    fn with_probe<R>(
        &mut self,
        job: &'a Job,
        candidates: impl Iterator<Item = JobId>,
        f: impl FnOnce(&mut CycleProbe<'_>) -> R,
    ) -> Option<R> {
        let demands = resolve(job, self.cluster.models()).ok()?;
        let held = &self.held;
        let victims = candidates.map(|id| (id, &held[&id])).collect();
        let mut probe = CycleProbe {
            placer: &self.placer,
            queues: &self.input.queues,
            cluster: &mut self.cluster,
            usage: &mut self.usage,
            job,
            req: replica_targets(job),
            demands,
            victims,
            removed: Vec::new(),
            hold: Hold::default(),
        };
        let result = f(&mut probe);
        while let Some(v) = probe.removed.last().copied() {
            probe.restore(v);
        }
        Some(result)
    }

    /// The nodes the job would use if `victims` were gone, if it fits then.
    fn fits_without(&mut self, job: &'a Job, victims: &[JobId]) -> Option<Hold> {
        self.with_probe(job, victims.iter().copied(), |probe| {
            for v in victims {
                probe.remove(*v);
            }
            probe.fits(false).then(|| probe.hold.clone())
        })
        .flatten()
    }

    /// Plans a preemption for a job that did not fit: the victims and the nodes it would use.
    fn plan(&mut self, job: &'a Job, fail: &Fail) -> Result<(Vec<JobId>, Hold), PreemptionFailure> {
        let queues = &self.input.queues;
        let now = self.input.now;
        let Ok(demands) = resolve(job, self.cluster.models()) else {
            return Err(PreemptionFailure::InsufficientEvenIfAllEvicted);
        };
        let quota_failure = matches!(fail, Fail::Quota(_));
        let project = queues.project_of(job.queue);
        let guarantee = queues.queue(job.queue).map(|q| q.guarantee.clone()).unwrap_or_default();
        let within_guarantee =
            self.usage.queue(job.queue).plus(&lower_bound(job, &replica_targets(job))).within_guarantee(&guarantee);
        let preemptor = Preemptor { job: job.id, queue: job.queue, project, priority: job.priority, within_guarantee };
        if self.borrowed.is_none() {
            self.borrowed = Some(classify_borrowed(queues, &self.held_usage()));
        }
        let borrowed = self.borrowed.as_ref().expect("computed above");
        let gpu_demands: Vec<&Demand> = demands.iter().filter(|d| d.gpus > 0).collect();
        let relevant = |h: &Held<'_>| -> bool {
            if quota_failure {
                return queues.project_of(h.job.queue) == project;
            }
            h.replicas.iter().any(|p| {
                let node = self.cluster.node(p.allocation.node);
                if gpu_demands.is_empty() {
                    p.allocation.cpu_milli > 0 || p.allocation.memory_mib > 0
                } else {
                    p.allocation
                        .devices
                        .iter()
                        .any(|d| gpu_demands.iter().any(|g| g.models.allows(node.gpus[d.gpu as usize].model)))
                }
            })
        };
        let candidates: Vec<VictimInfo> = self
            .held
            .iter()
            .filter(|(id, h)| !h.new && !self.evicting.contains_key(id) && **id != job.id && relevant(h))
            .map(|(id, h)| VictimInfo {
                job: *id,
                queue: h.job.queue,
                project: queues.project_of(h.job.queue),
                priority: h.job.priority,
                preemptible: h.job.preemptible,
                privileged: h.privileged,
                borrowed: borrowed.contains(id),
                started_at: h.started_at,
                min_runtime_s: h.job.min_runtime_s,
                gpu_milli: h.usage.get(&ResourceKey::Gpus),
            })
            .collect();
        let eligible = eligible_victims(&preemptor, &candidates, now)?;
        let reclaim = |victims: &[JobId]| {
            victims.iter().any(|v| eligible.iter().any(|e| e.job == *v && e.ground == crate::preempt::Ground::Reclaim))
        };
        self.with_probe(job, eligible.iter().map(|e| e.job), |probe| {
            let victims = choose_victims(&eligible, probe)?;
            for v in &victims {
                probe.remove(*v);
            }
            if !probe.fits(reclaim(&victims)) {
                return Err(PreemptionFailure::InsufficientEvenIfAllEvicted);
            }
            Ok((victims, probe.hold.clone()))
        })
        .unwrap_or(Err(PreemptionFailure::InsufficientEvenIfAllEvicted))
    }

    /// Reserves, for a blocked gang, the nodes it would use once enough running jobs end (those
    /// with the earliest known end first); the reservation may start no earlier than the last
    /// of those ends.
    fn reserve(&mut self, job: &'a Job) {
        let bf = self.cfg.backfill;
        let backfills = self.reservations.iter().filter(|r| matches!(r.kind, ReservationKind::Backfill { .. })).count();
        if backfills >= bf.max_reservations || job.priority < bf.min_priority {
            return;
        }
        let Ok(demands) = resolve(job, self.cluster.models()) else { return };
        let req = replica_targets(job);
        let now = self.input.now;
        let grace = self.cfg.eviction_grace_s;
        let mut ending: Vec<(u64, JobId, Option<u64>)> = self
            .held
            .iter()
            .map(|(id, h)| {
                let end = if self.evicting.contains_key(id) {
                    Some(self.evicting_since.get(id).copied().unwrap_or(now).saturating_add(grace))
                } else {
                    h.job.max_runtime_s.map(|m| h.started_at.saturating_add(m))
                };
                (end.unwrap_or(u64::MAX), *id, end)
            })
            .collect();
        ending.sort_unstable();
        // Reserved nodes are masked on the cycle's cluster: reservations never overlap.
        let base = self.cluster.clone();
        let try_after = |k: usize| -> Option<BTreeSet<NodeId>> {
            let mut c = base.clone();
            for (_, id, _) in &ending[..k] {
                for p in &self.held[id].replicas {
                    c.release(&p.allocation).expect("a held allocation is on the cluster");
                }
            }
            let placed = place_required(&self.placer, &mut c, job, &demands, &req, Explain::No).ok()?;
            Some(placed.iter().map(|p| p.allocation.node).collect())
        };
        let n = ending.len();
        if try_after(n).is_none() {
            return;
        }
        // Smallest prefix of ending jobs after which the gang fits (more released never hurts).
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if try_after(mid).is_some() {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let Some(nodes) = try_after(hi) else { return };
        let earliest_start = ending[..hi].iter().filter_map(|(_, _, end)| *end).fold(now, u64::max);
        self.add_reservation(Reservation { job: job.id, nodes, kind: ReservationKind::Backfill { earliest_start } });
    }

    /// Grows running jobs below their target (elastic up to max, replicas beyond `min_members`)
    /// on the capacity the pending jobs left, highest priority first. Jobs started in this cycle
    /// get their extra replicas here too, inside their `Start`.
    fn grow(&mut self) {
        let mut ids: Vec<(std::cmp::Reverse<i32>, u64, JobId)> = self
            .held
            .iter()
            .filter(|(id, h)| {
                !self.evicting.contains_key(id) && {
                    let targets = replica_targets(h.job);
                    targets
                        .iter()
                        .enumerate()
                        .any(|(i, &(_, t))| (h.replicas.iter().filter(|p| p.task == i).count() as u32) < t)
                }
            })
            .map(|(id, h)| (std::cmp::Reverse(h.job.priority), h.started_at, *id))
            .collect();
        ids.sort_unstable();
        for (_, _, id) in ids {
            let job = self.held[&id].job;
            let Ok(demands) = resolve(job, self.cluster.models()) else { continue };
            let targets = replica_targets(job);
            let have = self.held[&id].replicas.clone();
            let added = place_extras(
                &self.placer,
                &mut self.cluster,
                &mut self.usage,
                &self.input.queues,
                job,
                &demands,
                &have,
                &targets,
            );
            if !added.is_empty() {
                let delta = ResourceVector::of_allocations(&self.cluster, added.iter().map(|p| &p.allocation));
                let h = self.held.get_mut(&id).expect("listed above");
                h.usage.add(&delta);
                h.replicas.extend(added.iter().cloned());
                self.borrowed = None;
                let start = self.decisions.iter_mut().find_map(|d| match d {
                    Decision::Start { job, replicas, .. } if *job == id => Some(replicas),
                    _ => None,
                });
                match start {
                    // Started in this cycle: one decision with every replica.
                    Some(replicas) => replicas.extend(added),
                    None => self.decisions.push(Decision::Grow { job: id, replicas: added }),
                }
            }
        }
    }
}

/// The preemption probe: victims are released on the cycle's cluster and usage, the preemptor
/// is placed and rolled back; `with_probe` gives back whatever is still removed at the end.
struct CycleProbe<'c> {
    placer: &'c Placer<'c>,
    queues: &'c Queues,
    cluster: &'c mut Cluster,
    usage: &'c mut Usage,
    job: &'c Job,
    demands: Vec<Demand>,
    req: Vec<(u32, u32)>,
    victims: BTreeMap<JobId, &'c Held<'c>>,
    removed: Vec<JobId>,
    /// What the last placement that fitted used.
    hold: Hold,
}

impl Probe for CycleProbe<'_> {
    fn remove(&mut self, victim: JobId) {
        let h = self.victims[&victim];
        for p in &h.replicas {
            self.cluster.release(&p.allocation).expect("a victim's allocation is on the cluster");
        }
        self.usage.sub(h.job.queue, h.job.priority, &h.usage);
        self.removed.push(victim);
    }

    fn restore(&mut self, victim: JobId) {
        let h = self.victims[&victim];
        for p in &h.replicas {
            force_allocate(self.cluster, &p.allocation);
        }
        self.usage.add(h.job.queue, h.job.priority, &h.usage);
        self.removed.retain(|v| *v != victim);
    }

    fn fits(&mut self, within_guarantee: bool) -> bool {
        if !may_fit(self.cluster, &self.demands, &self.req) {
            return false;
        }
        match place_admitted(
            self.placer,
            self.cluster,
            self.usage,
            self.queues,
            self.job,
            &self.demands,
            &self.req,
            within_guarantee,
            Explain::No,
        ) {
            Ok((placed, usage, _)) => {
                self.hold = Hold { nodes: placed.iter().map(|p| p.allocation.node).collect(), usage };
                release_all(self.cluster, &placed);
                true
            }
            Err(_) => false,
        }
    }
}

/// A cheap necessary condition for the gang to fit, from the capacity index alone: enough
/// whole free GPUs of an allowed model, counted per node in multiples of a replica's GPUs, for
/// every whole-GPU task; a device with room for every fractional task. A failed placement
/// costs a scan of every node (to explain it); the preemption search asks often, so it asks
/// this first.
fn may_fit(cluster: &Cluster, demands: &[Demand], req: &[(u32, u32)]) -> bool {
    let index = cluster.index();
    demands.iter().zip(req).all(|(d, &(required, _))| {
        if required == 0 || d.gpus == 0 {
            return true;
        }
        let models: Vec<_> =
            if d.models.is_any() { cluster.models().ids().collect() } else { d.models.iter().collect() };
        if d.is_fractional() {
            return models.iter().any(|&m| index.max_partial_free(m) >= d.milli || index.max_whole_on_one_node(m) > 0);
        }
        let k = d.gpus.min(u16::MAX as u32) as u16;
        let mut replicas = 0u64;
        for &m in &models {
            for (free, _) in index.nodes_with_whole(m, k) {
                replicas += (free / k) as u64;
                if replicas >= required as u64 {
                    return true;
                }
            }
        }
        false
    })
}
