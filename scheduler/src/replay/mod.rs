//! Trace replay: the FGD paper's published experiment on the Alibaba GPU trace v2023
//! (`shared/data/alibaba-gpu-v2023/README.md`), run on this crate's cluster model.
//!
//! One run is one trace, one policy, one seed and a tune ratio (1.3 in the paper):
//! 1. the pods are sorted by name; the seeded RNG makes one throwaway draw, shuffles them,
//!    then tunes the total GPU demand to `tune · capacity` (clones appended, or random pods
//!    removed; see [`workload::arrivals`]);
//! 2. the node ranks for tie-breaks are a permutation drawn after tuning (node `i` in name
//!    order gets rank `perm[i]`);
//! 3. pods arrive one at a time and never leave; each goes to the feasible node the policy
//!    scores highest (ties to the smallest rank) or, if none is feasible, is dropped, its
//!    demand still counting as arrived;
//! 4. after every event the allocation curve records (arrived, allocated) GPU milli, and the
//!    fragmentation curve the cluster's Σ_n F(n) against the typical workload ([`metrics`]).
//!
//! Nodes are [`Cluster`] nodes: feasibility is [`filter_node`] over the capacity index's
//! candidates and every placement goes through [`Cluster::allocate`]. All randomness comes
//! from one [`SeededRng`] per run; a run is a pure function of its inputs (the caller times
//! it).

pub mod metrics;
pub mod policy;
pub mod sharing;
pub mod timeline;
pub mod variants;
pub mod workload;

use std::collections::HashMap;

use crate::cluster::{Cluster, ClusterError, NodeId, NodeSpec, ReplicaAllocation};
use crate::demand::Demand;
use crate::place::{candidate_nodes, filter_node, Constraints, Domain};
use crate::resources::{ModelSet, ModelTable};
use crate::rng::SeededRng;
use crate::score::fgd::node_fragmentation;
use crate::score::TypicalDemand;
use crate::trace::{NodeRow, PodRow};

pub use metrics::{AllocationCurve, FragmentationCurve};
pub use policy::PolicyKind;
use policy::{Engine, PodPlan};
use workload::{ShapeKey, TypicalShape};

/// Share of the trace's pods the typical workload covers, in percent.
pub use crate::score::TYPICAL_COVERAGE_PCT;

/// Last column of the allocation curve (percent of capacity arrived).
pub const MAX_COLUMN: usize = 130;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReplayError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("the node list has no GPUs: the allocation curve is undefined")]
    NoGpus,
    #[error("tune must be a positive finite ratio, got {0}")]
    BadTune(String),
    #[error("pod {0} has no creation or deletion time: the pod list cannot be replayed in time")]
    NoTimes(String),
    #[error("time replay: {0}")]
    BadTimeline(String),
}

/// A trace ready to replay: nodes and pods in name order and the typical workload. Built once
/// and shared by the runs over seeds and policies.
#[derive(Clone, Debug)]
pub struct Trace {
    nodes: Vec<NodeRow>,
    pods: Vec<PodRow>,
    typical: Vec<TypicalShape>,
    capacity_milli: u64,
}

impl Trace {
    pub fn new(nodes: &[NodeRow], pods: &[PodRow]) -> Result<Trace, ReplayError> {
        let mut nodes = nodes.to_vec();
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        let capacity_milli: u64 = nodes.iter().map(|n| n.gpus as u64 * 1000).sum();
        if capacity_milli == 0 {
            return Err(ReplayError::NoGpus);
        }
        Ok(Trace {
            typical: workload::typical_workload(pods, TYPICAL_COVERAGE_PCT),
            pods: workload::sort_by_name(pods),
            nodes,
            capacity_milli,
        })
    }

    pub fn capacity_milli(&self) -> u64 {
        self.capacity_milli
    }

    pub fn typical(&self) -> &[TypicalShape] {
        &self.typical
    }

    fn cluster(&self) -> Result<Cluster, ClusterError> {
        Cluster::new(
            self.nodes
                .iter()
                .map(|n| NodeSpec::new(&n.name, n.cpu_milli, n.memory_mib, n.gpus as usize, &n.model))
                .collect(),
        )
    }
}

/// What one run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    pub seed: u64,
    pub pods_arrived: usize,
    pub pods_placed: usize,
    pub pods_failed: usize,
    /// GPU allocation (% of capacity) at arrived demand 0..=130 % of capacity.
    pub gpu_alloc_pct: Vec<Option<f64>>,
    /// Fragmented GPU milli (Σ_n F(n) against the typical workload, % of capacity), same bins.
    pub gpu_frag_pct: Vec<Option<f64>>,
}

/// A demand the cluster can evaluate. Model lists naming no model of this cluster resolve to
/// `gpus = u32::MAX`: no node has that many devices, so the pod fits nowhere and the
/// typical shape finds every idle milli fragmented, as in the simulator.
fn demand_of(cpu_milli: u64, memory_mib: u64, num_gpu: u32, gpu_milli: u32, spec: &str, models: &ModelTable) -> Demand {
    let names: Vec<String> = spec.split('|').filter(|s| !s.is_empty()).map(str::to_string).collect();
    let resolved = if num_gpu == 0 { Some(ModelSet::ANY) } else { models.resolve(&names) };
    Demand {
        gpus: if resolved.is_some() { num_gpu } else { u32::MAX },
        milli: gpu_milli,
        gpu_memory_mib: 0,
        models: resolved.unwrap_or(ModelSet::ANY),
        cpu_milli,
        memory_mib,
        mig: None,
        sharing_busy_limit_pct: None,
    }
}

/// The typical workload as demands against `models`.
pub fn typical_demands(typical: &[TypicalShape], models: &ModelTable) -> Vec<TypicalDemand> {
    typical
        .iter()
        .map(|t| TypicalDemand {
            demand: demand_of(t.key.cpu_milli, 0, t.key.num_gpu, t.key.gpu_milli, &t.key.gpu_spec, models),
            weight: t.weight,
        })
        .collect()
}

/// Replays `trace` under `policy` with `seed`, tuned to `tune · capacity` of GPU demand.
pub fn run(trace: &Trace, policy: PolicyKind, seed: u64, tune: f64) -> Result<RunResult, ReplayError> {
    run_with_load(trace, policy, seed, tune, None).map(|(r, _)| r)
}

/// [`run`], with synthetic GPU load when `load` is given ([`sharing`]): each placed pod drives
/// its devices, the devices report it as measured busy %, and shares are placed under
/// `load.limit_pct`. Returns the busy-% distribution of the shared devices at the end too.
pub fn run_with_load(
    trace: &Trace,
    policy: PolicyKind,
    seed: u64,
    tune: f64,
    load: Option<sharing::SyntheticLoad>,
) -> Result<(RunResult, Option<sharing::SharedBusy>), ReplayError> {
    if !(tune.is_finite() && tune > 0.0) {
        return Err(ReplayError::BadTune(tune.to_string()));
    }
    let mut cluster = trace.cluster()?;
    let mut rng = SeededRng::new(seed);
    // Go: int64(float64(capacity) * ratio).
    let target = (trace.capacity_milli as f64 * tune) as u64;
    let arrivals = workload::arrivals(&trace.pods, target, &mut rng);
    let ranks: Vec<u32> = rng.permutation(trace.nodes.len()).into_iter().map(|r| r as u32).collect();

    let models = cluster.models().clone();
    let workload = typical_demands(&trace.typical, &models);
    let mut shapes: HashMap<ShapeKey, usize> = HashMap::new();
    let plans: Vec<PodPlan> = trace
        .pods
        .iter()
        .map(|p| {
            let key = ShapeKey::of(p);
            let next = shapes.len();
            let shape = *shapes.entry(key.clone()).or_insert(next);
            let demand = demand_of(p.cpu_milli, p.memory_mib, p.num_gpu, p.gpu_milli, &p.gpu_spec, &models)
                .sharing_under(load.and_then(|l| l.limit_pct));
            PodPlan {
                scored: Demand { cpu_milli: key.cpu_milli, ..demand.clone() },
                demand,
                shape,
                arrived_milli: p.total_gpu_milli(),
            }
        })
        .collect();

    let mut engine = Engine::new(policy, &workload, ranks, shapes.len());
    let mut curve = AllocationCurve::new(trace.capacity_milli, MAX_COLUMN);
    let mut frag_curve = FragmentationCurve::new(trace.capacity_milli, MAX_COLUMN);
    // Σ_n F(n), kept up to date one node at a time: only the node that took a pod changes.
    let mut node_frag: Vec<f64> = cluster.nodes().iter().map(|n| node_fragmentation(n, &workload)).collect();
    let mut frag: f64 = node_frag.iter().sum();
    let cons = Constraints::none();
    let (mut arrived, mut placed) = (0u64, 0usize);
    let mut feasible: Vec<NodeId> = Vec::with_capacity(trace.nodes.len());
    let mut busy = load.map(|_| sharing::DeviceLoad::new(seed));
    for a in &arrivals {
        let plan = &plans[a.row];
        arrived += plan.arrived_milli;
        feasible.clear();
        if plan.demand.gpus != u32::MAX {
            feasible.extend(
                candidate_nodes(&cluster, &plan.demand, Domain::Anywhere)
                    .filter(|&n| filter_node(cluster.node(n), &plan.demand, &cons, Domain::Anywhere).is_ok()),
            );
        }
        if !feasible.is_empty() {
            let (node, devices) = engine.choose(&cluster, plan, &feasible, &mut rng);
            let alloc = ReplicaAllocation {
                node,
                cpu_milli: plan.demand.cpu_milli,
                memory_mib: plan.demand.memory_mib,
                devices,
            };
            cluster.allocate(&alloc).expect("the policy chose a feasible node and devices that hold the pod");
            if let Some(busy) = busy.as_mut() {
                busy.add(&mut cluster, &alloc);
            }
            engine.placed(node, plan);
            placed += 1;
            let f = node_fragmentation(cluster.node(node), &workload);
            frag += f - std::mem::replace(&mut node_frag[node.index()], f);
        }
        curve.record(arrived, cluster.gpu_used_milli());
        frag_curve.record(arrived, frag);
    }
    let result = RunResult {
        seed,
        pods_arrived: arrivals.len(),
        pods_placed: placed,
        pods_failed: arrivals.len() - placed,
        gpu_alloc_pct: curve.columns(),
        gpu_frag_pct: frag_curve.columns(),
    };
    Ok((result, busy.map(|b| b.shared_busy())))
}
