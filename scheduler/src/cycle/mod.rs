//! The scheduling cycle: `schedule(input, config) -> Decisions`, a pure function of a snapshot.
//!
//! [`schedule`] reads as its phases, one module each, with what each leaves true checked after
//! it in debug builds ([`checks`]: no device above 1000 milli, every started gang whole, no
//! limit newly exceeded), as quickwit's `solve()` checks its post-conditions after each step.
//! README.md explains the order:
//! 1. [`evictions`]: evictions in flight are cancelled when their preemptor is gone or already
//!    running; the remaining preemptors (privileged) go first.
//! 2. [`queues`]: queues by fair-share deficit (weighted DRF), jobs by priority then age; jobs
//!    that stay inside their guarantee go first, then those that borrow. Each job is
//!    [`start`]ed: its gang placed all-or-nothing (`min_members`, or the elastic minimum, with
//!    the placement primitives of [`gang`]) and its queue's, project's and tenant's limits and
//!    the borrowing rules checked on the actual placement. A gang that does not fit only
//!    because free capacity is scattered gets room by [`consolidation`] (running jobs that fit
//!    again at once elsewhere get `Move`); a job that does not fit plans a [`preemption`] if it
//!    is entitled (victims get `Evict` with a grace period; the preemptor waits with its nodes
//!    held), or else the highest-ranked blocked gang reserves the nodes it
//!    would use once running jobs end, which later jobs may use only if they end before it
//!    could start ([`backfill`]).
//! 3. [`growth`]: extra replicas (elastic up to max, beyond `min_members`) grow on what is left.
//!
//! The cycle owns no state between calls: usage, borrowed status, reservations and shares are
//! derived from the input every time. The only memory is the input's in-flight evictions.
//! Input checks are [`input`]'s.

mod backfill;
mod checks;
mod consolidation;
mod evictions;
mod gang;
mod growth;
mod input;
mod preemption;
mod queues;
mod start;

use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::{Cluster, NodeId, ReplicaAllocation};
use crate::demand::Demand;
use crate::explain::Unplaced;
use crate::fairshare::{
    dominant_share, effective_share, hierarchical_fair_shares, FairShareConfig, PastUsage, QueueDemand, QueueShare,
    TreeShares,
};
use crate::job::{Job, JobId, QueueId};
use crate::place::Placer;
use crate::queue::{HeldUsage, ProjectId, Queues, QuotaViolation, ResourceKey, ResourceVector, TenantId, Usage};
use crate::score::{Policy, TypicalDemand, TYPICAL_COVERAGE_PCT};
use gang::lower_bound;
pub use input::InputError;

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InFlightEviction {
    pub victim: JobId,
    pub preemptor: JobId,
    /// When the eviction was decided.
    pub since: u64,
    /// The victim has no live replica any more (it may still hold capacity while torn down):
    /// such an eviction is never cancelled, only waited for. For a shrink: none of the
    /// replicas it gives back is live any more.
    pub victim_left: bool,
    /// A shrink ([`Decision::Shrink`]): the replicas the victim gives back that still hold
    /// capacity. Empty: the whole job is evicted.
    pub replicas: Vec<PlacedReplica>,
    /// Whether this is a shrink (the victim keeps running on its other replicas).
    pub shrink: bool,
    /// Whether this is a move ([`Decision::Move`]: consolidation).
    pub moved: bool,
}

impl InFlightEviction {
    /// Brings a shell's evictions in flight up to date with one cycle's `decisions`, taken at
    /// `now`, once the shell has applied its starts (`pending`: whether a job still waits).
    /// Evictions, moves and shrinks start one (a shrink replaces what was in flight for its
    /// job; an eviction replaces a shrink that no longer sufficed), a cancellation ends its
    /// own, and an eviction is over once its preemptor runs or is gone, or its victim runs
    /// again. The shells without a book of their own (the replay in time, the tests) share
    /// these rules here; the cluster agent derives its evictions from its book.
    pub fn track(
        evictions: &mut Vec<InFlightEviction>,
        decisions: &Decisions,
        now: u64,
        pending: impl Fn(JobId) -> bool,
    ) {
        for decision in &decisions.decisions {
            let started = |victim, preemptor, replicas: &[PlacedReplica], shrink, moved| InFlightEviction {
                victim,
                preemptor,
                since: now,
                victim_left: false,
                replicas: replicas.to_vec(),
                shrink,
                moved,
            };
            match decision {
                Decision::Evict { job, preemptor, .. } | Decision::Move { job, preemptor, .. } => {
                    evictions.retain(|e| !(e.victim == *job && e.shrink));
                    assert!(!evictions.iter().any(|e| e.victim == *job), "job {job:?} is evicted twice");
                    let moved = matches!(decision, Decision::Move { .. });
                    evictions.push(started(*job, *preemptor, &[], false, moved));
                }
                Decision::Shrink { job, replicas, preemptor, .. } => {
                    evictions.retain(|e| e.victim != *job);
                    evictions.push(started(*job, *preemptor, replicas, true, false));
                }
                Decision::CancelEviction { job, preemptor } => {
                    evictions.retain(|e| !(e.victim == *job && e.preemptor == *preemptor));
                }
                Decision::Start { .. } | Decision::Grow { .. } => {}
            }
        }
        let restarted: BTreeSet<JobId> = decisions.starts().map(|(j, _)| j).collect();
        evictions.retain(|e| pending(e.preemptor) && !restarted.contains(&e.victim));
    }
}

/// Nodes kept for a job that is not placed yet: the control plane evicted work on them to make
/// room for it (its dispatch may not have arrived). No other job may use them; the job itself
/// may. The shell drops a hold when its job starts or the hold expires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapacityHold {
    pub job: JobId,
    pub nodes: BTreeSet<NodeId>,
}

/// Everything one cycle looks at. `cluster` already holds the allocations of `running`.
#[derive(Clone, Debug)]
pub struct SchedulerInput {
    pub cluster: Cluster,
    pub queues: Queues,
    pub running: Vec<RunningJob>,
    pub pending: Vec<Job>,
    pub evictions: Vec<InFlightEviction>,
    /// Capacity kept for jobs the control plane evicted work for.
    pub holds: Vec<CapacityHold>,
    /// Decayed past usage per queue (only read when `FairShareConfig::half_life_s` is set).
    pub past_usage: BTreeMap<QueueId, PastUsage>,
    /// Moves ([`Decision::Move`]) decided in the last hour, the window of
    /// [`ConsolidationConfig::max_moves_per_hour`]: the shell counts them.
    pub recent_moves: u32,
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

/// Consolidation ([`consolidation`]): moving running work to make room for a gang that waits
/// only because free capacity is scattered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsolidationConfig {
    /// The disruption budget: at most this many jobs of one queue are being moved at once
    /// (0 turns consolidation off).
    pub max_moves_per_queue: u32,
    /// The rate limit: at most this many moves in an hour in the cluster.
    pub max_moves_per_hour: u32,
}

impl ConsolidationConfig {
    pub const OFF: ConsolidationConfig = ConsolidationConfig { max_moves_per_queue: 0, max_moves_per_hour: 0 };
}

impl Default for ConsolidationConfig {
    fn default() -> Self {
        ConsolidationConfig { max_moves_per_queue: 2, max_moves_per_hour: 12 }
    }
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
    pub consolidation: ConsolidationConfig,
    /// Interference-aware sharing: a share goes only to a device whose measured busy %, with
    /// the share's expected load added, stays at or under this limit, unless the device holds
    /// no work yet (`Demand::would_crowd`). `None`: shares go wherever the books allow.
    pub sharing_busy_limit_pct: Option<u8>,
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
            consolidation: ConsolidationConfig::default(),
            sharing_busy_limit_pct: Some(DEFAULT_SHARING_BUSY_LIMIT_PCT),
        }
    }
}

/// The default of [`SchedulerConfig::sharing_busy_limit_pct`]: shared GPUs kept under about
/// 70 % busy limit how much co-located work slows each other down.
pub const DEFAULT_SHARING_BUSY_LIMIT_PCT: u8 = 70;

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
    /// Stop these replicas of a running elastic job after `grace_s` seconds, to make room for
    /// `preemptor`: the job keeps running on the rest (never fewer than its minimum) and grows
    /// back when capacity returns. Replaces a shrink of the same job in flight.
    Shrink { job: JobId, replicas: Vec<PlacedReplica>, preemptor: JobId, grace_s: u64 },
    /// Stop a whole running job after `grace_s` seconds (its checkpoint handshake first) so that
    /// `preemptor`, a gang that waits only because free capacity is scattered, gets the nodes
    /// it frees (consolidation). The job fits again at once elsewhere in the cluster: the shell
    /// requeues it as it does an evicted one, and it resumes (from its checkpoint).
    Move { job: JobId, preemptor: JobId, grace_s: u64 },
    /// An eviction or shrink in flight is no longer needed (its preemptor is placed, gone, or
    /// fits elsewhere).
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

    /// The elastic jobs shrunk in this cycle, with the replicas they give back.
    pub fn shrinks(&self) -> impl Iterator<Item = (JobId, &[PlacedReplica])> {
        self.decisions.iter().filter_map(|d| match d {
            Decision::Shrink { job, replicas, .. } => Some((*job, replicas.as_slice())),
            _ => None,
        })
    }

    pub fn evictions(&self) -> impl Iterator<Item = (JobId, JobId)> + '_ {
        self.decisions.iter().filter_map(|d| match d {
            Decision::Evict { job, preemptor, .. } => Some((*job, *preemptor)),
            _ => None,
        })
    }

    /// The jobs moved in this cycle (consolidation), with the gang each makes room for.
    pub fn moves(&self) -> impl Iterator<Item = (JobId, JobId)> + '_ {
        self.decisions.iter().filter_map(|d| match d {
            Decision::Move { job, preemptor, .. } => Some((*job, *preemptor)),
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
    let pending = cycle.pending_jobs();
    cycle.keep_holds();
    cycle.settle_evictions(&pending);
    cycle.check(checks::Phase::Evictions);
    cycle.serve_pending(&pending);
    cycle.check(checks::Phase::Queues);
    cycle.grow();
    cycle.check(checks::Phase::Growth);
    cycle.finish()
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

/// Fair shares over one capacity (the cluster, or one node pool) at every level of the
/// hierarchy, with each level's decayed past share over the same capacity.
struct ShareView {
    capacity: ResourceVector,
    tree: TreeShares,
    past_queues: BTreeMap<QueueId, f64>,
    past_projects: BTreeMap<ProjectId, f64>,
    past_tenants: BTreeMap<TenantId, f64>,
}

impl ShareView {
    fn new(input: &SchedulerInput, capacity: ResourceVector, demands: &[QueueDemand], fs: &FairShareConfig) -> Self {
        let tree = hierarchical_fair_shares(&capacity, &input.queues, demands, fs, input.now);
        let (mut past_queues, mut past_projects, mut past_tenants) =
            (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        if let Some(h) = fs.half_life_s {
            // Decayed amounts add up: a level's past is its queues' pasts together.
            let mut projects: BTreeMap<ProjectId, BTreeMap<ResourceKey, f64>> = BTreeMap::new();
            let mut tenants: BTreeMap<TenantId, BTreeMap<ResourceKey, f64>> = BTreeMap::new();
            for (q, past) in &input.past_usage {
                past_queues.insert(*q, past.dominant_share(&capacity, input.now, h));
                let Some(project) = input.queues.project_of(*q) else { continue };
                let tenant = input.queues.project(project).tenant;
                for (k, v) in past.decayed(input.now, h) {
                    *projects.entry(project).or_default().entry(k.clone()).or_default() += v;
                    *tenants.entry(tenant).or_default().entry(k).or_default() += v;
                }
            }
            let share = |amounts: BTreeMap<ResourceKey, f64>| {
                PastUsage { amounts, as_of: input.now }.dominant_share(&capacity, input.now, h)
            };
            past_projects = projects.into_iter().map(|(p, a)| (p, share(a))).collect();
            past_tenants = tenants.into_iter().map(|(t, a)| (t, share(a))).collect();
        }
        ShareView { capacity, tree, past_queues, past_projects, past_tenants }
    }
}

/// Share views inside each node pool some pending job prefers (names first): the pool's GPUs
/// shared among the queues with usage or such demand there, each queue by its weight in that
/// pool (Run:ai's over-quota weight per node pool), tenants and projects by theirs.
fn pool_share_views(
    input: &SchedulerInput,
    usage: &Usage,
    capacity: &ResourceVector,
    fs: &FairShareConfig,
) -> BTreeMap<String, ShareView> {
    let mut wanted: BTreeMap<&str, BTreeMap<QueueId, u64>> = BTreeMap::new();
    for j in &input.pending {
        if let Some(pool) = j.pools.first() {
            let gpu = lower_bound(j, &replica_targets(j)).get(&ResourceKey::Gpus);
            *wanted.entry(pool.as_str()).or_default().entry(j.queue).or_default() += gpu;
        }
    }
    let mut out = BTreeMap::new();
    for (pool, pending) in wanted {
        let key = ResourceKey::pool(pool);
        let cap = capacity.get(&key);
        if cap == 0 {
            continue;
        }
        let pool_capacity = ResourceVector::new().with(key.clone(), cap);
        let demands: Vec<QueueDemand> = input
            .queues
            .queues()
            .filter_map(|q| {
                let held = usage.queue(q.id).get(&key);
                let more = pending.get(&q.id).copied().unwrap_or(0);
                (held + more > 0).then(|| QueueDemand {
                    queue: q.id,
                    weight: q.weight_in(pool),
                    usage: ResourceVector::new().with(key.clone(), held),
                    demand: ResourceVector::new().with(key.clone(), held + more),
                    past: input.past_usage.get(&q.id).cloned(),
                })
            })
            .collect();
        out.insert(pool.to_string(), ShareView::new(input, pool_capacity, &demands, fs));
    }
    out
}

/// Tenants' and projects' deficits computed at one usage generation, per share view (by its
/// address: views live as long as the cycle): every turn ranks its queue's levels, and between
/// two starts they do not change.
#[derive(Default)]
struct LevelDeficits {
    generation: usize,
    tenants: BTreeMap<(usize, TenantId), f64>,
    projects: BTreeMap<(usize, ProjectId), f64>,
}

/// The order of queues' turns: the tenant furthest below its fair share first, inside it the
/// project furthest below, inside that the queue (deficits: fair minus effective share). Ties
/// go to the lower id at each level, so that a level's turns stay together.
#[derive(Clone, Copy, Debug, PartialEq)]
struct TurnRank {
    tenant: (f64, TenantId),
    project: (f64, ProjectId),
    queue: f64,
}

impl TurnRank {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let level = |a: f64, b: f64| a.total_cmp(&b);
        level(self.tenant.0, other.tenant.0)
            .then_with(|| other.tenant.1.cmp(&self.tenant.1))
            .then_with(|| level(self.project.0, other.project.0))
            .then_with(|| other.project.1.cmp(&self.project.1))
            .then_with(|| level(self.queue, other.queue))
    }
}

/// Whether a failed placement should say why. Explaining scans every node; the preemption
/// search and reservations only need to know whether it fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Explain {
    Yes,
    No,
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

struct Cycle<'a> {
    input: &'a SchedulerInput,
    cfg: &'a SchedulerConfig,
    placer: Placer<'a>,
    cluster: Cluster,
    usage: Usage,
    /// Fair shares across the cluster.
    view: ShareView,
    /// Per node pool that pending jobs prefer: fair shares of its GPUs, by the queues' weights
    /// in that pool.
    pool_views: BTreeMap<String, ShareView>,
    /// The hierarchy has more than one project with queues: levels above queues rank turns.
    levels_matter: bool,
    /// Tenants' and projects' deficits since usage last changed (see `turn_rank`).
    level_deficits: std::cell::RefCell<LevelDeficits>,
    held: BTreeMap<JobId, Held<'a>>,
    /// Victim -> preemptor, for evictions in flight and decided now.
    evicting: BTreeMap<JobId, JobId>,
    /// Victim -> when its eviction was decided.
    evicting_since: BTreeMap<JobId, u64>,
    /// Victims with no live replica left: waited for, never cancelled.
    left: BTreeSet<JobId>,
    /// Victims that are moved (consolidation) rather than evicted: in flight and decided now.
    moving: BTreeSet<JobId>,
    /// Moves decided in this cycle (the rate limit counts them with the input's recent ones).
    moves_now: u32,
    /// Victims that are shrunk rather than evicted, with the replicas (indices into their held
    /// replicas) they give back.
    cut: BTreeMap<JobId, Vec<u32>>,
    reservations: Vec<Reservation>,
    /// Nodes given to each spread group's members in this cycle.
    spread_placed: BTreeMap<String, Vec<String>>,
    /// Running jobs above their queue's guarantee; computed when first needed, dropped whenever
    /// a job starts or grows.
    borrowed: Option<BTreeSet<JobId>>,
    /// Nodes made unschedulable on `cluster` because a reservation holds them.
    masked: BTreeSet<NodeId>,
    /// Shapes of jobs that could not start and found no preemption plan: the same shape fails
    /// again in this cycle, without another placement, explanation and plan.
    failed_shapes: BTreeMap<String, Unplaced>,
    /// Shapes of gangs for which no moves make room, in this cycle.
    no_moves: BTreeSet<String>,
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
        let pool_views = pool_share_views(input, &usage, &capacity, fs);
        let view = ShareView::new(input, capacity, &demands, fs);
        let levels_matter = input.queues.queues().map(|q| q.project).collect::<BTreeSet<ProjectId>>().len() > 1;
        Cycle {
            input,
            cfg,
            placer: Placer { policy: &cfg.policy, workload: &cfg.workload },
            cluster,
            usage,
            view,
            pool_views,
            levels_matter,
            level_deficits: Default::default(),
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
            moving: BTreeSet::new(),
            moves_now: 0,
            cut: BTreeMap::new(),
            reservations: Vec::new(),
            spread_placed: BTreeMap::new(),
            masked: BTreeSet::new(),
            borrowed: None,
            failed_shapes: BTreeMap::new(),
            no_moves: BTreeSet::new(),
            decisions: Vec::new(),
            unplaced: BTreeMap::new(),
        }
    }

    /// The pending jobs not already holding capacity, by id.
    fn pending_jobs(&self) -> BTreeMap<JobId, &'a Job> {
        let input = self.input;
        input.pending.iter().filter(|j| !self.held.contains_key(&j.id)).map(|j| (j.id, j)).collect()
    }

    /// The decisions, why the rest waits, the reservations, and the fair shares after the cycle.
    fn finish(self) -> Decisions {
        let view = &self.view;
        let mut shares = view.tree.queues.clone();
        for (q, s) in shares.iter_mut() {
            let past = view.past_queues.get(q).copied().unwrap_or(0.0);
            *s = s.with_usage(&self.usage.queue(*q), &view.capacity, past, &self.cfg.fair_share);
        }
        Decisions { decisions: self.decisions, unplaced: self.unplaced, reservations: self.reservations, shares }
    }

    fn started(&self, job: JobId) -> bool {
        self.held.get(&job).is_some_and(|h| h.new)
    }

    /// The shares a job competes in: its first pool's, when it names one and its queue has a
    /// share there; else the cluster's.
    fn share_view_for(&self, job: &Job) -> &ShareView {
        job.pools
            .first()
            .and_then(|p| self.pool_views.get(p))
            .filter(|v| v.tree.queues.contains_key(&job.queue))
            .unwrap_or(&self.view)
    }

    /// How a queue's turn ranks when `head` is its next job: in the pool the job prefers, by the
    /// weights there, when it names one and the queue has a share there; else across the cluster.
    /// Changes whenever usage may have changed: every start, growth and move is a decision,
    /// every preemptor's hold a reservation.
    fn usage_generation(&self) -> usize {
        self.decisions.len() + self.reservations.len()
    }

    fn turn_rank(&self, q: QueueId, head: Option<&Job>) -> TurnRank {
        let view = head.map_or(&self.view, |j| self.share_view_for(j));
        let fs = &self.cfg.fair_share;
        let queue = view.tree.queues.get(&q).map_or(0.0, |s| {
            let past = view.past_queues.get(&q).copied().unwrap_or(0.0);
            s.with_usage(&self.usage.queue(q), &view.capacity, past, fs).deficit
        });
        let queues = &self.input.queues;
        let Some(project) = queues.project_of(q).filter(|_| self.levels_matter) else {
            return TurnRank { tenant: (0.0, TenantId(0)), project: (0.0, ProjectId(0)), queue };
        };
        let tenant = queues.project(project).tenant;
        let deficit = |fair: Option<&f64>, usage: ResourceVector, past: Option<&f64>| {
            let current = dominant_share(&usage, &view.capacity);
            fair.copied().unwrap_or(0.0) - effective_share(current, past.copied().unwrap_or(0.0), fs)
        };
        let mut cache = self.level_deficits.borrow_mut();
        let generation = self.usage_generation();
        if cache.generation != generation {
            *cache = LevelDeficits { generation, ..LevelDeficits::default() };
        }
        let at = view as *const ShareView as usize;
        let tenant_deficit = *cache.tenants.entry((at, tenant)).or_insert_with(|| {
            deficit(view.tree.tenants.get(&tenant), self.usage.tenant(queues, tenant), view.past_tenants.get(&tenant))
        });
        let project_deficit = *cache.projects.entry((at, project)).or_insert_with(|| {
            deficit(
                view.tree.projects.get(&project),
                self.usage.project(queues, project),
                view.past_projects.get(&project),
            )
        });
        TurnRank { tenant: (tenant_deficit, tenant), project: (project_deficit, project), queue }
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
}
