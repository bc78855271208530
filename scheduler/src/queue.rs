//! Queues and quotas: the tenant -> project -> queue hierarchy, resource vectors, and the
//! quota rules every admission goes through.
//!
//! A queue has a weight (for fair share), a guaranteed quota, a limit, and may borrow idle
//! capacity above its guarantee. Projects and tenants may carry limits of their own. Usage is
//! never stored here: it is derived from the running jobs each cycle ([`Usage`]), so it
//! cannot drift from what actually runs. Which jobs are "borrowed" is derived the same way
//! ([`classify_borrowed`]), so a job that was borrowed when it started becomes guaranteed once
//! older work of its queue ends, without anybody having to update a flag.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::cluster::{Cluster, ReplicaAllocation};
use crate::job::{JobId, QueueId};

/// One dimension of a quota or of usage.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResourceKey {
    /// GPUs of every model together, in milli-GPU.
    Gpus,
    /// GPUs of one model (named as the inventory names it), in milli-GPU.
    GpuModel(String),
    /// GPUs of one node pool (see [`crate::pool`]), in milli-GPU.
    Pool(String),
    /// CPU in milli-cores.
    Cpu,
    /// Host memory in MiB.
    Memory,
}

impl ResourceKey {
    pub fn gpu_model(name: &str) -> ResourceKey {
        ResourceKey::GpuModel(name.to_string())
    }

    pub fn pool(name: &str) -> ResourceKey {
        ResourceKey::Pool(name.to_string())
    }

    fn is_gpu(&self) -> bool {
        matches!(self, ResourceKey::Gpus | ResourceKey::GpuModel(_) | ResourceKey::Pool(_))
    }
}

impl fmt::Display for ResourceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceKey::Gpus => f.write_str("GPUs"),
            ResourceKey::GpuModel(m) => write!(f, "{m} GPUs"),
            ResourceKey::Pool(p) => write!(f, "GPUs of pool {p}"),
            ResourceKey::Cpu => f.write_str("CPU"),
            ResourceKey::Memory => f.write_str("memory"),
        }
    }
}

/// Amounts per resource. A key that is absent is zero in usage; in a limit it means
/// "unlimited", in a guarantee see [`ResourceVector::within_guarantee`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResourceVector(BTreeMap<ResourceKey, u64>);

impl ResourceVector {
    pub fn new() -> ResourceVector {
        ResourceVector::default()
    }

    /// Builder: sets `key` to `amount` (0 removes it).
    pub fn with(mut self, key: ResourceKey, amount: u64) -> ResourceVector {
        self.set(key, amount);
        self
    }

    /// Builder for the common case: `gpus` whole GPUs of any model.
    pub fn with_gpus(self, gpus: u64) -> ResourceVector {
        self.with(ResourceKey::Gpus, gpus * 1000)
    }

    pub fn set(&mut self, key: ResourceKey, amount: u64) {
        if amount == 0 {
            self.0.remove(&key);
        } else {
            self.0.insert(key, amount);
        }
    }

    pub fn get(&self, key: &ResourceKey) -> u64 {
        self.0.get(key).copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&ResourceKey, u64)> {
        self.0.iter().map(|(k, v)| (k, *v))
    }

    pub fn add(&mut self, other: &ResourceVector) {
        for (k, v) in &other.0 {
            *self.0.entry(k.clone()).or_default() += v;
        }
    }

    /// Subtracts, saturating at zero (usage never goes negative).
    pub fn sub(&mut self, other: &ResourceVector) {
        for (k, v) in &other.0 {
            if let Some(x) = self.0.get_mut(k) {
                *x = x.saturating_sub(*v);
                if *x == 0 {
                    self.0.remove(k);
                }
            }
        }
    }

    pub fn plus(&self, other: &ResourceVector) -> ResourceVector {
        let mut v = self.clone();
        v.add(other);
        v
    }

    /// The first key on which `self` exceeds `limit` (keys absent from `limit` are unlimited).
    pub fn first_over_limit(&self, limit: &ResourceVector) -> Option<ResourceKey> {
        limit.0.iter().find(|(k, l)| self.get(k) > **l).map(|(k, _)| k.clone())
    }

    /// Whether this usage lies inside guarantee `g`.
    ///
    /// GPUs are always governed: usage on a model must fit the model's own guarantee, or, if the
    /// guarantee names [`ResourceKey::Gpus`] (or pools), the total (the pools) must fit it (and
    /// any model named too).
    /// Pools are governed once the guarantee names one: usage in a pool must fit the pool's
    /// guarantee, and a pool it does not name is guaranteed nothing unless a total is named
    /// (per-pool quotas, as Run:ai's; a queue that names no pool is not held per pool).
    /// CPU and memory are governed only when the guarantee names them: GPU fleets are sized by
    /// GPUs, and requiring every queue to spell out host resources would make every CPU-heavy
    /// job "borrowed" by accident.
    pub fn within_guarantee(&self, g: &ResourceVector) -> bool {
        let total = g.0.contains_key(&ResourceKey::Gpus);
        let per_pool = g.0.keys().any(|k| matches!(k, ResourceKey::Pool(_)));
        self.0.iter().all(|(k, &used)| match k {
            ResourceKey::Pool(_) => match g.0.get(k) {
                Some(&x) => used <= x,
                None => !per_pool || total,
            },
            ResourceKey::Gpus => !total || used <= g.get(k),
            ResourceKey::GpuModel(_) => {
                if g.0.contains_key(k) || !(total || per_pool) {
                    used <= g.get(k)
                } else {
                    true
                }
            }
            ResourceKey::Cpu | ResourceKey::Memory => g.0.get(k).is_none_or(|&x| used <= x),
        })
    }

    /// How much of `key` guarantee `self` holds for fair share, `None` when it does not bound
    /// the key. It reads a guarantee as [`ResourceVector::within_guarantee`] does, with one
    /// difference: demand that names no GPU model is bounded in total by what the guarantee
    /// holds of GPUs (its total, else the larger of its models' and its pools' sums), where
    /// admission would leave the model-independent total unbounded until a model is chosen.
    pub fn guaranteed_amount(&self, key: &ResourceKey) -> Option<u64> {
        let total = self.0.contains_key(&ResourceKey::Gpus);
        let per_pool = self.0.keys().any(|k| matches!(k, ResourceKey::Pool(_)));
        if let Some(&x) = self.0.get(key) {
            return Some(x);
        }
        match key {
            ResourceKey::Gpus => {
                let sum = |f: fn(&ResourceKey) -> bool| self.0.iter().filter(|(k, _)| f(k)).map(|(_, v)| *v).sum();
                let models: u64 = sum(|k| matches!(k, ResourceKey::GpuModel(_)));
                let pools: u64 = sum(|k| matches!(k, ResourceKey::Pool(_)));
                Some(models.max(pools))
            }
            ResourceKey::GpuModel(_) => (!(total || per_pool)).then_some(0),
            ResourceKey::Pool(_) => (per_pool && !total).then_some(0),
            ResourceKey::Cpu | ResourceKey::Memory => None,
        }
    }

    /// Usage of a set of allocations: GPU milli per model, per pool and in total, CPU and memory.
    pub fn of_allocations<'a>(
        cluster: &Cluster,
        allocs: impl IntoIterator<Item = &'a ReplicaAllocation>,
    ) -> ResourceVector {
        let mut v = ResourceVector::new();
        for a in allocs {
            let node = cluster.node(a.node);
            for d in &a.devices {
                let model = cluster.models().name(node.gpus[d.gpu as usize].model);
                *v.0.entry(ResourceKey::GpuModel(model.to_string())).or_default() += d.milli as u64;
                *v.0.entry(ResourceKey::Gpus).or_default() += d.milli as u64;
            }
            if let Some(pool) = node.pool {
                let milli = a.gpu_milli();
                if milli > 0 {
                    *v.0.entry(ResourceKey::Pool(cluster.pool_name(pool).to_string())).or_default() += milli;
                }
            }
            if a.cpu_milli > 0 {
                *v.0.entry(ResourceKey::Cpu).or_default() += a.cpu_milli;
            }
            if a.memory_mib > 0 {
                *v.0.entry(ResourceKey::Memory).or_default() += a.memory_mib;
            }
        }
        v
    }

    /// Capacity of a cluster: every healthy device per model, per pool and in total, CPU and
    /// memory of healthy nodes.
    pub fn capacity_of(cluster: &Cluster) -> ResourceVector {
        let mut v = ResourceVector::new();
        for node in cluster.nodes().iter().filter(|n| n.healthy) {
            for g in node.gpus.iter().filter(|g| g.healthy) {
                let model = cluster.models().name(g.model);
                *v.0.entry(ResourceKey::GpuModel(model.to_string())).or_default() += 1000;
                *v.0.entry(ResourceKey::Gpus).or_default() += 1000;
                if let Some(pool) = node.pool {
                    *v.0.entry(ResourceKey::Pool(cluster.pool_name(pool).to_string())).or_default() += 1000;
                }
            }
            *v.0.entry(ResourceKey::Cpu).or_default() += node.cpu_milli;
            *v.0.entry(ResourceKey::Memory).or_default() += node.memory_mib;
        }
        v.0.retain(|_, x| *x > 0);
        v
    }

    /// Keeps only the GPU keys (quota checks before placement know no model yet).
    pub fn gpu_part(&self) -> ResourceVector {
        ResourceVector(self.0.iter().filter(|(k, _)| k.is_gpu()).map(|(k, v)| (k.clone(), *v)).collect())
    }
}

impl fmt::Display for ResourceVector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        write!(f, "{{{}}}", parts.join(", "))
    }
}

/// Turns weights given as any positive numbers (stored settings, the agents' SetQueues) into the
/// whole weights the scheduler counts, keeping their ratios: three decimals where the largest
/// weight allows (0.5 against 1 stays half), fewer where it is large, so that none is clipped at
/// the largest weight the scheduler takes, [`WeightScale::MAX`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeightScale(f64);

impl WeightScale {
    pub const MAX: u32 = 1_000_000;

    /// The scale for a set of weights that are to be compared with each other.
    pub fn of(weights: impl IntoIterator<Item = f64>) -> WeightScale {
        let largest = weights.into_iter().filter(|w| w.is_finite()).fold(1.0, f64::max);
        WeightScale((f64::from(Self::MAX) / largest).min(1000.0))
    }

    /// `w` as the scheduler counts it: a whole number in 1..=[`WeightScale::MAX`].
    pub fn weight(self, w: f64) -> u32 {
        let scaled = if w.is_finite() { w * self.0 } else { 1.0 };
        scaled.round().clamp(1.0, f64::from(Self::MAX)) as u32
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TenantId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProjectId(pub u32);

/// A tenant: the top of the hierarchy. Its weight, guarantee and limit bound all its projects
/// together (see [`crate::fairshare::tree`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tenant {
    pub id: TenantId,
    pub name: String,
    /// Relative weight among tenants in fair share; at least 1.
    pub weight: u32,
    /// What its projects together are entitled to before over-quota capacity is shared.
    pub guarantee: ResourceVector,
    /// Empty: unlimited.
    pub limit: ResourceVector,
}

impl Tenant {
    /// A tenant with weight 1, no guarantee and no limit.
    pub fn new(id: u32, name: &str) -> Tenant {
        Tenant {
            id: TenantId(id),
            name: name.to_string(),
            weight: 1,
            guarantee: ResourceVector::new(),
            limit: ResourceVector::new(),
        }
    }
}

/// A project of a tenant; its weight, guarantee and limit bound all its queues together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Project {
    pub id: ProjectId,
    pub tenant: TenantId,
    pub name: String,
    /// Relative weight among its tenant's projects in fair share; at least 1.
    pub weight: u32,
    /// What its queues together are entitled to before over-quota capacity is shared.
    pub guarantee: ResourceVector,
    /// Empty: unlimited.
    pub limit: ResourceVector,
}

impl Project {
    /// A project with weight 1, no guarantee and no limit.
    pub fn new(id: u32, tenant: u32, name: &str) -> Project {
        Project {
            id: ProjectId(id),
            tenant: TenantId(tenant),
            name: name.to_string(),
            weight: 1,
            guarantee: ResourceVector::new(),
            limit: ResourceVector::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queue {
    pub id: QueueId,
    pub project: ProjectId,
    pub name: String,
    /// Relative weight in fair share; at least 1.
    pub weight: u32,
    /// Capacity this queue is entitled to; work inside it is never preempted for another
    /// queue's borrowed usage.
    pub guarantee: ResourceVector,
    /// Never exceeded. Keys absent: unlimited.
    pub limit: ResourceVector,
    /// May use idle capacity above the guarantee (preemptible, reclaimable).
    pub can_borrow: bool,
    /// Over-quota weight in one node pool, where it differs from `weight` (at least 1).
    pub pool_weights: BTreeMap<String, u32>,
}

impl Queue {
    /// The queue's weight in fair share within `pool`.
    pub fn weight_in(&self, pool: &str) -> u32 {
        self.pool_weights.get(pool).copied().unwrap_or(self.weight)
    }
}

impl Queue {
    /// A queue with weight 1, no guarantee, no limit, borrowing allowed.
    pub fn new(id: u32, project: u32, name: &str) -> Queue {
        Queue {
            id: QueueId(id),
            project: ProjectId(project),
            name: name.to_string(),
            weight: 1,
            guarantee: ResourceVector::new(),
            limit: ResourceVector::new(),
            can_borrow: true,
            pool_weights: BTreeMap::new(),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum QueueError {
    #[error("{0} id {1} is used twice")]
    DuplicateId(&'static str, u32),
    #[error("project {project} names unknown tenant {tenant}")]
    UnknownTenant { project: u32, tenant: u32 },
    #[error("queue {queue} names unknown project {project}")]
    UnknownProject { queue: u32, project: u32 },
    #[error("{0} {1} has weight 0")]
    ZeroWeight(&'static str, u32),
    #[error("{scope} {id}: guarantee of {key} is above its limit")]
    GuaranteeAboveLimit { scope: &'static str, id: u32, key: ResourceKey },
}

/// The validated hierarchy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Queues {
    tenants: BTreeMap<TenantId, Tenant>,
    projects: BTreeMap<ProjectId, Project>,
    queues: BTreeMap<QueueId, Queue>,
    /// Each project's queues and each tenant's projects: a level's usage sums its own
    /// members, not a scan of every queue.
    queues_of: BTreeMap<ProjectId, Vec<QueueId>>,
    projects_of: BTreeMap<TenantId, Vec<ProjectId>>,
}

impl Queues {
    pub fn new(tenants: Vec<Tenant>, projects: Vec<Project>, queues: Vec<Queue>) -> Result<Queues, QueueError> {
        let mut q = Queues::default();
        for t in tenants {
            let id = t.id.0;
            check_scope("tenant", id, t.weight, &t.guarantee, &t.limit)?;
            if q.tenants.insert(t.id, t).is_some() {
                return Err(QueueError::DuplicateId("tenant", id));
            }
        }
        for p in projects {
            let id = p.id.0;
            check_scope("project", id, p.weight, &p.guarantee, &p.limit)?;
            if !q.tenants.contains_key(&p.tenant) {
                return Err(QueueError::UnknownTenant { project: id, tenant: p.tenant.0 });
            }
            if q.projects.insert(p.id, p).is_some() {
                return Err(QueueError::DuplicateId("project", id));
            }
        }
        for queue in queues {
            let id = queue.id.0;
            if !q.projects.contains_key(&queue.project) {
                return Err(QueueError::UnknownProject { queue: id, project: queue.project.0 });
            }
            if queue.pool_weights.values().any(|w| *w == 0) {
                return Err(QueueError::ZeroWeight("queue", id));
            }
            check_scope("queue", id, queue.weight, &queue.guarantee, &queue.limit)?;
            let (qid, project) = (queue.id, queue.project);
            if q.queues.insert(queue.id, queue).is_some() {
                return Err(QueueError::DuplicateId("queue", id));
            }
            q.queues_of.entry(project).or_default().push(qid);
        }
        for p in q.projects.values() {
            q.projects_of.entry(p.tenant).or_default().push(p.id);
        }
        Ok(q)
    }

    /// One tenant, one project and the given queues (all in project 0 of tenant 0).
    pub fn flat(queues: Vec<Queue>) -> Result<Queues, QueueError> {
        let tenant = Tenant::new(0, "default");
        let project = Project::new(0, 0, "default");
        let queues = queues.into_iter().map(|q| Queue { project: ProjectId(0), ..q }).collect();
        Queues::new(vec![tenant], vec![project], queues)
    }

    pub fn queue(&self, id: QueueId) -> Option<&Queue> {
        self.queues.get(&id)
    }

    pub fn project(&self, id: ProjectId) -> &Project {
        &self.projects[&id]
    }

    pub fn tenant(&self, id: TenantId) -> &Tenant {
        &self.tenants[&id]
    }

    pub fn queues(&self) -> impl Iterator<Item = &Queue> {
        self.queues.values()
    }

    pub fn projects(&self) -> impl Iterator<Item = &Project> {
        self.projects.values()
    }

    pub fn tenants(&self) -> impl Iterator<Item = &Tenant> {
        self.tenants.values()
    }

    /// The queues of a project.
    pub fn queues_in(&self, project: ProjectId) -> &[QueueId] {
        self.queues_of.get(&project).map_or(&[], Vec::as_slice)
    }

    /// The projects of a tenant.
    pub fn projects_in(&self, tenant: TenantId) -> &[ProjectId] {
        self.projects_of.get(&tenant).map_or(&[], Vec::as_slice)
    }

    pub fn project_of(&self, queue: QueueId) -> Option<ProjectId> {
        self.queues.get(&queue).map(|q| q.project)
    }
}

/// What every level checks of its own numbers: a positive weight, a guarantee within the limit.
fn check_scope(
    scope: &'static str,
    id: u32,
    weight: u32,
    guarantee: &ResourceVector,
    limit: &ResourceVector,
) -> Result<(), QueueError> {
    if weight == 0 {
        return Err(QueueError::ZeroWeight(scope, id));
    }
    match guarantee.first_over_limit(limit) {
        Some(key) => Err(QueueError::GuaranteeAboveLimit { scope, id, key }),
        None => Ok(()),
    }
}

/// Why a job may not be admitted to its queue right now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QuotaViolation {
    UnknownQueue(QueueId),
    QueueLimit {
        queue: String,
        key: ResourceKey,
    },
    ProjectLimit {
        project: String,
        key: ResourceKey,
    },
    TenantLimit {
        tenant: String,
        key: ResourceKey,
    },
    /// The job would go above the guarantee and the queue may not borrow.
    CannotBorrow {
        queue: String,
    },
    /// The job would go above the guarantee, but a job that may not be preempted must not borrow
    /// (borrowed usage has to stay reclaimable).
    NotPreemptibleCannotBorrow {
        queue: String,
    },
}

impl QuotaViolation {
    /// The (scope name, resource) pair `Unplaced::QueueLimit` carries.
    pub fn describe(&self) -> (String, String) {
        match self {
            QuotaViolation::UnknownQueue(q) => (format!("#{}", q.0), "unknown queue".into()),
            QuotaViolation::QueueLimit { queue, key } => (queue.clone(), key.to_string()),
            QuotaViolation::ProjectLimit { project, key } => (format!("project {project}"), key.to_string()),
            QuotaViolation::TenantLimit { tenant, key } => (format!("tenant {tenant}"), key.to_string()),
            QuotaViolation::CannotBorrow { queue } => (queue.clone(), "guarantee (the queue may not borrow)".into()),
            QuotaViolation::NotPreemptibleCannotBorrow { queue } => {
                (queue.clone(), "guarantee (a non-preemptible job may not borrow)".into())
            }
        }
    }

    /// Only the pool of this violation, if it is about one: placing in another pool may help.
    pub fn pool(&self) -> Option<&str> {
        match self {
            QuotaViolation::QueueLimit { key: ResourceKey::Pool(p), .. }
            | QuotaViolation::ProjectLimit { key: ResourceKey::Pool(p), .. }
            | QuotaViolation::TenantLimit { key: ResourceKey::Pool(p), .. } => Some(p),
            _ => None,
        }
    }

    /// Only the GPU model of this violation, if it is about one: placing on another model may help.
    pub fn gpu_model(&self) -> Option<&str> {
        match self {
            QuotaViolation::QueueLimit { key: ResourceKey::GpuModel(m), .. }
            | QuotaViolation::ProjectLimit { key: ResourceKey::GpuModel(m), .. }
            | QuotaViolation::TenantLimit { key: ResourceKey::GpuModel(m), .. } => Some(m),
            _ => None,
        }
    }
}

/// Whether an admitted job stays inside its queue's guarantee.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    WithinGuarantee,
    Borrowing,
}

/// Usage per queue (and per priority inside it), derived from running work; projects and
/// tenants are sums over their queues.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    by_queue: BTreeMap<QueueId, BTreeMap<i32, ResourceVector>>,
}

impl Usage {
    pub fn add(&mut self, queue: QueueId, priority: i32, v: &ResourceVector) {
        self.by_queue.entry(queue).or_default().entry(priority).or_default().add(v);
    }

    pub fn sub(&mut self, queue: QueueId, priority: i32, v: &ResourceVector) {
        if let Some(u) = self.by_queue.get_mut(&queue).and_then(|q| q.get_mut(&priority)) {
            u.sub(v);
        }
    }

    pub fn queue(&self, queue: QueueId) -> ResourceVector {
        self.at_or_above(queue, i32::MIN)
    }

    /// Usage of the queue's jobs of at least this priority: the part of the guarantee a job of
    /// this priority competes for (lower-priority work above the guarantee is borrowed).
    pub fn at_or_above(&self, queue: QueueId, priority: i32) -> ResourceVector {
        let mut v = ResourceVector::new();
        if let Some(q) = self.by_queue.get(&queue) {
            for u in q.range(priority..).map(|(_, u)| u) {
                v.add(u);
            }
        }
        v
    }

    pub fn project(&self, queues: &Queues, project: ProjectId) -> ResourceVector {
        let mut v = ResourceVector::new();
        for q in queues.queues_in(project) {
            v.add(&self.queue(*q));
        }
        v
    }

    pub fn tenant(&self, queues: &Queues, tenant: TenantId) -> ResourceVector {
        let mut v = ResourceVector::new();
        for p in queues.projects_in(tenant) {
            v.add(&self.project(queues, *p));
        }
        v
    }

    /// Checks the limits of the queue, its project and its tenant for `delta` more usage by a
    /// job of `priority`, and whether it would borrow. Limits are checked on the keys `delta`
    /// touches only, so usage that was already over a (lowered) limit does not block unrelated
    /// work.
    ///
    /// Borrowing follows [`classify_borrowed`]: a job is inside the guarantee when the queue's
    /// work of at least its priority, plus the job, is; lower-priority work then counts as
    /// borrowed. A queue that may not borrow keeps its whole usage inside the guarantee.
    pub fn admit(
        &self,
        queues: &Queues,
        queue: QueueId,
        priority: i32,
        delta: &ResourceVector,
        preemptible: bool,
    ) -> Result<Admission, QuotaViolation> {
        let q = queues.queue(queue).ok_or(QuotaViolation::UnknownQueue(queue))?;
        let touched = |v: &ResourceVector| -> ResourceVector {
            ResourceVector(v.0.iter().filter(|(k, _)| delta.get(k) > 0).map(|(k, v)| (k.clone(), *v)).collect())
        };
        let total = self.queue(queue).plus(delta);
        if let Some(key) = total.first_over_limit(&touched(&q.limit)) {
            return Err(QuotaViolation::QueueLimit { queue: q.name.clone(), key });
        }
        let project = queues.project(q.project);
        if !project.limit.is_empty() {
            let after = self.project(queues, project.id).plus(delta);
            if let Some(key) = after.first_over_limit(&touched(&project.limit)) {
                return Err(QuotaViolation::ProjectLimit { project: project.name.clone(), key });
            }
        }
        let tenant = queues.tenant(project.tenant);
        if !tenant.limit.is_empty() {
            let after = self.tenant(queues, tenant.id).plus(delta);
            if let Some(key) = after.first_over_limit(&touched(&tenant.limit)) {
                return Err(QuotaViolation::TenantLimit { tenant: tenant.name.clone(), key });
            }
        }
        // Borrowing, too, is judged on the keys this job adds: a CPU-only job does not borrow
        // just because its queue's GPUs are above the guarantee.
        if !q.can_borrow {
            return if touched(&total).within_guarantee(&q.guarantee) {
                Ok(Admission::WithinGuarantee)
            } else {
                Err(QuotaViolation::CannotBorrow { queue: q.name.clone() })
            };
        }
        if touched(&self.at_or_above(queue, priority).plus(delta)).within_guarantee(&q.guarantee) {
            Ok(Admission::WithinGuarantee)
        } else if !preemptible {
            Err(QuotaViolation::NotPreemptibleCannotBorrow { queue: q.name.clone() })
        } else {
            Ok(Admission::Borrowing)
        }
    }
}

/// What [`classify_borrowed`] needs to know about one running job.
#[derive(Clone, Debug)]
pub struct HeldUsage {
    pub job: JobId,
    pub queue: QueueId,
    pub priority: i32,
    pub started_at: u64,
    pub usage: ResourceVector,
}

/// The running jobs whose usage lies above their queue's guarantee (borrowed, reclaimable).
///
/// Per queue, jobs fill the guarantee in order of priority (highest first), then start time
/// (oldest first), then id; a job that does not fit in what is left of the guarantee is
/// borrowed, and so is every later one: the guaranteed part is the prefix. Evicting borrowed
/// jobs therefore never touches the guaranteed prefix (invariant 5).
pub fn classify_borrowed(queues: &Queues, held: &[HeldUsage]) -> BTreeSet<JobId> {
    let mut by_queue: BTreeMap<QueueId, Vec<&HeldUsage>> = BTreeMap::new();
    for h in held {
        by_queue.entry(h.queue).or_default().push(h);
    }
    let mut borrowed = BTreeSet::new();
    for (queue, mut jobs) in by_queue {
        jobs.sort_by_key(|h| (std::cmp::Reverse(h.priority), h.started_at, h.job));
        let guarantee = queues.queue(queue).map(|q| q.guarantee.clone()).unwrap_or_default();
        let mut sum = ResourceVector::new();
        let mut over = false;
        for h in jobs {
            if !over {
                let next = sum.plus(&h.usage);
                if next.within_guarantee(&guarantee) {
                    sum = next;
                    continue;
                }
                over = true;
            }
            borrowed.insert(h.job);
        }
    }
    borrowed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpus(n: u64) -> ResourceVector {
        ResourceVector::new().with_gpus(n)
    }

    #[test]
    fn large_and_fractional_weights_keep_their_ratios() {
        let scale = WeightScale::of([0.5, 1.0]);
        assert_eq!((scale.weight(0.5), scale.weight(1.0)), (500, 1000), "half stays half");
        let scale = WeightScale::of([5e5, 1e6]);
        assert_eq!((scale.weight(5e5), scale.weight(1e6)), (500_000, 1_000_000));
        let scale = WeightScale::of([1e-9, 1e9, f64::NAN]);
        assert_eq!((scale.weight(1e-9), scale.weight(1e9), scale.weight(f64::NAN)), (1, WeightScale::MAX, 1));
    }

    #[test]
    fn limits_ignore_keys_they_do_not_name() {
        let used = gpus(4).with(ResourceKey::Cpu, 10_000);
        assert_eq!(used.first_over_limit(&gpus(4)), None);
        assert_eq!(used.first_over_limit(&gpus(3)), Some(ResourceKey::Gpus));
        assert_eq!(used.first_over_limit(&ResourceVector::new()), None);
    }

    #[test]
    fn guarantees_govern_every_gpu_model_but_host_resources_only_when_named() {
        let a100 = ResourceKey::gpu_model("A100");
        let h100 = ResourceKey::gpu_model("H100");
        let g = ResourceVector::new().with(a100.clone(), 4000);
        let on_a100 = ResourceVector::new().with(a100.clone(), 4000).with(ResourceKey::Gpus, 4000);
        assert!(on_a100.clone().with(ResourceKey::Cpu, 99_000).within_guarantee(&g));
        let on_h100 = ResourceVector::new().with(h100.clone(), 1000).with(ResourceKey::Gpus, 1000);
        assert!(!on_h100.within_guarantee(&g), "a model the guarantee does not name is guaranteed nothing");
        let any = gpus(2);
        assert!(on_h100.within_guarantee(&any));
        assert!(!on_a100.within_guarantee(&any));
        let with_cpu = gpus(8).with(ResourceKey::Cpu, 1000);
        assert!(!on_a100.clone().with(ResourceKey::Cpu, 2000).within_guarantee(&with_cpu));
    }

    #[test]
    fn pools_are_governed_once_a_guarantee_names_one() {
        let train = ResourceKey::pool("train");
        let infer = ResourceKey::pool("infer");
        let used = |key: &ResourceKey, n: u64| {
            ResourceVector::new()
                .with(key.clone(), n * 1000)
                .with(ResourceKey::Gpus, n * 1000)
                .with(ResourceKey::gpu_model("A100"), n * 1000)
        };
        let per_pool = ResourceVector::new().with(train.clone(), 8000);
        assert!(used(&train, 8).within_guarantee(&per_pool), "models need not be named beside pools");
        assert!(!used(&train, 9).within_guarantee(&per_pool));
        assert!(!used(&infer, 1).within_guarantee(&per_pool), "a pool not named is guaranteed nothing");
        assert!(used(&infer, 1).within_guarantee(&per_pool.clone().with_gpus(2)), "unless a total covers it");
        assert!(used(&infer, 4).within_guarantee(&gpus(4)), "a guarantee naming no pool does not hold pools");
    }

    fn tree() -> Queues {
        let tenant = Tenant { limit: gpus(10), ..Tenant::new(0, "acme") };
        let p1 = Project { limit: gpus(6), ..Project::new(1, 0, "vision") };
        let p2 = Project::new(2, 0, "nlp");
        let mut a = Queue::new(1, 1, "a");
        a.guarantee = gpus(2);
        a.limit = gpus(5);
        let mut b = Queue::new(2, 1, "b");
        b.can_borrow = false;
        b.guarantee = gpus(2);
        let c = Queue::new(3, 2, "c");
        Queues::new(vec![tenant], vec![p1, p2], vec![a, b, c]).unwrap()
    }

    #[test]
    fn admission_checks_queue_project_tenant_and_borrowing() {
        let qs = tree();
        let mut u = Usage::default();
        let q1 = QueueId(1);
        assert_eq!(u.admit(&qs, q1, 0, &gpus(2), true), Ok(Admission::WithinGuarantee));
        assert_eq!(u.admit(&qs, q1, 0, &gpus(3), true), Ok(Admission::Borrowing));
        assert_eq!(
            u.admit(&qs, q1, 0, &gpus(3), false),
            Err(QuotaViolation::NotPreemptibleCannotBorrow { queue: "a".into() })
        );
        assert!(matches!(u.admit(&qs, q1, 0, &gpus(6), true), Err(QuotaViolation::QueueLimit { .. })));
        assert_eq!(
            u.admit(&qs, QueueId(2), 0, &gpus(3), true),
            Err(QuotaViolation::CannotBorrow { queue: "b".into() })
        );
        // Lower-priority usage does not take the guarantee from a higher-priority job.
        u.add(q1, 0, &gpus(2));
        assert_eq!(
            u.admit(&qs, q1, 0, &gpus(1), false),
            Err(QuotaViolation::NotPreemptibleCannotBorrow { queue: "a".into() })
        );
        assert_eq!(u.admit(&qs, q1, 100, &gpus(1), false), Ok(Admission::WithinGuarantee));
        u.add(q1, 0, &gpus(3));
        assert!(matches!(u.admit(&qs, QueueId(2), 0, &gpus(2), true), Err(QuotaViolation::ProjectLimit { .. })));
        u.add(QueueId(3), 0, &gpus(5));
        assert!(matches!(u.admit(&qs, QueueId(3), 0, &gpus(1), true), Err(QuotaViolation::TenantLimit { .. })));
        assert_eq!(u.admit(&qs, QueueId(9), 0, &gpus(1), true), Err(QuotaViolation::UnknownQueue(QueueId(9))));
    }

    #[test]
    fn hierarchy_is_validated() {
        let mut bad = Queue::new(1, 0, "a");
        bad.guarantee = gpus(4);
        bad.limit = gpus(2);
        assert!(matches!(Queues::flat(vec![bad]), Err(QueueError::GuaranteeAboveLimit { .. })));
        assert_eq!(
            Queues::flat(vec![Queue::new(1, 0, "a"), Queue::new(1, 0, "b")]),
            Err(QueueError::DuplicateId("queue", 1))
        );
    }

    #[test]
    fn borrowed_jobs_are_those_past_the_guarantee_in_priority_then_age_order() {
        let qs = tree();
        let h = |job, priority, started_at, n| HeldUsage {
            job: JobId(job),
            queue: QueueId(1),
            priority,
            started_at,
            usage: gpus(n),
        };
        let held = vec![h(1, 0, 10, 1), h(2, 100, 20, 1), h(3, 0, 5, 1), h(4, 0, 1, 3)];
        // Guarantee 2 GPUs: job 2 (priority) then job 4 (oldest, 3 GPUs: does not fit) -> 4, 3, 1 borrowed.
        assert_eq!(classify_borrowed(&qs, &held), [JobId(1), JobId(3), JobId(4)].into_iter().collect());
    }
}
