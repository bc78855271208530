//! The placement primitives the phases share: a job's demands on this cluster, its gang
//! placed all-or-nothing and admitted against the quotas, topology domains for more replicas,
//! masks of reserved nodes, and a cheap test of whether a gang may fit at all.

use crate::cluster::{Cluster, NodeId, PoolId, ReplicaAllocation};
use crate::demand::Demand;
use crate::explain::{FilterReason, NodeRejections, Unplaced};
use crate::job::{Job, TopologyScope};
use crate::place::{demand_models, Constraints, Domain, GangFailure, Placer};
use crate::queue::{Admission, Queues, QuotaViolation, ResourceKey, ResourceVector, Usage};
use crate::resources::{ModelSet, ModelTable};

use super::{Explain, Fail, PlacedReplica};

pub(super) fn constraints(job: &Job, pool: Option<PoolId>) -> Constraints<'_> {
    Constraints { node_selector: &job.node_selector, tolerations: &job.tolerations, pool }
}

/// The task of a job whose gang is one required replica (`req`: required and wanted replicas
/// per task); `None` for a larger gang.
pub(super) fn single_replica_task(req: &[(u32, u32)]) -> Option<usize> {
    let mut required = req.iter().enumerate().filter(|(_, r)| r.0 > 0);
    let (Some((task, &(1, _))), None) = (required.next(), required.next()) else { return None };
    Some(task)
}

/// For a job whose gang is one replica, whether `nodes` may hold it: filtered
/// with the job's selector and tolerations, in any pool and NVLink group. A necessary
/// condition for the replica to fit there, never a false no. Searches that free room step by
/// step (moves, backfill) use it: once such a job does not fit, only the nodes the next step
/// frees room on can change that, so those alone are checked instead of a whole placement.
/// `None` for a larger gang, which may combine room from anywhere.
pub(super) fn single_replica_may_fit(
    cluster: &Cluster,
    job: &Job,
    demands: &[Demand],
    req: &[(u32, u32)],
    nodes: impl IntoIterator<Item = NodeId>,
) -> Option<bool> {
    let task = single_replica_task(req)?;
    let cons = constraints(job, None);
    let demand = &demands[task];
    Some(nodes.into_iter().any(|n| crate::place::filter_node(cluster.node(n), demand, &cons, Domain::Anywhere).is_ok()))
}

/// Counts the shares just placed at their booked load on the devices' measured busy %: the
/// profiler has not seen them yet, and without this every share placed in one cycle would be
/// judged against the same idle reading (`Demand::would_crowd`), so a burst of them could
/// crowd one device past the sharing limit. Devices without metrics stay unjudged.
pub(super) fn expect_share_load(cluster: &mut Cluster, placed: &[PlacedReplica]) {
    for p in placed {
        let node = p.allocation.node;
        for d in p.allocation.devices.iter().filter(|d| d.milli < crate::resources::MILLI_PER_GPU) {
            let Some(mut live) = cluster.node(node).gpus.get(d.gpu as usize).and_then(|g| g.live) else { continue };
            live.busy_pct = (live.busy_pct + d.milli as f32 / 10.0).min(100.0);
            cluster.set_live_utilization(node, d.gpu, Some(live));
        }
    }
}

/// The pools a job's gang is tried in, in order: any node (`None`) when it names no pool, else
/// each pool it names that this cluster has. Empty: it names pools and the cluster has none.
pub(super) fn pool_attempts(cluster: &Cluster, job: &Job) -> Vec<Option<PoolId>> {
    if job.pools.is_empty() {
        return vec![None];
    }
    let mut out: Vec<Option<PoolId>> = Vec::with_capacity(job.pools.len());
    for id in job.pools.iter().filter_map(|p| cluster.pool_id(p)) {
        if !out.contains(&Some(id)) {
            out.push(Some(id));
        }
    }
    out
}

/// Why a gang tried pool by pool fits nowhere: for a job naming no pool, its one failure as it
/// is; else per pool (nodes outside the pool left out of the counts).
fn in_pools(cluster: &Cluster, job: &Job, mut failures: Vec<(Option<PoolId>, Unplaced)>) -> Unplaced {
    if failures.is_empty() {
        return Unplaced::UnknownPool { pools: job.pools.clone() };
    }
    if job.pools.is_empty() && failures.len() == 1 {
        return failures.pop().expect("one failure").1;
    }
    let pools = failures
        .into_iter()
        .map(|(pool, mut why)| {
            if let Unplaced::NoFit { nodes, .. } = &mut why {
                nodes.counts.remove(&FilterReason::OtherPool);
            }
            let name = pool.map_or_else(|| "(any)".to_string(), |p| cluster.pool_name(p).to_string());
            (name, Box::new(why))
        })
        .collect();
    Unplaced::InPools { pools }
}

/// The job's tasks' demands against `models`, shares under the sharing limit `sharing`.
pub(super) fn resolve(job: &Job, models: &ModelTable, sharing: Option<u8>) -> Result<Vec<Demand>, Unplaced> {
    job.tasks
        .iter()
        .map(|t| {
            Demand::resolve(&t.resources, models).map(|d| d.sharing_under(sharing)).ok_or_else(|| {
                Unplaced::UnknownGpuModel { task: t.name.clone(), models: t.resources.gpu_models.clone() }
            })
        })
        .collect()
}

/// The usage of the gang whatever models it lands on: total GPU milli, CPU, memory, and the
/// pool's GPUs when it may use one pool only.
pub(super) fn lower_bound(job: &Job, req: &[(u32, u32)]) -> ResourceVector {
    let (mut gpu, mut cpu, mut mem) = (0u64, 0u64, 0u64);
    for (t, &(r, _)) in job.tasks.iter().zip(req) {
        gpu += r as u64 * t.resources.total_gpu_milli();
        cpu += r as u64 * t.resources.cpu_milli;
        mem += r as u64 * t.resources.memory_mib;
    }
    let v =
        ResourceVector::new().with(ResourceKey::Gpus, gpu).with(ResourceKey::Cpu, cpu).with(ResourceKey::Memory, mem);
    match job.pools.as_slice() {
        [only] => v.with(ResourceKey::pool(only), gpu),
        _ => v,
    }
}

/// The demands with GPU model `name` taken out of every GPU demand, or `None` when that
/// changes nothing or leaves a demand with no model.
pub(super) fn without_model(demands: &[Demand], models: &ModelTable, name: &str) -> Option<Vec<Demand>> {
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

pub(super) fn release_all(cluster: &mut Cluster, placed: &[PlacedReplica]) {
    for p in placed.iter().rev() {
        cluster.release(&p.allocation).expect("releasing an allocation made in this attempt");
    }
}

/// Places the gang (required replicas of every task, each task in its topology scope) or
/// nothing: whole in the first of its pools that can take it.
pub(super) fn place_required(
    placer: &Placer<'_>,
    cluster: &mut Cluster,
    job: &Job,
    demands: &[Demand],
    req: &[(u32, u32)],
    explain: Explain,
) -> Result<Vec<PlacedReplica>, Unplaced> {
    let mut failures = Vec::new();
    for pool in pool_attempts(cluster, job) {
        match place_required_in(placer, cluster, job, demands, req, explain, pool) {
            Ok(placed) => return Ok(placed),
            Err(u) => failures.push((pool, u)),
        }
    }
    Err(in_pools(cluster, job, failures))
}

/// [`place_required`] in one pool (`None`: on any node).
fn place_required_in(
    placer: &Placer<'_>,
    cluster: &mut Cluster,
    job: &Job,
    demands: &[Demand],
    req: &[(u32, u32)],
    explain: Explain,
    pool: Option<PoolId>,
) -> Result<Vec<PlacedReplica>, Unplaced> {
    let cons = constraints(job, pool);
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

/// Places the gang and admits it against the quotas on the models and in the pool it actually
/// got, pool by pool in the job's order; when a model's quota is the obstacle, tries again
/// without that model. A job naming no pool that meets a pool's quota is tried in each other
/// pool. On success the allocations are applied to `cluster` (not to `usage`).
///
/// Fails with the quota violation when quota alone stopped it in every pool tried, else with
/// why it fits nowhere ([`Unplaced::InPools`] for a job naming pools).
#[allow(clippy::too_many_arguments)]
pub(super) fn place_admitted(
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
    // A soft spread: first with its siblings' nodes masked, then (when that fails) anywhere.
    let siblings: Vec<NodeId> = match &job.spread {
        Some(spread) if !spread.from.is_empty() => {
            cluster.nodes().iter().filter(|n| n.healthy && spread.from.contains(&n.name)).map(|n| n.id).collect()
        }
        _ => Vec::new(),
    };
    if !siblings.is_empty() {
        set_health(cluster, &siblings, false);
        let apart =
            place_admitted_anywhere(placer, cluster, usage, queues, job, demands, req, require_guarantee, Explain::No);
        set_health(cluster, &siblings, true);
        if let Ok(done) = apart {
            return Ok(done);
        }
    }
    place_admitted_anywhere(placer, cluster, usage, queues, job, demands, req, require_guarantee, explain)
}

/// [`place_admitted`] without the spread.
#[allow(clippy::too_many_arguments)]
fn place_admitted_anywhere(
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
    // One pool (`None`: any node); a model's quota as the obstacle: again without that model.
    let in_pool = |cluster: &mut Cluster, pool: Option<PoolId>| {
        let mut demands = demands.to_vec();
        loop {
            let placed =
                place_required_in(placer, cluster, job, &demands, req, explain, pool).map_err(Fail::Capacity)?;
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
    };
    let mut attempts = pool_attempts(cluster, job);
    let mut failures: Vec<(Option<PoolId>, Unplaced)> = Vec::new();
    let mut violations: Vec<QuotaViolation> = Vec::new();
    let mut i = 0;
    while i < attempts.len() {
        let pool = attempts[i];
        i += 1;
        match in_pool(cluster, pool) {
            Ok(done) => return Ok(done),
            Err(Fail::Quota(v)) => {
                if let (None, Some(blocked)) = (pool, v.pool().and_then(|p| cluster.pool_id(p))) {
                    attempts.extend(cluster.pool_ids().filter(|p| *p != blocked).map(Some));
                }
                let (queue, resource) = v.describe();
                failures.push((pool, Unplaced::QueueLimit { queue, resource }));
                violations.push(v);
            }
            Err(Fail::Capacity(u)) => failures.push((pool, u)),
            Err(other) => return Err(other),
        }
    }
    if !violations.is_empty() && violations.len() == failures.len() {
        return Err(Fail::Quota(violations.swap_remove(0)));
    }
    // A job naming no pool whose pool-by-pool retries all failed: the first failure says why.
    if job.pools.is_empty() {
        return Err(Fail::Capacity(
            failures.into_iter().find(|(_, u)| u.is_no_fit()).map(|(_, u)| u).expect("not all quota"),
        ));
    }
    Err(Fail::Capacity(in_pools(cluster, job, failures)))
}

/// Lifts (`true`) or restores (`false`) the mask on reserved nodes.
pub(super) fn set_health(cluster: &mut Cluster, nodes: &[NodeId], healthy: bool) {
    for &n in nodes {
        cluster.set_node_health(n, healthy);
    }
}

/// Gives back an allocation that was released a moment ago, even where its node or devices are
/// masked or unhealthy now (the job was there; health only stops new placements).
pub(super) fn force_allocate(cluster: &mut Cluster, a: &ReplicaAllocation) {
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
pub(super) fn domain_of(cluster: &Cluster, scope: TopologyScope, first: &ReplicaAllocation) -> Domain {
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

/// A cheap necessary condition for the gang to fit, from the capacity index alone: enough
/// whole free GPUs of an allowed model, counted per node in multiples of a replica's GPUs, for
/// every whole-GPU task; a device with room for every fractional task. A failed placement
/// costs a scan of every node (to explain it); the preemption search asks often, so it asks
/// this first.
pub(super) fn may_fit(cluster: &Cluster, demands: &[Demand], req: &[(u32, u32)]) -> bool {
    let index = cluster.index();
    demands.iter().zip(req).all(|(d, &(required, _))| {
        // MIG capacity is not in the index; the placement itself decides.
        if required == 0 || d.gpus == 0 || d.mig.is_some() {
            return true;
        }
        let models = demand_models(cluster, d);
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
