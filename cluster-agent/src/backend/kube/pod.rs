//! The Pod of one replica, both ways: built from a [`ReplicaLaunch`], and read back into an
//! [`ObservedReplica`] (labels and annotations carry the identity, the phase maps to
//! [`ReplicaPhase`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, EnvVar, Pod, PodSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use grus_protocol::wire::{DeviceRef, ReplicaExit, Termination};

use super::labels::{self, resource};
use super::KubeConfig;
use crate::backend::{ObservedReplica, ReplicaKey, ReplicaLaunch, ReplicaPhase};

/// Name of the single container of a replica's pod.
pub const CONTAINER: &str = "main";

/// The Pod for `launch` in `namespace`, not yet bound: the agent binds it itself, so no
/// scheduler named `config.scheduler_name` needs to exist; naming one keeps kube-scheduler off it.
pub fn build_pod(launch: &ReplicaLaunch, namespace: &str, config: &KubeConfig) -> Pod {
    let key = &launch.key;
    let mut pod_labels = BTreeMap::from([
        (labels::MANAGED_BY.to_string(), labels::MANAGER.to_string()),
        (labels::JOB.to_string(), key.job.to_string()),
        (labels::TASK.to_string(), labels::label_value(&key.task)),
        (labels::REPLICA.to_string(), key.replica.to_string()),
        (labels::EPOCH.to_string(), launch.epoch.to_string()),
    ]);
    if launch.gang.is_some() {
        pod_labels.insert(labels::POD_GROUP.to_string(), labels::pod_group_name(key.job));
    }
    if let Some(service) = &launch.service {
        pod_labels.extend(super::service::selector(&launch.project, service));
    }
    if launch.workspace.is_some() {
        pod_labels.insert(labels::WORKSPACE.to_string(), "true".to_string());
    }
    let mut annotations = BTreeMap::from([
        (labels::DEVICES.to_string(), DeviceRef::format_list(&launch.devices)),
        (labels::TASK_NAME.to_string(), key.task.clone()),
        (labels::JOB_NAME.to_string(), launch.job_name.clone()),
        (labels::PROJECT.to_string(), launch.project.clone()),
        (labels::QUEUE.to_string(), launch.queue.clone()),
        (labels::NODE.to_string(), launch.node.clone()),
    ]);
    if let Some(mib) = launch.task.resources.gpu_memory_mib {
        annotations.insert(labels::GPU_MEMORY_MIB.to_string(), mib.to_string());
    }
    if let Some(profile) = &launch.task.resources.mig_profile {
        annotations.insert(labels::MIG_PROFILE.to_string(), profile.clone());
    }

    let mut container = Container {
        name: CONTAINER.to_string(),
        image: Some(launch.task.image.clone()),
        command: (!launch.task.command.is_empty()).then(|| launch.task.command.clone()),
        env: Some(env(launch)),
        resources: Some(resources(launch, &config.whole_gpu_resource)),
        ..Container::default()
    };
    if let Some(service) = &launch.service {
        super::service::configure_container(&mut container, service);
    }
    if let Some(w) = &launch.workspace {
        container.ports = Some(vec![k8s_openapi::api::core::v1::ContainerPort {
            name: Some("http".to_owned()),
            container_port: i32::from(w.port),
            protocol: Some("TCP".to_owned()),
            ..Default::default()
        }]);
    }
    Pod {
        metadata: ObjectMeta {
            name: Some(labels::pod_name(key.job, &key.task, key.replica)),
            namespace: Some(namespace.to_string()),
            labels: Some(pod_labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            scheduler_name: Some(config.scheduler_name.clone()),
            restart_policy: Some("Never".to_string()),
            containers: vec![container],
            ..PodSpec::default()
        }),
        status: None,
    }
}

/// Grus' identity variables (a training launcher derives its rank from them), then the task's
/// own, which win on a clash.
fn env(launch: &ReplicaLaunch) -> Vec<EnvVar> {
    let ours = [
        ("GRUS_JOB_ID", launch.key.job.to_string()),
        ("GRUS_JOB_NAME", launch.job_name.clone()),
        ("GRUS_TASK", launch.key.task.clone()),
        ("GRUS_REPLICA", launch.key.replica.to_string()),
        ("GRUS_REPLICAS", launch.task.replicas.to_string()),
        ("GRUS_EPOCH", launch.epoch.to_string()),
    ];
    let theirs = &launch.task.env;
    ours.into_iter()
        .filter(|(name, _)| !theirs.contains_key(*name))
        .map(|(name, value)| (name.to_string(), value))
        .chain(theirs.iter().map(|(k, v)| (k.clone(), v.clone())))
        .map(|(name, value)| EnvVar { name, value: Some(value), value_from: None })
        .collect()
}

/// CPU and memory requests (memory also as a limit, so an overrun is an OOM kill rather than a
/// noisy neighbour), and the GPU resource: whole GPUs as `nvidia.com/gpu`, a share of one GPU
/// as `grus.io/gpu-milli`, a MIG instance as `nvidia.com/mig-<profile>` (the mixed strategy's
/// resource). Extended resources need requests equal to limits.
fn resources(launch: &ReplicaLaunch, whole_gpu_resource: &str) -> ResourceRequirements {
    let spec = &launch.task.resources;
    let mut requests = BTreeMap::new();
    let mut limits = BTreeMap::new();
    if spec.cpu_milli > 0 {
        requests.insert("cpu".to_string(), Quantity(format!("{}m", spec.cpu_milli)));
    }
    if spec.memory_mib > 0 {
        let memory = Quantity(format!("{}Mi", spec.memory_mib));
        requests.insert("memory".to_string(), memory.clone());
        limits.insert("memory".to_string(), memory);
    }
    if spec.gpus > 0 {
        let (name, amount) = match (&spec.mig_profile, spec.gpu_milli) {
            (Some(profile), _) => (resource::mig(profile), 1),
            (None, Some(milli)) if milli < 1000 => {
                (resource::GPU_MILLI.to_owned(), u64::from(milli) * u64::from(spec.gpus))
            }
            _ if whole_gpu_resource == resource::GPU_MILLI => {
                (resource::GPU_MILLI.to_owned(), 1000 * u64::from(spec.gpus))
            }
            _ => (whole_gpu_resource.to_owned(), u64::from(spec.gpus)),
        };
        requests.insert(name.clone(), Quantity(amount.to_string()));
        limits.insert(name, Quantity(amount.to_string()));
    }
    ResourceRequirements {
        requests: (!requests.is_empty()).then_some(requests),
        limits: (!limits.is_empty()).then_some(limits),
        ..ResourceRequirements::default()
    }
}

/// The replica identity in a pod's labels and annotations. `Err` says what is malformed.
pub fn replica_key(pod: &Pod) -> Result<(ReplicaKey, u64), String> {
    let meta = &pod.metadata;
    let labels = meta.labels.as_ref().ok_or("no labels")?;
    let number = |key: &str| -> Result<u64, String> {
        let v = labels.get(key).ok_or_else(|| format!("label {key} missing"))?;
        v.parse().map_err(|_| format!("label {key}=`{v}` is not a number"))
    };
    let job = number(labels::JOB)?;
    let replica = u32::try_from(number(labels::REPLICA)?).map_err(|_| "replica index out of range".to_string())?;
    let epoch = number(labels::EPOCH)?;
    let task = meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(labels::TASK_NAME))
        .or_else(|| labels.get(labels::TASK))
        .ok_or("no task label or annotation")?
        .clone();
    Ok((ReplicaKey { job, task, replica }, epoch))
}

/// A managed pod as the agent sees it; `Err` says why it cannot be read.
pub fn observe(pod: &Pod) -> Result<ObservedReplica, String> {
    let (key, epoch) = replica_key(pod)?;
    let annotations = pod.metadata.annotations.as_ref();
    let devices = match annotations.and_then(|a| a.get(labels::DEVICES)) {
        Some(v) => DeviceRef::parse_list(v).map_err(|e| format!("annotation {}: {e}", labels::DEVICES))?,
        None => return Err(format!("annotation {} missing", labels::DEVICES)),
    };
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .or_else(|| annotations.and_then(|a| a.get(labels::NODE)).cloned())
        .unwrap_or_default();
    let phase = phase(pod)?;
    Ok(ObservedReplica { key, epoch, node, devices, phase })
}

/// Container waiting reasons that no amount of waiting fixes; image pull back-offs are left
/// out because a registry outage ends.
pub const FATAL_WAITING: [&str; 4] =
    ["InvalidImageName", "ErrImageNeverPull", "CreateContainerConfigError", "CreateContainerError"];

/// Pending (created or bound, not started: image pull, slow start) is Placed, unless a
/// container can never start ([`FATAL_WAITING`]): then Failed. Running, Succeeded and Failed
/// map to themselves. `Unknown` (node unreachable) is an error: the replica keeps its last
/// known phase until the node answers or the pod is deleted.
pub fn phase(pod: &Pod) -> Result<ReplicaPhase, String> {
    let status = pod.status.as_ref();
    match status.and_then(|s| s.phase.as_deref()).unwrap_or("Pending") {
        "Pending" => {
            let stuck = status
                .and_then(|s| s.container_statuses.as_ref())
                .into_iter()
                .flatten()
                .filter_map(|c| c.state.as_ref().and_then(|s| s.waiting.as_ref()))
                .find(|w| w.reason.as_deref().is_some_and(|r| FATAL_WAITING.contains(&r)));
            Ok(match stuck {
                Some(w) => ReplicaPhase::ended(
                    Termination::CannotStart,
                    format!(
                        "{}: {}",
                        w.reason.as_deref().unwrap_or_default(),
                        w.message.as_deref().unwrap_or("container cannot start")
                    ),
                ),
                None => ReplicaPhase::Placed,
            })
        }
        "Running" => Ok(ReplicaPhase::Running),
        "Succeeded" => Ok(ReplicaPhase::Succeeded),
        "Failed" => {
            let (reason, exit) = failure(pod);
            Ok(ReplicaPhase::Failed { reason, exit })
        }
        other => Err(format!("pod phase `{other}`")),
    }
}

/// Why a failed pod failed and how: the pod's own reason (`Evicted: The node was low on
/// resource: memory.`, `DeadlineExceeded`), else the first container that ended badly
/// (`OOMKilled (exit 137)`); the exit code is that container's.
fn failure(pod: &Pod) -> (String, ReplicaExit) {
    let Some(status) = pod.status.as_ref() else {
        return ("failed".to_string(), ReplicaExit::new(None, Termination::Other));
    };
    let terminated = status
        .container_statuses
        .iter()
        .flatten()
        .filter_map(|c| c.state.as_ref().and_then(|s| s.terminated.as_ref()))
        .find(|t| t.exit_code != 0);
    let code = terminated.map(|t| t.exit_code);
    if let Some(reason) = status.reason.as_deref().filter(|r| !r.is_empty()) {
        let termination = match reason {
            "Evicted" | "Preempting" | "Shutdown" | "Terminated" => Termination::Evicted,
            "DeadlineExceeded" => Termination::DeadlineExceeded,
            "NodeLost" | "UnexpectedAdmissionError" => Termination::Lost,
            _ => Termination::Other,
        };
        let text = match status.message.as_deref().filter(|m| !m.is_empty()) {
            Some(message) => format!("{reason}: {message}"),
            None => reason.to_string(),
        };
        return (text, ReplicaExit::new(code, termination));
    }
    match terminated {
        Some(t) => {
            let reason = t.reason.as_deref().unwrap_or("Error");
            let termination = match reason {
                "OOMKilled" => Termination::OomKilled,
                "DeadlineExceeded" => Termination::DeadlineExceeded,
                "ContainerCannotRun" | "StartError" => Termination::CannotStart,
                _ => Termination::Error,
            };
            (format!("{reason} (exit {})", t.exit_code), ReplicaExit::new(code, termination))
        }
        None => {
            (status.message.clone().unwrap_or_else(|| "failed".to_string()), ReplicaExit::new(None, Termination::Other))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pending_with(waiting: serde_json::Value) -> Pod {
        serde_json::from_value(json!({
            "metadata": { "name": "p" },
            "status": { "phase": "Pending", "containerStatuses": [{
                "name": "main", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
                "state": { "waiting": waiting }
            }]}
        }))
        .unwrap()
    }

    #[test]
    fn a_container_that_can_never_start_fails_the_replica() {
        let bad =
            pending_with(json!({ "reason": "InvalidImageName", "message": "couldn't parse image name \"A:B:C\"" }));
        assert_eq!(
            phase(&bad).unwrap(),
            ReplicaPhase::ended(Termination::CannotStart, "InvalidImageName: couldn't parse image name \"A:B:C\"")
        );
        let pulling = pending_with(json!({ "reason": "ImagePullBackOff", "message": "Back-off pulling image" }));
        assert_eq!(phase(&pulling).unwrap(), ReplicaPhase::Placed, "a registry outage ends");
        let unknown: Pod = serde_json::from_value(json!({ "status": { "phase": "Unknown" } })).unwrap();
        assert!(phase(&unknown).is_err());
    }

    fn failed_with(status: serde_json::Value) -> ReplicaPhase {
        let mut status = status;
        status["phase"] = json!("Failed");
        phase(&serde_json::from_value(json!({ "metadata": { "name": "p" }, "status": status })).unwrap()).unwrap()
    }

    fn terminated(reason: &str, code: i32) -> serde_json::Value {
        json!({ "containerStatuses": [{
            "name": "main", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
            "state": { "terminated": { "reason": reason, "exitCode": code } }
        }]})
    }

    #[test]
    fn a_failed_pod_reports_its_containers_exit_code_and_why_it_ended() {
        let exit = |p: ReplicaPhase| match p {
            ReplicaPhase::Failed { reason, exit } => (reason, exit.code, exit.termination),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            exit(failed_with(terminated("OOMKilled", 137))),
            ("OOMKilled (exit 137)".into(), Some(137), Termination::OomKilled)
        );
        assert_eq!(exit(failed_with(terminated("Error", 3))), ("Error (exit 3)".into(), Some(3), Termination::Error));
        let evicted = json!({ "reason": "Evicted", "message": "The node was low on resource: memory." });
        assert_eq!(
            exit(failed_with(evicted)),
            ("Evicted: The node was low on resource: memory.".into(), None, Termination::Evicted)
        );
        let mut deadline = terminated("Error", 143);
        deadline["reason"] = json!("DeadlineExceeded");
        assert_eq!(exit(failed_with(deadline)), ("DeadlineExceeded".into(), Some(143), Termination::DeadlineExceeded));
        assert_eq!(exit(failed_with(json!({}))).2, Termination::Other);
    }
}
