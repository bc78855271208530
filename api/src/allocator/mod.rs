//! The cross-cluster allocator's decisions: which cluster gets an admitted job, in which
//! order a round dispatches, where a rejected or timed-out job goes next, and which borrowed
//! jobs to evict when a queue within its guarantee waits (DESIGN.md, "Two levels"), and where
//! a job goes that fits only once elastic jobs give back replicas ([`plan_shrink_room`]) or
//! once jobs there move to other nodes ([`plan_consolidation_room`]).
//!
//! Pure: no I/O, no clock (`now` is an argument), no randomness. The allocator loop in the
//! server loads [`ClusterView`]s (agents' Capacity summaries, heartbeat freshness, the
//! reservations it holds) and [`PendingJob`]s from PostgreSQL, calls [`plan_round`] and
//! [`plan_reclaim`], and writes the [`Action`]s and [`Evict`]s (new epoch, reservation row,
//! `XADD grus:{cluster}:cmd`).
//!
//! Fit checks work on the capacity summary, not on nodes (the agent's own grus-scheduler
//! places the gang exactly), so they err towards "does not fit"; see [`fit`]. From
//! grus-scheduler this module reuses the resource units (`MILLI_PER_GPU`); its node-level
//! placement (`place`, `cluster`) needs node inventories that the summary does not carry.

mod consolidate;
mod fair;
mod fit;
mod reclaim;
mod shrink;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use grus_protocol::wire::{CapacitySummary, JobSpec, PoolCapacity, TopologyScope};
use grus_scheduler::resources::MILLI_PER_GPU;

pub use consolidate::{plan_consolidation_room, ConsolidationRoom};
pub use fair::{roll_history, FleetShares, ShareNode, ShareTree};
pub use reclaim::{
    plan_reclaim, plan_reclaim_fair, plan_reclaim_with_evictions, Evict, ReclaimConfig, ReclaimGround, ReclaimRights,
    RunningJob,
};
pub use shrink::{plan_shrink_room, ElasticJob, ShrinkRoom};

use fit::{demand_of, FreeView};

/// GPUs a job takes (or holds) of one model in one cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuTake {
    pub model: String,
    /// Whole GPUs per node: one entry per member, or one for a gang packed on one node.
    pub per_node: Vec<u32>,
    /// Milli per fractional member (each on one device).
    pub shares: Vec<u32>,
    /// The MIG profile of each member holding a MIG instance.
    pub mig: Vec<String>,
}

impl GpuTake {
    /// GPU milli in total, whole GPUs counted as 1000, a MIG instance as its profile's share.
    pub fn milli(&self) -> u64 {
        self.per_node.iter().map(|&n| n as u64 * MILLI_PER_GPU as u64).sum::<u64>()
            + self.shares.iter().map(|&s| s as u64).sum::<u64>()
            + self
                .mig
                .iter()
                .filter_map(|p| grus_scheduler::mig::known_profile(p))
                .map(|p| u64::from(grus_scheduler::mig::milli_of(p)))
                .sum::<u64>()
    }
}

/// Capacity the allocator has promised to a dispatched job, deducted from the cluster's
/// summary until the agent confirms the job (the shell then drops it, as the summary
/// already counts the job) or `expires_at` passes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    pub job: u64,
    pub gpus: Vec<GpuTake>,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub expires_at: DateTime<Utc>,
}

impl Reservation {
    pub fn is_active(&self, now: DateTime<Utc>) -> bool {
        now < self.expires_at
    }
}

/// One cluster as the allocator sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterView {
    pub id: String,
    /// The agent's heartbeat key is fresh.
    pub healthy: bool,
    /// An operator took the cluster out of rotation: nothing new is sent there.
    pub cordoned: bool,
    pub labels: BTreeMap<String, String>,
    pub capacity: CapacitySummary,
    pub reservations: Vec<Reservation>,
    /// Capacity that reclaim freed for a waiting job (the hold's `job`), held for it until it
    /// is dispatched or the hold expires: without it, the evicted job itself (as old, as
    /// urgent) was sent back into the room it had just left, and evicted again, in a loop.
    pub holds: Vec<Reservation>,
}

impl ClusterView {
    /// The summary less every active reservation (what reclaim plans with: held capacity is
    /// free as far as evictions go).
    fn free(&self, now: DateTime<Utc>) -> FreeView {
        self.free_less(now, self.reservations.iter())
    }

    /// What a round may give `owner` (`None`: any job): the summary less every active
    /// reservation and every hold but the owner's own.
    fn free_for(&self, now: DateTime<Utc>, owner: Option<u64>) -> FreeView {
        let holds = self.holds.iter().filter(|h| Some(h.job) != owner);
        self.free_less(now, self.reservations.iter().chain(holds))
    }

    fn free_less<'a>(&self, now: DateTime<Utc>, taken: impl Iterator<Item = &'a Reservation>) -> FreeView {
        let mut v = FreeView::of(&self.capacity);
        let mut active: Vec<&Reservation> = taken.filter(|r| r.is_active(now)).collect();
        // Deduct in a fixed order so that the view does not depend on the storage order.
        active.sort_by_key(|r| (r.job, r.expires_at));
        for r in active {
            v.deduct(&r.gpus, r.cpu_milli, r.memory_mib);
        }
        v
    }
}

/// How an earlier dispatch of a job ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// The agent refused the job or could not place it.
    Rejected { reason: String },
    /// The agent neither placed nor rejected it before the deadline.
    TimedOut,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub cluster: String,
    pub epoch: u64,
    pub outcome: AttemptOutcome,
}

/// An admitted job waiting for a cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingJob {
    /// Id, queue, priority and submission time are the spec's.
    pub spec: JobSpec,
    /// Cluster labels the job requires (the job's `cluster_selector`).
    pub cluster_selector: BTreeMap<String, String>,
    /// Earlier dispatches, oldest first.
    pub attempts: Vec<Attempt>,
    /// The highest epoch used for this job so far (0 if never dispatched).
    pub epoch: u64,
    /// Admitted above its queue's guarantee (preemptible by reclaim once running).
    pub borrowed: bool,
}

impl PendingJob {
    pub fn id(&self) -> u64 {
        self.spec.id
    }

    /// Priority first, then interactive workspaces (as each cluster's scheduler orders a
    /// queue), then age, then id: the order in which a round serves jobs.
    fn order_key(&self) -> (std::cmp::Reverse<i32>, bool, i64, u64) {
        (std::cmp::Reverse(self.spec.priority), self.spec.workspace.is_none(), self.spec.submitted_at_ms, self.spec.id)
    }
}

/// The reasons a job fits on no cluster, one per cluster in cluster order.
pub type Skipped = Vec<(String, SkipReason)>;

/// Why a cluster was not chosen for a job; rendered into the job's whyPending text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// The agent's heartbeat is stale.
    Unhealthy,
    /// The cluster is cordoned by an operator.
    Cordoned,
    /// The cluster has none of the GPU models a task allows.
    NoSuchGpuModel { wanted: Vec<String>, available: Vec<String> },
    /// The cluster has none of the node pools the job names.
    NoSuchPool { wanted: Vec<String>, available: Vec<String> },
    /// The job fits in none of its pools here: why not in the first of them.
    NotInPool { pool: String, why: Box<SkipReason> },
    /// A `cluster_selector` label is missing or different.
    SelectorMismatch { key: String },
    /// Not enough of a resource in total (`gpu/<model>`, `gpu_milli/<model>`,
    /// `mig/<profile>/<model>`, `cpu_milli`, `memory_mib`).
    InsufficientCapacity { resource: String, needed: u64, free: u64 },
    /// Enough in total, but the gang cannot be packed within its topology scope.
    GangDoesNotFit { model: String, members: u32, per_member_gpus: u32, scope: TopologyScope, largest: u32 },
    /// An earlier dispatch to this cluster failed.
    RejectedBefore { reason: String },
    /// It would fit, but capacity is reserved for jobs dispatched and not yet confirmed.
    Reserved,
}

fn scope_name(s: TopologyScope) -> &'static str {
    match s {
        TopologyScope::Any => "any",
        TopologyScope::Node => "one node",
        TopologyScope::Nvlink => "one NVLink island",
        TopologyScope::Rack => "one rack",
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Unhealthy => f.write_str("agent heartbeat is stale"),
            SkipReason::Cordoned => f.write_str("cluster is cordoned"),
            SkipReason::NoSuchGpuModel { wanted, available } => {
                let has = if available.is_empty() { "no GPUs".to_string() } else { available.join(", ") };
                write!(f, "lacks {} (has {has})", wanted.join(" or "))
            }
            SkipReason::NoSuchPool { wanted, available } => {
                let has = if available.is_empty() { "no node pools".to_string() } else { available.join(", ") };
                write!(f, "lacks node pool {} (has {has})", wanted.join(" or "))
            }
            SkipReason::NotInPool { pool, why } => write!(f, "in node pool {pool}: {why}"),
            SkipReason::SelectorMismatch { key } => write!(f, "cluster label `{key}` does not match the selector"),
            SkipReason::InsufficientCapacity { resource, needed, free } => {
                write!(f, "needs {needed} {resource}, {free} free")
            }
            SkipReason::GangDoesNotFit { model, members, per_member_gpus, scope, largest } => match scope {
                TopologyScope::Any => write!(
                    f,
                    "gang of {members} x {per_member_gpus} {model} does not fit (largest node has {largest} free)"
                ),
                s => write!(
                    f,
                    "gang of {members} x {per_member_gpus} {model} does not fit within {} (largest has {largest} free)",
                    scope_name(*s)
                ),
            },
            SkipReason::RejectedBefore { reason } => write!(f, "rejected the job before: {reason}"),
            SkipReason::Reserved => f.write_str("free capacity is reserved for jobs being dispatched"),
        }
    }
}

impl SkipReason {
    /// The filter stage that skipped the cluster, in the order the stages run: `health`,
    /// `selector`, `history`, `pool`, `gpu_model`, `capacity`, `topology`, `reservation`.
    pub fn stage(&self) -> &'static str {
        match self {
            SkipReason::Unhealthy | SkipReason::Cordoned => "health",
            SkipReason::SelectorMismatch { .. } => "selector",
            SkipReason::RejectedBefore { .. } => "history",
            SkipReason::NoSuchPool { .. } | SkipReason::NotInPool { .. } => "pool",
            SkipReason::NoSuchGpuModel { .. } => "gpu_model",
            SkipReason::InsufficientCapacity { .. } => "capacity",
            SkipReason::GangDoesNotFit { .. } => "topology",
            SkipReason::Reserved => "reservation",
        }
    }
}

/// The whyPending text: one clause per cluster, in cluster order.
pub fn why_pending(skipped: &[(String, SkipReason)]) -> String {
    if skipped.is_empty() {
        return "no clusters are registered".to_string();
    }
    skipped.iter().map(|(c, r)| format!("{c}: {r}")).collect::<Vec<_>>().join("; ")
}

/// The outcome of [`choose_cluster`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    Cluster { cluster: String, gpus: Vec<GpuTake>, cpu_milli: u64, memory_mib: u64 },
    NoCluster { skipped: Vec<(String, SkipReason)> },
}

/// Allocator settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocatorConfig {
    /// How long a reservation holds capacity while the agent has not confirmed.
    pub reservation_ttl: Duration,
}

impl Default for AllocatorConfig {
    fn default() -> Self {
        AllocatorConfig { reservation_ttl: Duration::seconds(60) }
    }
}

/// What the allocator loop should do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send `Dispatch { job, epoch }` to `cluster` and store `reservation`.
    Dispatch { job: u64, cluster: String, epoch: u64, reservation: Reservation },
    /// No cluster can take the job now; store the reasons as its whyPending. Waiting jobs of
    /// one `shape` get the same reasons from the same views (shared while nothing changed).
    Wait { job: u64, skipped: Arc<Skipped>, shape: Arc<str> },
}

/// The waiting jobs in the order a round serves them (priority, age, id), each once.
fn in_serving_order<'a>(waiting: impl IntoIterator<Item = &'a PendingJob>) -> Vec<&'a PendingJob> {
    let mut order: Vec<&PendingJob> = waiting.into_iter().collect();
    order.sort_by_key(|j| j.order_key());
    order.dedup_by_key(|j| j.id());
    order
}

/// Whether `c` may take `job` at all, whatever its capacity: healthy, not cordoned, carrying
/// the job's cluster labels, having one of the node pools it names, and not `excluded` by its
/// earlier dispatches.
fn may_take(c: &ClusterView, job: &PendingJob, excluded: &BTreeMap<&str, String>) -> bool {
    c.healthy
        && !c.cordoned
        && job.cluster_selector.iter().all(|(k, v)| c.labels.get(k) == Some(v))
        && (job.spec.pools.is_empty() || c.capacity.pools.iter().any(|p| job.spec.pools.contains(&p.name)))
        && !excluded.contains_key(c.id.as_str())
}

/// Which clusters a job must not go to because of earlier failures: every cluster that
/// failed it, unless that is every cluster, in which case only the latest one (so that the
/// job keeps moving instead of waiting forever, and never bounces straight back).
fn excluded<'a>(job: &'a PendingJob, clusters: &[&ClusterView]) -> BTreeMap<&'a str, String> {
    let mut failed: BTreeMap<&str, String> = BTreeMap::new();
    for a in &job.attempts {
        let reason = match &a.outcome {
            AttemptOutcome::Rejected { reason } => reason.clone(),
            AttemptOutcome::TimedOut => "not placed before the deadline".to_string(),
        };
        failed.insert(a.cluster.as_str(), reason);
    }
    let all_failed = !clusters.is_empty() && clusters.iter().all(|c| failed.contains_key(c.id.as_str()));
    if all_failed && clusters.len() > 1 {
        let last = job.attempts.last().map(|a| a.cluster.as_str());
        failed.retain(|c, _| Some(*c) == last);
    } else if all_failed {
        failed.clear();
    }
    failed
}

/// One cluster's verdict on one job: it fits (what it takes, and the best-fit key: free GPUs
/// left after it, pending jobs at the agent), or why not.
#[derive(Clone, Debug)]
enum Verdict {
    Fits { free_after: u64, pending: u32, fit: fit::Fit },
    Skip(SkipReason),
}

/// Filters and fits one job on one cluster with its free view (`base`: the summary without
/// reservations, to tell "reserved" from "full").
fn verdict_on(
    job: &PendingJob,
    groups: &[fit::MemberGroup],
    excluded: &BTreeMap<&str, String>,
    c: &ClusterView,
    view: &FreeView,
    base: &FreeView,
) -> Verdict {
    if !c.healthy {
        return Verdict::Skip(SkipReason::Unhealthy);
    }
    if c.cordoned {
        return Verdict::Skip(SkipReason::Cordoned);
    }
    if let Some((k, _)) = job.cluster_selector.iter().find(|(k, v)| c.labels.get(*k) != Some(*v)) {
        return Verdict::Skip(SkipReason::SelectorMismatch { key: k.clone() });
    }
    if let Some(reason) = excluded.get(c.id.as_str()) {
        return Verdict::Skip(SkipReason::RejectedBefore { reason: reason.clone() });
    }
    if let Err(e) = fits_a_pool(&job.spec.pools, groups, &c.capacity) {
        return Verdict::Skip(e);
    }
    let mut v = view.clone();
    match fit::fit(&mut v, groups) {
        Ok(fit) => Verdict::Fits { free_after: v.free_gpus(), pending: c.capacity.pending_jobs, fit },
        Err(e @ SkipReason::NoSuchGpuModel { .. }) => Verdict::Skip(e),
        Err(e) => {
            let mut unreserved = base.clone();
            Verdict::Skip(if fit::fit(&mut unreserved, groups).is_ok() { SkipReason::Reserved } else { e })
        }
    }
}

/// For a job naming node pools: whether its gang fits in one of them as the cluster reported
/// them. Pools are judged on the summary as reported, without this round's reservations
/// (which are not told apart by pool); the cluster-wide fit that follows deducts those. Like
/// the rest of the allocator's view it is coarse: the agent places exactly, pool by pool.
fn fits_a_pool(pools: &[String], groups: &[fit::MemberGroup], summary: &CapacitySummary) -> Result<(), SkipReason> {
    if pools.is_empty() {
        return Ok(());
    }
    let named: Vec<&PoolCapacity> =
        pools.iter().filter_map(|p| summary.pools.iter().find(|have| have.name == *p)).collect();
    let Some(first) = named.first() else {
        return Err(SkipReason::NoSuchPool {
            wanted: pools.to_vec(),
            available: summary.pools.iter().map(|p| p.name.clone()).collect(),
        });
    };
    let mut first_err = None;
    for p in &named {
        match fit::fit(&mut FreeView::of_pool(p, summary), groups) {
            Ok(_) => return Ok(()),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(SkipReason::NotInPool { pool: first.name.clone(), why: Box::new(first_err.expect("a pool was tried")) })
}

/// A round's job shapes. A job's verdict on a cluster depends only on its shape (what it
/// asks, its selector, the clusters it failed on, capacity held for it) and that cluster's
/// view, and a round changes one cluster's view per dispatch: a job whose shape was seen
/// re-fits only on the clusters whose view changed since, not on every cluster (10,000 jobs x
/// 100 clusters were a million fits a round, nearly all repeating one of a few shapes).
/// Shapes are found by a structural hash and told apart by equality, so a job costs no
/// formatting and no allocation beyond its demand; each shape's name (whyPending's key) is
/// formatted once.
#[derive(Default)]
struct Shapes<'a> {
    by_hash: std::collections::HashMap<u64, Vec<usize>>,
    slots: Vec<ShapeSlot<'a>>,
}

/// One cluster's verdict on a shape, with the generation of the view it was made on.
type CachedVerdict = Option<(u64, Verdict)>;

/// What one shape is, and what the round learnt about it.
struct ShapeSlot<'a> {
    groups: Vec<fit::MemberGroup>,
    selector: &'a BTreeMap<String, String>,
    pools: &'a [String],
    excluded: BTreeMap<&'a str, String>,
    held_for: Option<u64>,
    name: Arc<str>,
    /// The verdict per cluster, with the generation of the view it was made on.
    verdicts: Vec<CachedVerdict>,
    /// The reasons when it last fitted nowhere, and the round's total of generations then:
    /// while no cluster's view changed since, the next job of the shape waits for the very
    /// same reasons, shared instead of rebuilt (100 reasons for each of 87,000 waiting jobs
    /// were most of a plan).
    waits: Option<(u64, Arc<Skipped>)>,
}

impl<'a> Shapes<'a> {
    /// The slot of the shape, added on first sight.
    fn slot(
        &mut self,
        groups: Vec<fit::MemberGroup>,
        job: &'a PendingJob,
        excluded: BTreeMap<&'a str, String>,
        held_for: Option<u64>,
        clusters: usize,
    ) -> usize {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&groups, &job.cluster_selector, &job.spec.pools, &excluded, held_for).hash(&mut h);
        let bucket = self.by_hash.entry(h.finish()).or_default();
        let same = |s: &ShapeSlot<'_>| {
            s.groups == groups
                && *s.selector == job.cluster_selector
                && *s.pools == job.spec.pools
                && s.excluded == excluded
                && s.held_for == held_for
        };
        if let Some(&i) = bucket.iter().find(|&&i| same(&self.slots[i])) {
            return i;
        }
        let mut name = shape_name(&groups, job, &excluded);
        if let Some(owner) = held_for {
            name = format!("{name}|held for job {owner}");
        }
        bucket.push(self.slots.len());
        self.slots.push(ShapeSlot {
            groups,
            selector: &job.cluster_selector,
            pools: &job.spec.pools,
            excluded,
            held_for,
            name: name.into(),
            verdicts: vec![None; clusters],
            waits: None,
        });
        self.slots.len() - 1
    }
}

/// A shape's name: what decides its verdicts, spelt out (whyPending rows are keyed by it).
fn shape_name(groups: &impl fmt::Debug, job: &PendingJob, excluded: &BTreeMap<&str, String>) -> String {
    if job.spec.pools.is_empty() {
        format!("{groups:?}|{:?}|{excluded:?}", job.cluster_selector)
    } else {
        format!("{groups:?}|{:?}|pools {:?}|{excluded:?}", job.cluster_selector, job.spec.pools)
    }
}

/// Filters and fits one job on each cluster with the given free views; the best feasible
/// cluster wins. Best = fewest free GPUs left in the cluster after the job (best fit at the
/// cluster level keeps large clusters open for large gangs), then fewer pending jobs at the
/// agent, then cluster id. With `memo`, verdicts of the same shape on views of the same
/// generation are reused (the outcome is exactly the one computed afresh).
/// `groups` and `excluded` are the job's [`demand_of`] and [`excluded`] clusters.
fn choose_in(
    job: &PendingJob,
    (groups, excluded): (&[fit::MemberGroup], &BTreeMap<&str, String>),
    clusters: &[&ClusterView],
    views: &[FreeView],
    base: &[FreeView],
    memo: Option<(&mut [CachedVerdict], &[u64])>,
) -> (Choice, usize) {
    let mut cached = memo;
    let mut skipped = Vec::new();
    let mut best: Option<((u64, u32, &str), usize, fit::Fit)> = None;
    for (i, c) in clusters.iter().enumerate() {
        let verdict = match cached.as_mut() {
            Some((slots, generations)) => match &slots[i] {
                Some((g, v)) if *g == generations[i] => v.clone(),
                _ => {
                    let v = verdict_on(job, groups, excluded, c, &views[i], &base[i]);
                    slots[i] = Some((generations[i], v.clone()));
                    v
                }
            },
            None => verdict_on(job, groups, excluded, c, &views[i], &base[i]),
        };
        match verdict {
            Verdict::Fits { free_after, pending, fit } => {
                let key = (free_after, pending, c.id.as_str());
                if best.as_ref().is_none_or(|(k, _, _)| key < *k) {
                    best = Some((key, i, fit));
                }
            }
            Verdict::Skip(r) => skipped.push((c.id.clone(), r)),
        }
    }
    match best {
        Some((_, i, f)) => (
            Choice::Cluster {
                cluster: clusters[i].id.clone(),
                gpus: f.takes,
                cpu_milli: f.cpu_milli,
                memory_mib: f.memory_mib,
            },
            i,
        ),
        None => (Choice::NoCluster { skipped }, usize::MAX),
    }
}

fn sorted_clusters(clusters: &[ClusterView]) -> Vec<&ClusterView> {
    let mut cs: Vec<&ClusterView> = clusters.iter().collect();
    cs.sort_by(|a, b| a.id.cmp(&b.id));
    cs
}

/// Chooses one cluster for `job`, or says for each cluster why not.
pub fn choose_cluster(job: &PendingJob, clusters: &[ClusterView], now: DateTime<Utc>) -> Choice {
    let cs = sorted_clusters(clusters);
    let views: Vec<FreeView> = cs.iter().map(|c| c.free(now)).collect();
    let base: Vec<FreeView> = cs.iter().map(|c| FreeView::of(&c.capacity)).collect();
    let (groups, excluded) = (demand_of(&job.spec), excluded(job, &cs));
    choose_in(job, (&groups, &excluded), &cs, &views, &base, None).0
}

/// One allocator round: jobs in priority, then age order; each dispatched job's take is
/// deducted before the next job is considered, so two jobs are never sent to capacity that
/// only one of them fits. A job that does not fit does not block smaller jobs behind it
/// (the agents' schedulers handle reservations for blocked gangs inside a cluster). Takes the
/// jobs by reference (a slice, or the loop's own collection of them).
pub fn plan_round<'a>(
    pending: impl IntoIterator<Item = &'a PendingJob>,
    clusters: &[ClusterView],
    now: DateTime<Utc>,
    cfg: &AllocatorConfig,
) -> Vec<Action> {
    plan(in_serving_order(pending), clusters, now, cfg, true)
}

/// [`plan_round`] serving jobs in hierarchical fair-share order ([`FleetShares::serving_order`]:
/// tenants, then projects, then queues furthest below their fair share first; jobs within their
/// guarantee before borrowed ones) instead of priority order across queues.
pub fn plan_round_fair<'a>(
    shares: &FleetShares,
    pending: impl IntoIterator<Item = &'a PendingJob>,
    clusters: &[ClusterView],
    now: DateTime<Utc>,
    cfg: &AllocatorConfig,
) -> Vec<Action> {
    plan(shares.serving_order(pending), clusters, now, cfg, true)
}

/// [`plan_round`] with every job fitted on every cluster afresh: the reference the memoized
/// plan must equal (property-tested), and the bench's baseline.
pub fn plan_round_afresh<'a>(
    pending: impl IntoIterator<Item = &'a PendingJob>,
    clusters: &[ClusterView],
    now: DateTime<Utc>,
    cfg: &AllocatorConfig,
) -> Vec<Action> {
    plan(in_serving_order(pending), clusters, now, cfg, false)
}

/// Plans a round for `order`, the jobs in the order they are served, each once.
fn plan(
    order: Vec<&PendingJob>,
    clusters: &[ClusterView],
    now: DateTime<Utc>,
    cfg: &AllocatorConfig,
    memoize: bool,
) -> Vec<Action> {
    let cs = sorted_clusters(clusters);
    let mut views: Vec<FreeView> = cs.iter().map(|c| c.free_for(now, None)).collect();
    let base: Vec<FreeView> = cs.iter().map(|c| FreeView::of(&c.capacity)).collect();
    // What this round gave away per cluster, to rebuild a view for a job that holds capacity.
    let mut given: Vec<Vec<(Vec<GpuTake>, u64, u64)>> = vec![Vec::new(); cs.len()];
    // Clusters holding capacity for a job, by job: looked up once per job, not per cluster.
    let mut holders: std::collections::HashMap<u64, Vec<usize>> = std::collections::HashMap::new();
    for (i, c) in cs.iter().enumerate() {
        for h in c.holds.iter().filter(|h| h.is_active(now)) {
            let at = holders.entry(h.job).or_default();
            if at.last() != Some(&i) {
                at.push(i);
            }
        }
    }
    let mut actions = Vec::with_capacity(order.len());
    // Each cluster's view changes with each job the round gives it: its generation counts them
    // (and `changes` counts every generation step of the round).
    let mut generations = vec![0u64; cs.len()];
    let mut changes = 0u64;
    let mut shapes = Shapes::default();
    let no_holds = Vec::new();
    for job in order {
        // Where capacity is held for this job, it sees it as its own.
        let own = holders.get(&job.id()).unwrap_or(&no_holds);
        let mut mine = Vec::new();
        if !own.is_empty() {
            mine = views.clone();
            for &i in own {
                let mut v = cs[i].free_for(now, Some(job.id()));
                for (gpus, cpu, mem) in &given[i] {
                    v.deduct(gpus, *cpu, *mem);
                }
                mine[i] = v;
            }
        }
        // A job with holds sees views no other job sees: no memo for it, and reasons of its own.
        let (job_views, shared) = if own.is_empty() { (&views, memoize) } else { (&mine, false) };
        let held_for = (!own.is_empty()).then_some(job.id());
        let slot = shapes.slot(demand_of(&job.spec), job, excluded(job, &cs), held_for, cs.len());
        if shared {
            if let Some((_, skipped)) = shapes.slots[slot].waits.as_ref().filter(|(at, _)| *at == changes) {
                let shape = shapes.slots[slot].name.clone();
                actions.push(Action::Wait { job: job.id(), skipped: skipped.clone(), shape });
                continue;
            }
        }
        let ShapeSlot { groups, excluded, verdicts, .. } = &mut shapes.slots[slot];
        let choice = choose_in(
            job,
            (groups, excluded),
            &cs,
            job_views,
            &base,
            shared.then_some((verdicts.as_mut_slice(), generations.as_slice())),
        );
        match choice {
            (Choice::Cluster { cluster, gpus, cpu_milli, memory_mib }, i) => {
                // Dispatched: its holds are spent, wherever it went.
                for &h in own {
                    views[h] = mine[h].clone();
                    generations[h] += 1;
                    changes += 1;
                }
                views[i].deduct(&gpus, cpu_milli, memory_mib);
                generations[i] += 1;
                changes += 1;
                given[i].push((gpus.clone(), cpu_milli, memory_mib));
                actions.push(Action::Dispatch {
                    job: job.id(),
                    cluster,
                    epoch: job.epoch + 1,
                    reservation: Reservation {
                        job: job.id(),
                        gpus,
                        cpu_milli,
                        memory_mib,
                        expires_at: now + cfg.reservation_ttl,
                    },
                });
            }
            (Choice::NoCluster { skipped }, _) => {
                let skipped = Arc::new(skipped);
                let slot = &mut shapes.slots[slot];
                if shared {
                    slot.waits = Some((changes, skipped.clone()));
                }
                actions.push(Action::Wait { job: job.id(), skipped, shape: slot.name.clone() });
            }
        }
    }
    actions
}

/// A dispatch the agent has not yet confirmed or rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InFlight {
    pub job: u64,
    pub cluster: String,
    pub epoch: u64,
    pub deadline: DateTime<Utc>,
}

/// Dispatches past their deadline, as the attempts to record before re-dispatching (the
/// shell also sends `Cancel { job, epoch }` so a late placement is fenced off).
pub fn timed_out(in_flight: &[InFlight], now: DateTime<Utc>) -> Vec<(u64, Attempt)> {
    let mut out: Vec<(u64, Attempt)> = in_flight
        .iter()
        .filter(|d| now >= d.deadline)
        .map(|d| (d.job, Attempt { cluster: d.cluster.clone(), epoch: d.epoch, outcome: AttemptOutcome::TimedOut }))
        .collect();
    out.sort_by_key(|a| (a.0, a.1.epoch));
    out
}
