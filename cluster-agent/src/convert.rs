//! Pure conversions between the wire types of grus-protocol and grus-scheduler's model:
//! inventory into a scheduler `Cluster`, a dispatched job into a scheduler `Job`, queue
//! settings into `Queues`, and a cluster's free capacity into the `Capacity` summary the
//! allocator reads.

use std::collections::BTreeMap;

use grus_protocol::wire::{
    self, CapacitySummary, DeviceRef, JobSpec, ModelCapacity, MovableRoom, NodeInfo, PoolCapacity, QueueQuota,
    ResourcesSpec, ShareHierarchy,
};
use grus_scheduler::cluster::{Cluster, ClusterError, DeviceShare, GpuSpec, Node, NodeId, NodeSpec};
use grus_scheduler::job::{Elastic, Job, JobError, JobId, QueueId, Resources, Spread, Task, TopologyScope};
use grus_scheduler::mig::{known_profile, MigSlot};
use grus_scheduler::pool::NodePools;
use grus_scheduler::queue::{Project, Queue, QueueError, Queues, ResourceKey, ResourceVector, Tenant, WeightScale};
use grus_scheduler::resources::MILLI_PER_GPU;

/// The backend's nodes, each with the pool its labels put it in (none without pools).
pub fn with_pools(mut nodes: Vec<NodeInfo>, pools: &NodePools) -> Vec<NodeInfo> {
    for n in &mut nodes {
        n.pool = pools.pool_of(&n.labels).map(str::to_owned);
    }
    nodes
}

pub fn cluster_of(nodes: &[NodeInfo]) -> Result<Cluster, ClusterError> {
    Cluster::new(
        nodes
            .iter()
            .map(|n| NodeSpec {
                name: n.name.clone(),
                labels: n.labels.clone(),
                taints: Vec::new(),
                rack: n.rack.clone(),
                pool: n.pool.clone(),
                cpu_milli: n.cpu_milli,
                memory_mib: n.memory_mib,
                max_pods: 1000,
                healthy: n.healthy,
                gpus: n
                    .gpus
                    .iter()
                    .map(|g| GpuSpec {
                        model: g.model.clone(),
                        memory_mib: g.memory_mib,
                        numa: g.numa,
                        nvlink_group: g.nvlink_group,
                        healthy: g.healthy,
                        mig: g.mig,
                    })
                    .collect(),
            })
            .collect(),
    )
}

/// Queue ids for the scheduler: the queues named by SetQueues in name order, then one more
/// unlimited queue, weight 1, for jobs whose queue the agent was not told about. With a
/// hierarchy, the queues sit under their projects and tenants, and what the hierarchy does not
/// name (a queue of an unknown project, a project of an unknown tenant, the unlisted queue)
/// under one more tenant and project, `(unlisted)`.
pub struct QueueMap {
    pub queues: Queues,
    ids: BTreeMap<String, QueueId>,
    /// Each queue's key, by id (the fallback's is `(unlisted)`).
    keys: Vec<String>,
    fallback: QueueId,
}

impl QueueMap {
    /// The queue of a job of `project` in its queue `queue`.
    pub fn id(&self, project: &str, queue: &str) -> QueueId {
        self.ids
            .get(&ShareHierarchy::queue_key(project, queue))
            .or_else(|| self.ids.get(queue))
            .copied()
            .unwrap_or(self.fallback)
    }

    /// The queue SetQueues names `key`, if it names one (`(unlisted)`: the fallback).
    pub fn id_of_key(&self, key: &str) -> Option<QueueId> {
        self.ids.get(key).copied().or((key == UNLISTED).then_some(self.fallback))
    }

    /// The key of queue `id`, as [`QueueMap::id_of_key`] reads it.
    pub fn key_of(&self, id: QueueId) -> &str {
        self.keys.get(id.0 as usize).map_or(UNLISTED, String::as_str)
    }
}

/// A resource as SetQueues and the book name it: `gpu`, `gpu/<model>`, `pool/<pool>`,
/// `cpu_milli`, `memory_mib` (`gpus`, `cpu` and `memory` are read too).
pub fn resource_key(name: &str) -> Option<ResourceKey> {
    Some(match name {
        "gpu" | "gpus" => ResourceKey::Gpus,
        "cpu" | "cpu_milli" => ResourceKey::Cpu,
        "memory" | "memory_mib" => ResourceKey::Memory,
        other => match (other.strip_prefix("gpu/"), other.strip_prefix("pool/")) {
            (Some(model), _) => ResourceKey::gpu_model(model),
            (_, Some(pool)) => ResourceKey::pool(pool),
            _ => return None,
        },
    })
}

/// The name [`resource_key`] reads back.
pub fn resource_name(key: &ResourceKey) -> String {
    match key {
        ResourceKey::Gpus => "gpu".into(),
        ResourceKey::GpuModel(model) => format!("gpu/{model}"),
        ResourceKey::Pool(pool) => format!("pool/{pool}"),
        ResourceKey::Cpu => "cpu_milli".into(),
        ResourceKey::Memory => "memory_mib".into(),
    }
}

fn resource_vector(amounts: &BTreeMap<String, u64>) -> ResourceVector {
    let mut v = ResourceVector::new();
    for (name, amount) in amounts {
        match resource_key(name) {
            Some(key) => v.set(key, *amount),
            None => tracing::warn!(key = name, "ignoring unknown quota resource"),
        }
    }
    v
}

const UNLISTED: &str = "(unlisted)";

/// The scheduler's queues as SetQueues describes them.
pub fn queues_of(
    weights: &BTreeMap<String, f64>,
    quotas: &BTreeMap<String, QueueQuota>,
    pool_weights: &BTreeMap<String, BTreeMap<String, f64>>,
    hierarchy: Option<&ShareHierarchy>,
) -> Result<QueueMap, QueueError> {
    let mut names: Vec<&String> = weights.keys().chain(quotas.keys()).collect();
    names.sort();
    names.dedup();
    let empty = ShareHierarchy::default();
    let levels = hierarchy.unwrap_or(&empty);
    // A weight must be a positive number (NaN would not even survive the book's JSON).
    fn bad(scope: &'static str, mut weights: impl Iterator<Item = f64>) -> Option<QueueError> {
        weights.position(|w| !(w.is_finite() && w > 0.0)).map(|i| QueueError::ZeroWeight(scope, i as u32))
    }
    let per_pool = pool_weights.values().flat_map(BTreeMap::values);
    if let Some(e) = bad("queue", weights.values().chain(per_pool).copied())
        .or_else(|| bad("tenant", levels.tenants.values().copied()))
        .or_else(|| bad("project", levels.projects.values().map(|p| p.weight)))
    {
        return Err(e);
    }
    // Weights are compared level by level, so one scale for all keeps every ratio.
    let scale = WeightScale::of(
        weights
            .values()
            .chain(pool_weights.values().flat_map(BTreeMap::values))
            .chain(levels.tenants.values())
            .chain(levels.projects.values().map(|p| &p.weight))
            .copied(),
    );
    let mut tenants: Vec<Tenant> = levels
        .tenants
        .iter()
        .enumerate()
        .map(|(i, (name, w))| Tenant { weight: scale.weight(*w), ..Tenant::new(i as u32, name) })
        .collect();
    let unlisted_tenant = tenants.len() as u32;
    tenants.push(Tenant { weight: scale.weight(1.0), ..Tenant::new(unlisted_tenant, UNLISTED) });
    let tenant_ix: BTreeMap<&str, u32> = levels.tenants.keys().zip(0..).map(|(n, i)| (n.as_str(), i)).collect();
    let mut projects: Vec<Project> = levels
        .projects
        .iter()
        .enumerate()
        .map(|(i, (name, p))| {
            let tenant = tenant_ix.get(p.tenant.as_str()).copied().unwrap_or(unlisted_tenant);
            Project { weight: scale.weight(p.weight), ..Project::new(i as u32, tenant, name) }
        })
        .collect();
    let unlisted_project = projects.len() as u32;
    projects.push(Project { weight: scale.weight(1.0), ..Project::new(unlisted_project, unlisted_tenant, UNLISTED) });
    let project_ix: BTreeMap<&str, u32> = levels.projects.keys().zip(0..).map(|(n, i)| (n.as_str(), i)).collect();
    let project_of = |key: &str| {
        hierarchy
            .and_then(|_| ShareHierarchy::project_of(key))
            .and_then(|p| project_ix.get(p).copied())
            .unwrap_or(unlisted_project)
    };
    // The control plane admits jobs against quotas before it dispatches them; a queue it did
    // not describe is therefore treated as entitled to everything it was sent.
    let unbounded = || ResourceVector::new().with(ResourceKey::Gpus, u64::MAX);
    let mut ids = BTreeMap::new();
    let mut queues = Vec::new();
    for (i, name) in names.into_iter().enumerate() {
        let mut q = Queue::new(i as u32, project_of(name), name);
        q.weight = scale.weight(weights.get(name).copied().unwrap_or(1.0));
        if let Some(per_pool) = pool_weights.get(name) {
            q.pool_weights = per_pool.iter().map(|(pool, w)| (pool.clone(), scale.weight(*w))).collect();
        }
        q.guarantee = unbounded();
        if let Some(quota) = quotas.get(name) {
            q.guarantee = resource_vector(&quota.guaranteed);
            q.limit = resource_vector(&quota.limit);
            q.can_borrow = quota.can_borrow;
        }
        ids.insert(name.clone(), q.id);
        queues.push(q);
    }
    let fallback = QueueId(queues.len() as u32);
    let mut unlisted = Queue::new(fallback.0, unlisted_project, UNLISTED);
    unlisted.weight = scale.weight(1.0);
    unlisted.guarantee = unbounded();
    queues.push(unlisted);
    let mut keys: Vec<String> = ids.keys().cloned().collect();
    keys.sort_by_key(|k| ids[k]);
    keys.push(UNLISTED.to_owned());
    Ok(QueueMap { queues: Queues::new(tenants, projects, queues)?, ids, keys, fallback })
}

/// The scheduler's view of a dispatched job. `submitted_at` and runtimes are in seconds.
pub fn job_of(spec: &JobSpec, queue: QueueId) -> Result<Job, JobError> {
    let job = Job {
        id: JobId(spec.id),
        queue,
        name: spec.name.clone(),
        priority: spec.priority,
        preemptible: spec.preemptible,
        may_preempt: spec.may_preempt,
        checkpoints: spec.checkpoint.is_some(),
        tasks: spec
            .tasks
            .iter()
            .map(|t| Task {
                name: t.name.clone(),
                replicas: t.replicas,
                resources: Resources {
                    gpus: t.resources.gpus,
                    gpu_milli: if t.resources.gpus == 0 { 0 } else { t.resources.gpu_milli.unwrap_or(MILLI_PER_GPU) },
                    gpu_memory_mib: t.resources.gpu_memory_mib,
                    gpu_models: t.resources.gpu_models.clone(),
                    mig_profile: t.resources.mig_profile.clone(),
                    cpu_milli: t.resources.cpu_milli,
                    memory_mib: t.resources.memory_mib,
                },
                topology: match t.topology.map(|s| s.scope).unwrap_or_default() {
                    wire::TopologyScope::Any => TopologyScope::Any,
                    wire::TopologyScope::Node => TopologyScope::Node,
                    wire::TopologyScope::Nvlink => TopologyScope::NvLink,
                    wire::TopologyScope::Rack => TopologyScope::Rack,
                },
            })
            .collect(),
        min_members: spec.gang.map_or(0, |g| g.min_members),
        elastic: spec.elastic.map(|e| Elastic { min: e.min, max: e.max }),
        submitted_at: (spec.submitted_at_ms.max(0) / 1000) as u64,
        min_runtime_s: spec.min_runtime_s.unwrap_or(0),
        predicted_runtime_s: spec.predicted_runtime_s,
        max_runtime_s: spec.max_runtime_s,
        node_selector: spec.node_selector.clone(),
        tolerations: Vec::new(),
        pools: spec.pools.clone(),
        // An inference service's replicas spread; the book adds where the others run.
        spread: spec
            .service
            .as_ref()
            .map(|s| Spread { group: format!("{}/{}", spec.project, s.name), from: Vec::new() }),
        interactive: spec.workspace.is_some(),
    };
    job.validate()?;
    Ok(job)
}

/// Whole GPUs held by jobs consolidation may move, per node: (device index, the job's
/// priority), one entry per device.
pub type MovableGpus = BTreeMap<NodeId, Vec<(u8, i32)>>;

/// What the allocator needs to choose this cluster: per model, free whole GPUs per node,
/// free shares per device, the largest gang per topology scope, and the room consolidation
/// could make on each node (`movable`: see [`MovableGpus`]).
pub fn capacity_of(cluster: &Cluster, pending_jobs: u32, movable: &MovableGpus) -> CapacitySummary {
    let models = models_of(cluster, movable, |_| true);
    let pools = cluster
        .pool_ids()
        .map(|id| {
            let in_pool = |n: &Node| n.pool == Some(id);
            PoolCapacity {
                name: cluster.pool_name(id).to_owned(),
                nodes: cluster.nodes().iter().filter(|n| in_pool(n)).count() as u32,
                models: models_of(cluster, movable, in_pool).into_iter().filter(|m| m.total_gpus > 0).collect(),
            }
        })
        .collect();
    let healthy = cluster.nodes().iter().filter(|n| n.healthy);
    let (cpu, mem) = healthy.fold((0, 0), |(c, m), n| (c + n.cpu_free(), m + n.memory_free()));
    CapacitySummary { models, cpu_free_milli: cpu, memory_free_mib: mem, pending_jobs, pools }
}

/// A replica's device on the wire: its index, milli and, for a MIG instance, where it starts.
pub fn device_ref_of(d: &DeviceShare) -> DeviceRef {
    DeviceRef { index: u32::from(d.gpu), milli: d.milli, mig_start: d.mig.map(|m| m.start) }
}

/// The scheduler's device share for a device a replica of a task with `resources` holds (the
/// MIG slot from the task's profile and the device's start).
pub fn device_share_of(d: &DeviceRef, resources: &ResourcesSpec) -> DeviceShare {
    let mig = match (d.mig_start, resources.mig_profile.as_deref().and_then(known_profile)) {
        (Some(start), Some(profile)) => Some(MigSlot::of(profile, start)),
        _ => None,
    };
    DeviceShare {
        gpu: d.index as u8,
        milli: d.milli,
        memory_mib: if mig.is_some() { 0 } else { resources.gpu_memory_mib.unwrap_or(0) },
        mig,
    }
}

/// Per model, the capacity of the nodes `include` selects.
fn models_of(cluster: &Cluster, movable: &MovableGpus, include: impl Fn(&Node) -> bool) -> Vec<ModelCapacity> {
    let mut models = Vec::new();
    for model in cluster.models().ids() {
        let mut m = ModelCapacity { model: cluster.models().name(model).to_string(), ..ModelCapacity::default() };
        let mut per_rack: BTreeMap<u32, u32> = BTreeMap::new();
        let (mut best_node, mut best_nvlink) = (0u32, 0u32);
        for node in cluster.nodes().iter().filter(|n| include(n)) {
            let gpus: Vec<_> = node.gpus.iter().filter(|g| g.model == model).collect();
            m.total_gpus += gpus.len() as u32;
            if !node.healthy {
                continue;
            }
            let whole = gpus.iter().filter(|g| g.is_whole_free()).count() as u32;
            if whole > 0 {
                m.free_whole_per_node.push(whole);
            }
            let moves: Vec<i32> = movable
                .get(&node.id)
                .into_iter()
                .flatten()
                .filter(|(gpu, _)| node.gpus.get(*gpu as usize).is_some_and(|g| g.model == model && g.healthy))
                .map(|(_, priority)| *priority)
                .collect();
            if let Some(&max_priority) = moves.iter().max() {
                m.movable_per_node.push(MovableRoom { free: whole, movable: moves.len() as u32, max_priority });
            }
            for g in &gpus {
                if g.healthy && g.mig.is_none() && g.used_milli > 0 && g.used_milli < MILLI_PER_GPU {
                    m.free_milli_per_device.push(g.free_milli());
                }
                if let Some(mig) = g.mig.filter(|_| g.healthy) {
                    for p in mig.profiles {
                        let more = mig.layout.instances_left(p);
                        *m.mig_free.entry(p.name.to_owned()).or_default() += more;
                    }
                }
            }
            best_node = best_node.max(whole);
            let mut groups: BTreeMap<u8, u32> = BTreeMap::new();
            for g in gpus.iter().filter(|g| g.is_whole_free()) {
                *groups.entry(g.nvlink_group).or_default() += 1;
            }
            best_nvlink = best_nvlink.max(groups.values().copied().max().unwrap_or(0));
            if let Some(r) = node.rack {
                *per_rack.entry(r.0).or_default() += whole;
            }
        }
        m.free_whole_per_node.sort_unstable_by(|a, b| b.cmp(a));
        m.movable_per_node.sort_unstable_by_key(|r| (std::cmp::Reverse(r.free + r.movable), r.max_priority, r.free));
        m.free_milli_per_device.sort_unstable_by(|a, b| b.cmp(a));
        m.largest_gang_gpus = BTreeMap::from([
            ("node".to_string(), best_node),
            ("nvlink".to_string(), best_nvlink),
            ("rack".to_string(), per_rack.values().copied().max().unwrap_or(best_node)),
            ("any".to_string(), m.free_whole_per_node.iter().sum()),
        ]);
        models.push(m);
    }
    models
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sim::spec::parse_compact;
    use grus_scheduler::cluster::{DeviceShare, ReplicaAllocation};
    use grus_scheduler::pool::PoolDef;

    #[test]
    fn a_workspace_is_interactive_work_and_a_service_replica_spreads() {
        use grus_protocol::wire::{IdleAction, ServiceReplicaSpec, WorkspaceSpec};
        use grus_testkit::spec::{job, task};
        let mut spec = job(7, vec![task("main", 1, 1, "A100-80GB")], 60.0);
        let batch = job_of(&spec, QueueId(0)).unwrap();
        assert!(!batch.interactive && batch.spread.is_none());
        spec.workspace = Some(WorkspaceSpec { port: 8888, idle_after_s: 600, idle_action: IdleAction::Stop });
        assert!(job_of(&spec, QueueId(0)).unwrap().interactive);
        spec.workspace = None;
        spec.service = Some(ServiceReplicaSpec { name: "chat".into(), revision: 1, port: 8000, readiness: None });
        let replica = job_of(&spec, QueueId(0)).unwrap();
        assert!(!replica.interactive);
        assert_eq!(replica.spread.map(|s| s.group), Some("vision/chat".to_owned()));
    }

    #[test]
    fn capacity_reports_free_whole_gpus_shares_and_gangs() {
        let mut c = cluster_of(&parse_compact("2x8xA100-80GB,1x2xT4").unwrap()).unwrap();
        let a = ReplicaAllocation {
            node: NodeId(0),
            cpu_milli: 0,
            memory_mib: 0,
            devices: vec![DeviceShare::plain(0, 1000, 0), DeviceShare::plain(1, 300, 0)],
        };
        c.allocate(&a).unwrap();
        let cap = capacity_of(&c, 3, &BTreeMap::from([(NodeId(0), vec![(0, 100)])]));
        let a100 = cap.models.iter().find(|m| m.model == "A100-80GB").unwrap();
        assert_eq!(a100.total_gpus, 16);
        assert_eq!(a100.free_whole_per_node, [8, 6]);
        assert_eq!(a100.free_milli_per_device, [700]);
        assert_eq!(a100.largest_gang_gpus["node"], 8);
        assert_eq!(a100.largest_gang_gpus["any"], 14);
        assert_eq!(cap.pending_jobs, 3);
        // GPU 0 of node 0 is held by a job that may move: node 0 would have 7 free.
        assert_eq!(a100.movable_per_node, [MovableRoom { free: 6, movable: 1, max_priority: 100 }]);
    }

    #[test]
    fn nodes_get_their_pools_and_capacity_is_reported_per_pool() {
        let mut nodes = parse_compact("2x8xA100-80GB,1x2xT4").unwrap();
        nodes[0].labels.insert("pool".into(), "train".into());
        let pools = NodePools::new(vec![PoolDef::parse("train=pool=train").unwrap()]).unwrap();
        let nodes = with_pools(nodes, &pools);
        let names: Vec<Option<&str>> = nodes.iter().map(|n| n.pool.as_deref()).collect();
        assert_eq!(names, [Some("train"), Some("default"), Some("default")]);
        let cap = capacity_of(&cluster_of(&nodes).unwrap(), 0, &MovableGpus::new());
        let summary: Vec<String> = cap
            .pools
            .iter()
            .map(|p| {
                let models: Vec<String> = p.models.iter().map(|m| format!("{} {}", m.model, m.total_gpus)).collect();
                format!("{} ({} nodes): {}", p.name, p.nodes, models.join(", "))
            })
            .collect();
        assert_eq!(summary, ["default (2 nodes): A100-80GB 8, T4 2", "train (1 nodes): A100-80GB 8"]);
        assert_eq!(cap.models.iter().map(|m| m.total_gpus).sum::<u32>(), 18, "the whole cluster as before");
        assert!(capacity_of(&cluster_of(&with_pools(nodes, &NodePools::default())).unwrap(), 0, &MovableGpus::new())
            .pools
            .is_empty());
    }

    #[test]
    fn queues_get_stable_ids_and_a_fallback() {
        let weights = BTreeMap::from([("b".to_string(), 2.0), ("a".to_string(), 1.0)]);
        let quotas = BTreeMap::from([(
            "a".to_string(),
            QueueQuota {
                guaranteed: BTreeMap::from([("gpu/T4".into(), 2000)]),
                limit: BTreeMap::new(),
                can_borrow: false,
            },
        )]);
        let pool_weights = BTreeMap::from([("b".to_string(), BTreeMap::from([("train".to_string(), 5.0)]))]);
        let map = queues_of(&weights, &quotas, &pool_weights, None).unwrap();
        assert_eq!(map.id("p", "a"), QueueId(0));
        assert_eq!(map.id("p", "b"), QueueId(1));
        assert_eq!(map.id("p", "zzz"), QueueId(2));
        for id in [QueueId(0), QueueId(1), QueueId(2)] {
            assert_eq!(map.id_of_key(map.key_of(id)), Some(id));
        }
        assert_eq!(map.id_of_key("nope"), None);
        for name in ["gpu", "gpu/A100-80GB", "pool/train", "cpu_milli", "memory_mib"] {
            assert_eq!(resource_key(name).map(|k| resource_name(&k)).as_deref(), Some(name));
        }
        let a = map.queues.queue(QueueId(0)).unwrap();
        assert_eq!(a.guarantee.get(&ResourceKey::gpu_model("T4")), 2000);
        assert!(!a.can_borrow);
        let b = map.queues.queue(QueueId(1)).unwrap();
        assert_eq!((b.weight, b.weight_in("train"), b.weight_in("infer")), (2000, 5000, 2000));
        assert_eq!(map.queues.queue(QueueId(2)).unwrap().weight, 1000, "the unlisted queue weighs 1");
        for w in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let weights = BTreeMap::from([("a".to_string(), w)]);
            assert!(queues_of(&weights, &quotas, &pool_weights, None).is_err(), "{w}");
        }
    }

    #[test]
    fn a_hierarchy_puts_queues_under_their_projects_and_tenants() {
        let key = ShareHierarchy::queue_key;
        let weights =
            BTreeMap::from([(key("vision", "default"), 1.0), (key("nlp", "default"), 1.0), (key("ghost", "q"), 1.0)]);
        let hierarchy = ShareHierarchy {
            tenants: BTreeMap::from([("acme".into(), 3.0), ("beta".into(), 0.5)]),
            projects: BTreeMap::from([
                ("vision".into(), wire::ProjectShare { tenant: "acme".into(), weight: 2.0 }),
                ("nlp".into(), wire::ProjectShare { tenant: "beta".into(), weight: 1.0 }),
                ("lost".into(), wire::ProjectShare { tenant: "nobody".into(), weight: 1.0 }),
            ]),
        };
        let map = queues_of(&weights, &BTreeMap::new(), &BTreeMap::new(), Some(&hierarchy)).unwrap();
        let qs = &map.queues;
        let tenant_of = |project: &str, queue: &str| {
            let q = map.id(project, queue);
            let t = qs.project(qs.project_of(q).unwrap()).tenant;
            (qs.project(qs.project_of(q).unwrap()).name.clone(), qs.tenant(t).name.clone(), qs.tenant(t).weight)
        };
        assert_eq!(tenant_of("vision", "default"), ("vision".into(), "acme".into(), 3000));
        assert_eq!(tenant_of("nlp", "default"), ("nlp".into(), "beta".into(), 500), "a half keeps its ratio");
        assert_ne!(map.id("vision", "default"), map.id("nlp", "default"), "queue names repeat across projects");
        // Neither a queue of an unknown project nor one the agent was not told of is lost.
        assert_eq!(tenant_of("ghost", "q").0, UNLISTED);
        assert_eq!(tenant_of("vision", "new").0, UNLISTED);
        let lost = qs.projects().find(|p| p.name == "lost").unwrap();
        assert_eq!(qs.tenant(lost.tenant).name, UNLISTED);
    }
}
