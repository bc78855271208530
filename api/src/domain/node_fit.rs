//! Whether each task's replica could ever run on some node of the fleet: a job that fits no
//! node of any registered cluster (16 GPUs per replica where nodes have 8) is refused at submit
//! and in dry run with the reason, instead of being admitted to hold its queue's quota for ever.
//!
//! Judged against every node the clusters reported (free or not, healthy or not, in any pool:
//! only what can never fit is refused). With no node reported yet (a fleet being set up) nothing is refused.

use grus_protocol::wire::{JobSpec, NodeInfo, TaskSpec};

/// Why no node could ever hold a replica of one task: the input field at fault and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeverFits {
    pub field: String,
    pub message: String,
}

/// The reasons no node could ever hold a replica of `spec`'s tasks (one per task that fits
/// none); empty when every task fits some node or `nodes` is empty.
pub fn never_fits(spec: &JobSpec, nodes: &[NodeInfo]) -> Vec<NeverFits> {
    if nodes.is_empty() {
        return Vec::new();
    }
    // Node pools are not judged here: an agent may form them from node labels
    // (`--node-pool`), which the inventory does not carry; the allocator's whyPending says when
    // a job's pools cannot hold it.
    let candidates: Vec<&NodeInfo> = nodes.iter().collect();
    spec.tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| !candidates.iter().any(|n| fits(t, n)))
        .map(|(i, t)| why(i, t, &candidates))
        .collect()
}

/// The GPUs of `node` a replica of `task` may use (its models, and MIG mode for a MIG task).
fn usable_gpus(task: &TaskSpec, node: &NodeInfo) -> u32 {
    let r = &task.resources;
    let count = node
        .gpus
        .iter()
        .filter(|g| r.gpu_models.is_empty() || r.gpu_models.iter().any(|m| m == &g.model))
        .filter(|g| r.mig_profile.is_none() || g.mig)
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// GPUs one replica needs whole on one node (a share or a MIG instance needs one GPU).
fn gpus_needed(task: &TaskSpec) -> u32 {
    let r = &task.resources;
    if r.gpus == 0 && r.gpu_milli.is_none() {
        0
    } else if r.gpu_milli.is_some() || r.mig_profile.is_some() {
        1
    } else {
        r.gpus
    }
}

fn fits(task: &TaskSpec, node: &NodeInfo) -> bool {
    usable_gpus(task, node) >= gpus_needed(task)
        && task.resources.cpu_milli <= node.cpu_milli
        && task.resources.memory_mib <= node.memory_mib
}

fn why(i: usize, task: &TaskSpec, nodes: &[&NodeInfo]) -> NeverFits {
    let r = &task.resources;
    let field = |name: &str| format!("tasks.{i}.resources.{name}");
    let whose = "no node of any registered cluster";
    let need = gpus_needed(task);
    let most_gpus = nodes.iter().map(|n| usable_gpus(task, n)).max().unwrap_or(0);
    if need > most_gpus {
        let kind = match (&r.mig_profile, r.gpu_models.as_slice()) {
            (Some(_), _) => "MIG-capable ".to_owned(),
            (None, []) => String::new(),
            (None, models) => format!("{} ", models.join(" or ")),
        };
        let gpus = if need == 1 { format!("a {kind}GPU") } else { format!("{need} {kind}GPUs") };
        let message = format!("{whose} has {gpus} for one replica (the most on one node: {most_gpus})");
        return NeverFits { field: field("gpus"), message };
    }
    let most_cpu = nodes.iter().map(|n| n.cpu_milli).max().unwrap_or(0);
    if r.cpu_milli > most_cpu {
        let cores = |m: u64| format!("{}", m as f64 / 1000.0);
        let message = format!("{whose} has {} CPUs (the most on one node: {})", cores(r.cpu_milli), cores(most_cpu));
        return NeverFits { field: field("cpuMilli"), message };
    }
    let most_memory = nodes.iter().map(|n| n.memory_mib).max().unwrap_or(0);
    if r.memory_mib > most_memory {
        let gib = |m: u64| format!("{:.1}", m as f64 / 1024.0);
        let message =
            format!("{whose} has {} GiB of memory (the most on one node: {} GiB)", gib(r.memory_mib), gib(most_memory));
        return NeverFits { field: field("memoryMib"), message };
    }
    NeverFits {
        field: format!("tasks.{i}.resources"),
        message: format!("{whose} has all of one replica's GPUs, CPUs and memory at once"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grus_protocol::wire::{GpuInfo, ResourcesSpec};

    fn node(name: &str, gpus: u32, model: &str, pool: Option<&str>) -> NodeInfo {
        NodeInfo {
            name: name.into(),
            labels: Default::default(),
            rack: None,
            pool: pool.map(Into::into),
            cpu_milli: 64_000,
            memory_mib: 512 * 1024,
            healthy: true,
            gpus: (0..gpus)
                .map(|index| GpuInfo {
                    index,
                    uuid: None,
                    model: model.into(),
                    memory_mib: 81_920,
                    numa: 0,
                    nvlink_group: 0,
                    healthy: true,
                    mig: false,
                })
                .collect(),
        }
    }

    fn job(resources: ResourcesSpec, pools: &[&str]) -> JobSpec {
        let mut spec: JobSpec = serde_json::from_value(serde_json::json!({
            "id": 1, "name": "j", "project": "p", "queue": "q", "priority": 0,
            "tasks": [{ "name": "main", "replicas": 2, "image": "i", "resources": { "gpus": 0 } }],
            "submitted_by": "u", "submitted_at_ms": 0
        }))
        .unwrap();
        spec.tasks[0].resources = resources;
        spec.pools = pools.iter().map(|p| p.to_string()).collect();
        spec
    }

    #[test]
    fn a_replica_larger_than_every_node_is_refused_with_the_largest_node() {
        let nodes = [node("a", 8, "A100", None), node("b", 4, "H100", None)];
        let big = job(ResourcesSpec { gpus: 16, ..Default::default() }, &[]);
        let why = never_fits(&big, &nodes);
        assert_eq!(why.len(), 1);
        assert_eq!(why[0].field, "tasks.0.resources.gpus");
        assert_eq!(
            why[0].message,
            "no node of any registered cluster has 16 GPUs for one replica (the most on one node: 8)"
        );
        assert!(never_fits(&job(ResourcesSpec { gpus: 8, ..Default::default() }, &[]), &nodes).is_empty());
    }

    #[test]
    fn models_pools_cpus_and_memory_count_and_an_empty_fleet_refuses_nothing() {
        let nodes = [node("a", 8, "A100", Some("train")), node("b", 4, "H100", Some("infer"))];
        let h100 = |gpus| ResourcesSpec { gpus, gpu_models: vec!["H100".into()], ..Default::default() };
        assert!(never_fits(&job(h100(4), &[]), &nodes).is_empty());
        assert!(never_fits(&job(h100(8), &[]), &nodes)[0].message.contains("H100 GPUs"));
        assert!(never_fits(&job(h100(4), &["train"]), &nodes).is_empty(), "pools are the allocator's to judge");
        let cpus = ResourcesSpec { cpu_milli: 128_000, ..Default::default() };
        assert_eq!(never_fits(&job(cpus, &[]), &nodes)[0].field, "tasks.0.resources.cpuMilli");
        let memory = ResourcesSpec { memory_mib: 1 << 20, ..Default::default() };
        assert_eq!(never_fits(&job(memory.clone(), &[]), &nodes)[0].field, "tasks.0.resources.memoryMib");
        let share = ResourcesSpec { gpus: 1, gpu_milli: Some(250), ..Default::default() };
        assert!(never_fits(&job(share, &[]), &nodes).is_empty(), "a share needs one GPU");
        assert!(never_fits(&job(memory, &[]), &[]).is_empty(), "no node reported yet");
    }
}
