//! The kube backend against recorded API exchanges: each test scripts the calls the backend
//! must make (method, path and query, body checks) and the API server's answers.

use std::collections::BTreeMap;
use std::time::Duration;

use grus_agent::backend::kube::watch::{NodeStore, PodTracker};
use grus_agent::backend::kube::{node, KubeConfig};
use grus_agent::backend::{
    Backend, BackendError, BackendEvent, GangInfo, ObservedReplica, ReplicaKey, ReplicaLaunch, ReplicaPhase, ServedPort,
};
use grus_protocol::logs::{LogQuery, LogSource};
use grus_protocol::wire::{
    DeviceRef, GpuInfo, ReadinessSpec, ReplicaExit, ResourcesSpec, ServiceReplicaSpec, TaskSpec, Termination,
    WorkspaceSpec,
};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::runtime::watcher::Event;
use serde_json::{json, Value};

use crate::kube_fixtures::{self as fixtures, context, list, to_json, Call, NodeFixture, PodFixture};

const NODES: &str = "/api/v1/nodes?limit=500";
const MANAGED_PODS: &str = "/api/v1/pods?labelSelector=grus.io/managed-by=grus-agent&limit=500";
const PODS: &str = "/api/v1/namespaces/grus-vision/pods";
const POD_GROUPS: &str = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/grus-vision/podgroups";

fn key(job: u64, task: &str, replica: u32) -> ReplicaKey {
    ReplicaKey { job, task: task.to_string(), replica }
}

/// Replica `replica` of job 42's `main` task: a 2-member gang of 8 whole GPUs each.
fn gang_launch(replica: u32, node: &str) -> ReplicaLaunch {
    ReplicaLaunch {
        key: key(42, "main", replica),
        epoch: 3,
        job_name: "llama-finetune".to_string(),
        project: "vision".to_string(),
        queue: "default".to_string(),
        task: TaskSpec {
            name: "main".to_string(),
            replicas: 2,
            image: "ghcr.io/example/train:1.2".to_string(),
            command: vec!["torchrun".into(), "--nproc-per-node=8".into(), "train.py".into()],
            env: BTreeMap::from([("NCCL_DEBUG".to_string(), "INFO".to_string())]),
            resources: ResourcesSpec {
                gpus: 8,
                gpu_milli: None,
                gpu_memory_mib: None,
                gpu_models: vec!["H100-80GB".into()],
                cpu_milli: 32000,
                memory_mib: 262144,
                mig_profile: None,
            },
            topology: None,
        },
        node: node.to_string(),
        devices: (0..8).map(|index| DeviceRef::share(index, 1000)).collect(),
        gang: Some(GangInfo { min_members: 2 }),
        labels: BTreeMap::new(),
        service: None,
        workspace: None,
    }
}

/// A quarter of one GPU for a notebook, no gang.
fn share_launch() -> ReplicaLaunch {
    let mut launch = gang_launch(0, "gpu-a1");
    launch.key = key(7, "notebook", 0);
    launch.gang = None;
    launch.task.name = "notebook".to_string();
    launch.task.replicas = 1;
    launch.task.resources = ResourcesSpec {
        gpus: 1,
        gpu_milli: Some(250),
        gpu_memory_mib: Some(20480),
        gpu_models: vec![],
        cpu_milli: 2000,
        memory_mib: 8192,
        mig_profile: None,
    };
    launch.devices = vec![DeviceRef::share(2, 250)];
    launch
}

fn binding(pod: &str, node: &str) -> Call {
    let node = node.to_string();
    let pod_name = pod.to_string();
    Call::post(&format!("{PODS}/{pod}/binding"))
        .body(move |b| {
            assert_eq!(b["metadata"]["name"], json!(pod_name));
            assert_eq!(b["target"], json!({ "apiVersion": "v1", "kind": "Node", "name": node }));
        })
        .answer(201, json!({ "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201 }))
}

fn pod_create(name: &'static str, node: &'static str) -> Call {
    Call::post(PODS)
        .body(move |pod| {
            assert_eq!(pod["metadata"]["name"], json!(name));
            assert_eq!(pod["spec"]["schedulerName"], json!("grus"));
            assert_eq!(pod["metadata"]["annotations"]["grus.io/node"], json!(node));
        })
        .echo(201)
}

#[tokio::test]
async fn nodes_are_converted_from_allocatable_and_gpu_feature_discovery_labels() {
    let (mut backend, server) = context(KubeConfig::default());
    let dgx: Value = serde_json::from_str(include_str!("fixtures/kube/node-dgx-h100.json")).unwrap();
    let cordoned = Node::test("gpu-a2").with_gpus(4).with_label("topology.kubernetes.io/zone", "z2").cordoned();
    let down = Node::test("gpu-a3").with_gpus(8).not_ready();
    let mut broken = Node::test("gpu-bad").with_gpus(8);
    broken
        .status
        .as_mut()
        .unwrap()
        .allocatable
        .as_mut()
        .unwrap()
        .insert("cpu".to_string(), k8s_openapi::apimachinery::pkg::api::resource::Quantity("lots".to_string()));
    let cpu_only = Node::test("cpu-1");
    let scenario = server.run(vec![Call::get(NODES).answer(
        200,
        list("NodeList", vec![dgx, to_json(&cordoned), to_json(&down), to_json(&broken), to_json(&cpu_only)], None),
    )]);

    let nodes = backend.nodes().await;
    scenario.verify().await;
    let nodes = nodes.unwrap();
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["cpu-1", "dgx-h100-017", "gpu-a2", "gpu-a3"], "the malformed node is skipped");

    let dgx = &nodes[1];
    assert_eq!(dgx.cpu_milli, 223_500);
    assert_eq!(dgx.memory_mib, 2_112_238_736 / 1024);
    assert_eq!(dgx.rack.as_deref(), Some("r12"), "grus.io/rack overrides the zone");
    assert!(dgx.healthy);
    assert_eq!(dgx.gpus.len(), 8);
    assert_eq!(
        dgx.gpus[5],
        GpuInfo {
            index: 5,
            uuid: None,
            model: "H100-80GB".into(),
            memory_mib: 81559,
            numa: 1,
            nvlink_group: 0,
            healthy: false,
            mig: false,
        }
    );
    assert!(dgx.gpus.iter().filter(|g| g.index != 5).all(|g| g.healthy && g.model == "H100-80GB"));
    assert_eq!(dgx.gpus[2].numa, 0);
    assert_eq!(dgx.labels.get("taint.grus.io/nvidia.com/gpu").map(String::as_str), Some("present:NoSchedule"));
    assert_eq!(dgx.labels.get("nvidia.com/gpu.family").map(String::as_str), Some("hopper"));

    let cordoned = &nodes[2];
    assert!(!cordoned.healthy, "unschedulable");
    assert_eq!(cordoned.rack.as_deref(), Some("z2"));
    assert_eq!(cordoned.gpus.len(), 4);
    assert_eq!(cordoned.gpus[0].model, "NVIDIA-H100-80GB-HBM3", "GPU feature discovery's product name by default");
    let taints = node::taints_from_labels(&cordoned.labels);
    assert_eq!(taints.len(), 1);
    assert_eq!(taints[0].key, "node.kubernetes.io/unschedulable");

    assert!(!nodes[3].healthy, "Ready is Unknown");
    assert_eq!(nodes[0].gpus, vec![], "a CPU node has no GPUs");
    assert_eq!(nodes[0].cpu_milli, 63_500);
    assert_eq!(nodes[0].memory_mib, 516_096);
}

#[tokio::test]
async fn gpu_milli_allocatable_counts_whole_devices() {
    let mut n = Node::test("share-1");
    n.status.as_mut().unwrap().allocatable.as_mut().unwrap().insert(
        "grus.io/gpu-milli".to_string(),
        k8s_openapi::apimachinery::pkg::api::resource::Quantity("4000".to_string()),
    );
    let info = node::node_info(&n).unwrap();
    assert_eq!(info.gpus.len(), 4);
    assert_eq!(info.gpus[0].model, node::UNKNOWN_MODEL);
    let bad = Node::test("n").with_gpus(8).with_label("grus.io/nvlink-groups", "0,1");
    assert!(node::node_info(&bad).unwrap_err().contains("lists 2 devices"));
}

#[tokio::test]
async fn a_gang_launch_creates_the_pod_group_then_creates_and_binds_each_pod() {
    let (mut backend, server) = context(KubeConfig::default());
    let scenario = server.run(vec![
        Call::post(POD_GROUPS)
            .body(|group| {
                assert_eq!(group["apiVersion"], json!("scheduling.x-k8s.io/v1alpha1"));
                assert_eq!(group["kind"], json!("PodGroup"));
                assert_eq!(group["metadata"]["name"], json!("grus-42"));
                assert_eq!(group["metadata"]["namespace"], json!("grus-vision"));
                assert_eq!(group["metadata"]["labels"]["grus.io/job"], json!("42"));
                assert_eq!(group["spec"], json!({ "minMember": 2 }));
            })
            .echo(201),
        Call::post(PODS)
            .body(|pod| {
                assert_eq!(pod["metadata"]["name"], json!("grus-42-main-0"));
                assert_eq!(pod["metadata"]["namespace"], json!("grus-vision"));
                assert_eq!(
                    pod["metadata"]["labels"],
                    json!({
                        "grus.io/managed-by": "grus-agent",
                        "grus.io/job": "42",
                        "grus.io/task": "main",
                        "grus.io/replica": "0",
                        "grus.io/epoch": "3",
                        "scheduling.x-k8s.io/pod-group": "grus-42"
                    })
                );
                let annotations = &pod["metadata"]["annotations"];
                assert_eq!(
                    annotations["grus.io/devices"],
                    json!("0:1000,1:1000,2:1000,3:1000,4:1000,5:1000,6:1000,7:1000")
                );
                assert_eq!(annotations["grus.io/task-name"], json!("main"));
                assert_eq!(annotations["grus.io/job-name"], json!("llama-finetune"));
                assert_eq!(annotations["grus.io/project"], json!("vision"));
                assert_eq!(annotations["grus.io/node"], json!("dgx-1"));
                assert!(annotations.get("grus.io/gpu-memory-mib").is_none());
                let spec = &pod["spec"];
                assert_eq!(spec["schedulerName"], json!("grus"));
                assert_eq!(spec["restartPolicy"], json!("Never"));
                assert!(spec.get("nodeName").is_none(), "bound through pods/binding, not nodeName");
                let container = &spec["containers"][0];
                assert_eq!(container["name"], json!("main"));
                assert_eq!(container["image"], json!("ghcr.io/example/train:1.2"));
                assert_eq!(container["command"], json!(["torchrun", "--nproc-per-node=8", "train.py"]));
                assert_eq!(
                    container["resources"],
                    json!({
                        "requests": { "cpu": "32000m", "memory": "262144Mi", "nvidia.com/gpu": "8" },
                        "limits": { "memory": "262144Mi", "nvidia.com/gpu": "8" }
                    })
                );
                let env = container["env"].as_array().unwrap();
                assert!(env.contains(&json!({ "name": "GRUS_REPLICA", "value": "0" })));
                assert!(env.contains(&json!({ "name": "GRUS_REPLICAS", "value": "2" })));
                assert!(env.contains(&json!({ "name": "GRUS_EPOCH", "value": "3" })));
                assert!(env.contains(&json!({ "name": "NCCL_DEBUG", "value": "INFO" })));
            })
            .echo(201),
        binding("grus-42-main-0", "dgx-1"),
        pod_create("grus-42-main-1", "dgx-2"),
        binding("grus-42-main-1", "dgx-2"),
    ]);

    let first = backend.launch(&gang_launch(0, "dgx-1")).await;
    let second = backend.launch(&gang_launch(1, "dgx-2")).await;
    scenario.verify().await;
    first.unwrap();
    second.unwrap();
}

#[tokio::test]
async fn a_share_of_one_gpu_requests_gpu_milli_and_carries_its_device_and_memory_limit() {
    let (mut backend, server) = context(KubeConfig::default());
    let scenario = server.run(vec![
        Call::post(PODS)
            .body(|pod| {
                assert_eq!(pod["metadata"]["name"], json!("grus-7-notebook-0"));
                assert!(pod["metadata"]["labels"].get("scheduling.x-k8s.io/pod-group").is_none());
                assert_eq!(pod["metadata"]["annotations"]["grus.io/devices"], json!("2:250"));
                assert_eq!(pod["metadata"]["annotations"]["grus.io/gpu-memory-mib"], json!("20480"));
                assert_eq!(
                    pod["spec"]["containers"][0]["resources"],
                    json!({
                        "requests": { "cpu": "2000m", "memory": "8192Mi", "grus.io/gpu-milli": "250" },
                        "limits": { "memory": "8192Mi", "grus.io/gpu-milli": "250" }
                    })
                );
            })
            .echo(201),
        binding("grus-7-notebook-0", "gpu-a1"),
    ]);
    let result = backend.launch(&share_launch()).await;
    scenario.verify().await;
    result.unwrap();
}

#[tokio::test]
async fn a_mig_instance_requests_the_mixed_strategy_resource_and_carries_its_position() {
    let (mut backend, server) = context(KubeConfig::default());
    let scenario = server.run(vec![
        Call::post(PODS)
            .body(|pod| {
                assert_eq!(pod["metadata"]["annotations"]["grus.io/devices"], json!("2:142@4"));
                assert_eq!(
                    pod["spec"]["containers"][0]["resources"]["limits"],
                    json!({ "memory": "8192Mi", "nvidia.com/mig-1g.10gb": "1" })
                );
            })
            .echo(201),
        binding("grus-7-notebook-0", "gpu-a1"),
    ]);
    let mut launch = share_launch();
    launch.task.resources = ResourcesSpec {
        gpu_milli: Some(142),
        gpu_memory_mib: None,
        mig_profile: Some("1g.10gb".into()),
        ..launch.task.resources
    };
    launch.devices = vec![DeviceRef { index: 2, milli: 142, mig_start: Some(4) }];
    let result = backend.launch(&launch).await;
    scenario.verify().await;
    result.unwrap();
}

#[test]
fn gpus_in_mig_mode_come_from_the_node_label_or_the_mixed_strategy() {
    let mixed = Node::test("mig-1")
        .with_label("nvidia.com/gpu.product", "A100-SXM4-80GB")
        .with_label("nvidia.com/mig.strategy", "mixed")
        .with_label("nvidia.com/gpu.count", "2");
    let info = node::node_info(&mixed).unwrap();
    assert_eq!(info.gpus.len(), 2, "MIG-mode GPUs are counted from GPU feature discovery");
    assert!(info.gpus.iter().all(|g| g.mig));
    let listed = Node::test("mig-2")
        .with_gpus(4)
        .with_label("nvidia.com/gpu.product", "H100-80GB")
        .with_label("grus.io/gpu-mig", "1,3");
    let info = node::node_info(&listed).unwrap();
    assert_eq!(info.gpus.iter().map(|g| g.mig).collect::<Vec<_>>(), [false, true, false, true]);
    let no_mig_model = Node::test("t4")
        .with_gpus(2)
        .with_label("nvidia.com/gpu.product", "Tesla-T4")
        .with_label("nvidia.com/mig.strategy", "mixed");
    assert!(node::node_info(&no_mig_model).unwrap().gpus.iter().all(|g| !g.mig), "a model without MIG");
    let bad = Node::test("b").with_label("nvidia.com/gpu.count", "many");
    assert!(node::node_info(&bad).unwrap_err().contains("nvidia.com/gpu.count"));
}

#[tokio::test]
async fn projects_map_to_configured_namespaces() {
    let config = KubeConfig {
        project_namespaces: BTreeMap::from([("vision".to_string(), "team-vision".to_string())]),
        pod_groups: false,
        ..KubeConfig::default()
    };
    let (mut backend, server) = context(config);
    let scenario = server.run(vec![
        Call::post("/api/v1/namespaces/team-vision/pods").echo(201),
        Call::post("/api/v1/namespaces/team-vision/pods/grus-42-main-0/binding")
            .answer(201, json!({ "kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201 })),
    ]);
    let result = backend.launch(&gang_launch(0, "dgx-1")).await;
    scenario.verify().await;
    result.unwrap();
}

#[tokio::test]
async fn relaunching_the_same_epoch_changes_nothing() {
    let (mut backend, server) = context(KubeConfig::default());
    let existing = Pod::replica(42, "main", 0).epoch(3).bound_to("dgx-1").phase("Running");
    let scenario = server.run(vec![
        Call::post(POD_GROUPS).fail(409, "AlreadyExists", "podgroups.scheduling.x-k8s.io \"grus-42\" already exists"),
        Call::post(PODS).fail(409, "AlreadyExists", "pods \"grus-42-main-0\" already exists"),
        Call::get(&format!("{PODS}/grus-42-main-0")).answer(200, to_json(&existing)),
    ]);
    let result = backend.launch(&gang_launch(0, "dgx-1")).await;
    scenario.verify().await;
    result.unwrap();
}

#[tokio::test]
async fn relaunching_a_pod_left_unbound_binds_it() {
    let (mut backend, server) = context(KubeConfig { pod_groups: false, ..KubeConfig::default() });
    let existing = Pod::replica(42, "main", 0).epoch(3);
    let scenario = server.run(vec![
        Call::post(PODS).fail(409, "AlreadyExists", "pods \"grus-42-main-0\" already exists"),
        Call::get(&format!("{PODS}/grus-42-main-0")).answer(200, to_json(&existing)),
        binding("grus-42-main-0", "dgx-1"),
    ]);
    let result = backend.launch(&gang_launch(0, "dgx-1")).await;
    scenario.verify().await;
    result.unwrap();
}

#[tokio::test]
async fn a_pod_of_a_stale_epoch_is_deleted_at_once_and_the_launch_retried() {
    let (mut backend, server) = context(KubeConfig { pod_groups: false, ..KubeConfig::default() });
    let stale = Pod::replica(42, "main", 0).epoch(2).bound_to("dgx-9").phase("Running");
    let scenario = server.run(vec![
        Call::post(PODS).fail(409, "AlreadyExists", "pods \"grus-42-main-0\" already exists"),
        Call::get(&format!("{PODS}/grus-42-main-0")).answer(200, to_json(&stale)),
        Call::delete(&format!("{PODS}/grus-42-main-0"))
            .body(|b| assert_eq!(b["gracePeriodSeconds"], json!(0)))
            .answer(200, to_json(&stale.clone().terminating())),
    ]);
    let result = backend.launch(&gang_launch(0, "dgx-1")).await;
    scenario.verify().await;
    assert!(matches!(result, Err(BackendError::Unavailable(_))), "{result:?}");
}

#[tokio::test]
async fn a_pod_of_a_newer_epoch_refuses_the_launch() {
    let (mut backend, server) = context(KubeConfig { pod_groups: false, ..KubeConfig::default() });
    let newer = Pod::replica(42, "main", 0).epoch(4).bound_to("dgx-1");
    let scenario = server.run(vec![
        Call::post(PODS).fail(409, "AlreadyExists", "pods \"grus-42-main-0\" already exists"),
        Call::get(&format!("{PODS}/grus-42-main-0")).answer(200, to_json(&newer)),
    ]);
    let result = backend.launch(&gang_launch(0, "dgx-1")).await;
    scenario.verify().await;
    assert!(matches!(result, Err(BackendError::Refused(_))), "{result:?}");
}

#[tokio::test]
async fn api_errors_are_refusals_or_unavailability() {
    let (mut backend, server) = context(KubeConfig { pod_groups: false, ..KubeConfig::default() });
    let scenario = server.run(vec![
        Call::post(PODS).fail(403, "Forbidden", "pods is forbidden: exceeded quota: gpu-quota"),
        Call::post(PODS).fail(503, "ServiceUnavailable", "etcdserver: leader changed"),
    ]);
    let forbidden = backend.launch(&gang_launch(0, "dgx-1")).await;
    let unavailable = backend.launch(&gang_launch(0, "dgx-1")).await;
    scenario.verify().await;
    assert!(matches!(&forbidden, Err(BackendError::Refused(m)) if m.contains("exceeded quota")), "{forbidden:?}");
    assert!(matches!(unavailable, Err(BackendError::Unavailable(_))), "{unavailable:?}");
}

#[tokio::test]
async fn stop_deletes_the_pod_with_the_grace_period() {
    let (mut backend, server) = context(KubeConfig { pod_groups: false, ..KubeConfig::default() });
    let running = Pod::replica(42, "main", 0).epoch(3).bound_to("dgx-1").phase("Running");
    let scenario = server.run(vec![
        pod_create("grus-42-main-0", "dgx-1"),
        binding("grus-42-main-0", "dgx-1"),
        Call::delete(&format!("{PODS}/grus-42-main-0"))
            .body(|b| assert_eq!(b["gracePeriodSeconds"], json!(30)))
            .answer(200, to_json(&running.terminating())),
        // Stopping again: the pod is gone.
        Call::delete(&format!("{PODS}/grus-42-main-0")).fail(404, "NotFound", "pods \"grus-42-main-0\" not found"),
    ]);
    backend.launch(&gang_launch(0, "dgx-1")).await.unwrap();
    let stopped = backend.stop(&key(42, "main", 0), Duration::from_secs(30)).await;
    let again = backend.stop(&key(42, "main", 0), Duration::from_secs(30)).await;
    scenario.verify().await;
    stopped.unwrap();
    again.unwrap();
}

#[tokio::test]
async fn stop_after_a_restart_finds_the_pod_by_its_labels() {
    let (mut backend, server) = context(KubeConfig::default());
    let pod = Pod::replica(42, "main", 1).epoch(3).bound_to("dgx-2").phase("Running");
    let scenario = server.run(vec![
        Call::get(
            "/api/v1/pods?labelSelector=grus.io/managed-by=grus-agent,grus.io/job=42,grus.io/replica=1&limit=500",
        )
        .answer(200, list("PodList", vec![to_json(&pod)], None)),
        Call::delete(&format!("{PODS}/grus-42-main-1"))
            .body(|b| assert_eq!(b["gracePeriodSeconds"], json!(1), "sub-second grace rounds up"))
            .answer(200, to_json(&pod)),
        // A replica with no pod at all is already stopped.
        Call::get(
            "/api/v1/pods?labelSelector=grus.io/managed-by=grus-agent,grus.io/job=43,grus.io/replica=0&limit=500",
        )
        .answer(200, list("PodList", vec![], None)),
    ]);
    let stopped = backend.stop(&key(42, "main", 1), Duration::from_millis(200)).await;
    let absent = backend.stop(&key(43, "main", 0), Duration::from_secs(5)).await;
    scenario.verify().await;
    stopped.unwrap();
    absent.unwrap();
}

#[tokio::test]
async fn forget_job_deletes_the_pod_group() {
    let (mut backend, server) = context(KubeConfig::default());
    let scenario = server.run(vec![
        Call::post(POD_GROUPS).echo(201),
        pod_create("grus-42-main-0", "dgx-1"),
        binding("grus-42-main-0", "dgx-1"),
        Call::delete(&format!("{POD_GROUPS}/grus-42")).answer(200, json!({ "kind": "Status", "status": "Success" })),
        // After a restart: found by label, already deleted meanwhile.
        Call::get("/apis/scheduling.x-k8s.io/v1alpha1/podgroups?labelSelector=grus.io/managed-by=grus-agent,grus.io/job=42&limit=500")
            .answer(
                200,
                json!({ "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroupList", "metadata": {}, "items": [
                    { "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                      "metadata": { "name": "grus-42", "namespace": "grus-vision" }, "spec": { "minMember": 2 } }
                ]}),
            ),
        Call::delete(&format!("{POD_GROUPS}/grus-42")).fail(404, "NotFound", "podgroups \"grus-42\" not found"),
    ]);
    backend.launch(&gang_launch(0, "dgx-1")).await.unwrap();
    let forgotten = backend.forget_job(42).await;
    let again = backend.forget_job(42).await;
    scenario.verify().await;
    forgotten.unwrap();
    again.unwrap();
}

#[tokio::test]
async fn rebuild_reads_every_managed_pod_and_skips_malformed_ones() {
    let (mut backend, server) = context(KubeConfig::default());
    let pods = [
        Pod::replica(42, "main", 0).epoch(3).bound_to("dgx-1").phase("Running").devices("0:1000,1:1000"),
        Pod::replica(42, "main", 1).epoch(3).bound_to("dgx-2").phase("Pending"),
        Pod::replica(42, "main", 2).epoch(3),
        Pod::replica(50, "eval", 0).bound_to("gpu-a1").phase("Succeeded").devices("3:250"),
        Pod::replica(51, "train", 0).bound_to("gpu-a1").crashed("OOMKilled", 137),
        Pod::replica(52, "train", 0).bound_to("gpu-a2").evicted("The node was low on resource: memory."),
        Pod::replica(60, "bad", 0).epoch(3).label("grus.io/epoch", "three"),
        Pod::replica(61, "bad", 0).devices("0:lots"),
    ];
    let scenario = server.run(vec![
        Call::get(MANAGED_PODS).answer(200, list("PodList", pods[..4].iter().map(to_json).collect(), Some("page-2"))),
        Call::get("/api/v1/pods?labelSelector=grus.io/managed-by=grus-agent&limit=500&continue=page-2")
            .answer(200, list("PodList", pods[4..].iter().map(to_json).collect(), None)),
    ]);
    let replicas = backend.replicas().await;
    scenario.verify().await;
    let replicas = replicas.unwrap();
    let whole = |indices: &[u32]| indices.iter().map(|&index| DeviceRef::share(index, 1000)).collect::<Vec<_>>();
    let expected = vec![
        ObservedReplica {
            key: key(42, "main", 0),
            epoch: 3,
            node: "dgx-1".into(),
            devices: whole(&[0, 1]),
            phase: ReplicaPhase::Running,
        },
        ObservedReplica {
            key: key(42, "main", 1),
            epoch: 3,
            node: "dgx-2".into(),
            devices: whole(&[0]),
            phase: ReplicaPhase::Placed,
        },
        ObservedReplica {
            key: key(42, "main", 2),
            epoch: 3,
            node: "gpu-a1".into(),
            devices: whole(&[0]),
            phase: ReplicaPhase::Placed,
        },
        ObservedReplica {
            key: key(50, "eval", 0),
            epoch: 1,
            node: "gpu-a1".into(),
            devices: vec![DeviceRef::share(3, 250)],
            phase: ReplicaPhase::Succeeded,
        },
        ObservedReplica {
            key: key(51, "train", 0),
            epoch: 1,
            node: "gpu-a1".into(),
            devices: whole(&[0]),
            phase: ReplicaPhase::Failed {
                reason: "OOMKilled (exit 137)".into(),
                exit: ReplicaExit::new(Some(137), Termination::OomKilled),
            },
        },
        ObservedReplica {
            key: key(52, "train", 0),
            epoch: 1,
            node: "gpu-a2".into(),
            devices: whole(&[0]),
            phase: ReplicaPhase::ended(Termination::Evicted, "Evicted: The node was low on resource: memory."),
        },
    ];
    assert_eq!(replicas, expected);
}

#[tokio::test]
async fn rebuild_lists_only_the_configured_namespaces() {
    let config =
        KubeConfig { watch_namespaces: vec!["grus-vision".into(), "grus-nlp".into()], ..KubeConfig::default() };
    let (mut backend, server) = context(config);
    let scenario = server.run(vec![
        Call::get("/api/v1/namespaces/grus-vision/pods?labelSelector=grus.io/managed-by=grus-agent&limit=500")
            .answer(200, list("PodList", vec![to_json(&Pod::replica(1, "main", 0).phase("Running"))], None)),
        Call::get("/api/v1/namespaces/grus-nlp/pods?labelSelector=grus.io/managed-by=grus-agent&limit=500")
            .answer(200, list("PodList", vec![], None)),
    ]);
    let replicas = backend.replicas().await;
    scenario.verify().await;
    assert_eq!(replicas.unwrap().len(), 1);
}

#[test]
fn a_recorded_running_pod_is_read_back() {
    let pod: Pod = serde_json::from_str(include_str!("fixtures/kube/pod-running.json")).unwrap();
    let replica = grus_agent::backend::kube::pod::observe(&pod).unwrap();
    assert_eq!(
        replica,
        ObservedReplica {
            key: key(42, "Main Task", 1),
            epoch: 3,
            node: "dgx-h100-017".into(),
            devices: (4..8).map(|index| DeviceRef::share(index, 1000)).collect(),
            phase: ReplicaPhase::Running,
        }
    );
}

fn replica_events(events: &[BackendEvent]) -> Vec<(ReplicaKey, ReplicaPhase)> {
    events
        .iter()
        .filter_map(|e| match e {
            BackendEvent::Replica(r) => Some((r.key.clone(), r.phase.clone())),
            BackendEvent::NodesChanged | BackendEvent::Checkpointed { .. } => None,
        })
        .collect()
}

#[test]
fn a_checkpoint_annotation_the_workload_sets_is_reported_once_per_value_before_the_stop() {
    let mut tracker = PodTracker::new(vec![None]);
    let mut out = Vec::new();
    let pod = || Pod::replica(7, "main", 0).epoch(2).bound_to("n1").phase("Running");
    tracker.apply(0, Event::Apply(pod()), &mut out);
    tracker.stopping.insert(key(7, "main", 0));
    let acked = || pod().annotation("grus.io/checkpoint", "s3://ckpt/7/step-900");
    tracker.apply(0, Event::Apply(acked()), &mut out);
    tracker.apply(0, Event::Apply(acked()), &mut out);
    tracker.apply(0, Event::Apply(acked().annotation("grus.io/checkpoint-requested", "1")), &mut out);
    tracker.apply(0, Event::Apply(pod().annotation("grus.io/checkpoint", "s3://ckpt/7/step-950")), &mut out);
    tracker.apply(0, Event::Delete(acked()), &mut out);
    let seen: Vec<String> = out
        .iter()
        .map(|e| match e {
            BackendEvent::Checkpointed { key, epoch, reference } => format!("{key} @{epoch}: {reference}"),
            BackendEvent::Replica(r) => format!("{} {:?}", r.key, r.phase),
            BackendEvent::NodesChanged => "nodes".into(),
        })
        .collect();
    assert_eq!(
        seen,
        [
            "job 7 task main replica 0 Running",
            "job 7 task main replica 0 @2: s3://ckpt/7/step-900",
            "job 7 task main replica 0 @2: s3://ckpt/7/step-950",
            "job 7 task main replica 0 Stopped",
        ]
    );
}

#[test]
fn pod_watch_events_report_each_phase_change_once() {
    let mut tracker = PodTracker::new(vec![None]);
    let mut out = Vec::new();
    let pod = || Pod::replica(42, "main", 0).epoch(3).bound_to("dgx-1");
    let k = key(42, "main", 0);
    tracker.apply(0, Event::Apply(pod()), &mut out);
    tracker.apply(0, Event::Apply(pod()), &mut out);
    tracker.apply(0, Event::Apply(pod().phase("Running")), &mut out);
    tracker.apply(0, Event::Apply(pod().phase("Running")), &mut out);
    tracker.apply(0, Event::Apply(pod().phase("Succeeded")), &mut out);
    tracker.apply(0, Event::Delete(pod().phase("Succeeded")), &mut out);
    assert_eq!(
        replica_events(&out),
        vec![(k.clone(), ReplicaPhase::Placed), (k.clone(), ReplicaPhase::Running), (k, ReplicaPhase::Succeeded)]
    );
}

#[test]
fn a_deleted_pod_is_stopped_when_the_agent_asked_and_failed_otherwise() {
    let mut tracker = PodTracker::new(vec![None]);
    let mut out = Vec::new();
    let asked = || Pod::replica(1, "main", 0).bound_to("n1").phase("Running");
    let other = || Pod::replica(2, "main", 0).bound_to("n1").phase("Running");
    tracker.apply(0, Event::Apply(asked()), &mut out);
    tracker.apply(0, Event::Apply(other()), &mut out);
    out.clear();
    tracker.stopping.insert(key(1, "main", 0));
    // Containers are killed: the terminating pod passes through Failed, which says nothing.
    tracker.apply(0, Event::Apply(asked().terminating().crashed("Error", 143)), &mut out);
    tracker.apply(0, Event::Delete(asked().terminating().crashed("Error", 143)), &mut out);
    tracker.apply(0, Event::Delete(other()), &mut out);
    assert_eq!(
        replica_events(&out),
        vec![
            (key(1, "main", 0), ReplicaPhase::Stopped),
            (key(2, "main", 0), ReplicaPhase::ended(Termination::Lost, "pod deleted outside grus")),
        ]
    );
}

#[test]
fn a_relist_reports_pods_deleted_while_the_watch_was_down_and_not_seeded_ones() {
    let mut tracker = PodTracker::new(vec![None]);
    let mut out = Vec::new();
    let kept = Pod::replica(1, "main", 0).bound_to("n1").phase("Running");
    let vanished = Pod::replica(2, "main", 0).bound_to("n1").phase("Running");
    // Rebuild seeds what the agent already knows.
    for p in [&kept, &vanished] {
        tracker.seed(p, grus_agent::backend::kube::pod::observe(p).unwrap());
    }
    tracker.apply(0, Event::Init, &mut out);
    tracker.apply(0, Event::InitApply(kept.clone()), &mut out);
    tracker.apply(0, Event::InitDone, &mut out);
    assert_eq!(
        replica_events(&out),
        vec![(key(2, "main", 0), ReplicaPhase::ended(Termination::Lost, "pod deleted outside grus"))]
    );
    // A relaunch under the same name is a new pod (new uid): its phase is reported.
    out.clear();
    tracker.apply(0, Event::Apply(Pod::replica(2, "main", 0).epoch(2).uid("uid-new").bound_to("n1")), &mut out);
    assert_eq!(replica_events(&out), vec![(key(2, "main", 0), ReplicaPhase::Placed)]);
}

#[test]
fn malformed_pods_in_the_watch_are_skipped() {
    let mut tracker = PodTracker::new(vec![None]);
    let mut out = Vec::new();
    tracker.apply(0, Event::Apply(Pod::replica(1, "main", 0).label("grus.io/job", "x")), &mut out);
    tracker.apply(0, Event::Apply(Pod::replica(1, "main", 0).devices("oops")), &mut out);
    assert!(out.is_empty());
}

#[test]
fn node_updates_that_change_nothing_are_not_reported() {
    let mut store = NodeStore::default();
    let n = || Node::test("gpu-a1").with_gpus(8);
    assert!(!store.apply(Event::Init));
    assert!(!store.apply(Event::InitApply(n())));
    assert!(store.apply(Event::InitDone), "first listing");
    assert!(store.synced);
    let mut heartbeat = n();
    heartbeat.metadata.resource_version = Some("1002".into());
    assert!(!store.apply(Event::Apply(heartbeat)), "a heartbeat changes no NodeInfo");
    assert!(store.apply(Event::Apply(n().not_ready())), "health changed");
    assert!(store.apply(Event::Delete(n())));
    assert!(!store.apply(Event::Delete(n())));
    assert!(store.nodes.is_empty());
}

#[tokio::test]
async fn changes_come_from_the_node_and_pod_watches() {
    let (mut backend, server) = context(KubeConfig::default());
    let pod = || Pod::replica(42, "main", 0).epoch(3).bound_to("dgx-1");
    let node = || Node::test("dgx-1").with_gpus(8);
    let mut heartbeat = node();
    heartbeat.metadata.resource_version = Some("1002".into());
    let scenario = server.serve(vec![
        fixtures::Route::list("/api/v1/nodes", list("NodeList", vec![to_json(&node())], None)),
        fixtures::Route::watch(
            "/api/v1/nodes",
            &[("MODIFIED", to_json(&heartbeat)), ("MODIFIED", to_json(&node().cordoned()))],
        ),
        fixtures::Route::list("/api/v1/pods", list("PodList", vec![to_json(&pod())], None)),
        fixtures::Route::watch(
            "/api/v1/pods",
            &[
                ("MODIFIED", to_json(&pod().phase("Running"))),
                ("MODIFIED", to_json(&pod().phase("Running"))),
                ("MODIFIED", to_json(&pod().phase("Succeeded"))),
            ],
        ),
    ]);

    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + fixtures::TIMEOUT;
    while tokio::time::Instant::now() < deadline {
        events.extend(backend.changes().await.unwrap());
        if replica_events(&events).len() >= 3 && events.contains(&BackendEvent::NodesChanged) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    scenario.verify().await;
    events.extend(backend.changes().await.unwrap());
    let k = key(42, "main", 0);
    assert_eq!(
        replica_events(&events),
        vec![(k.clone(), ReplicaPhase::Placed), (k.clone(), ReplicaPhase::Running), (k, ReplicaPhase::Succeeded)]
    );
    // Node events between two calls collapse into one NodesChanged (the first listing, the
    // cordon); `node_updates_that_change_nothing_are_not_reported` covers heartbeats.
    assert!(events.contains(&BackendEvent::NodesChanged), "{events:?}");
    // Once the watch has listed the nodes, `nodes()` answers from it without an API call.
    let nodes = backend.nodes().await.unwrap();
    assert_eq!(nodes.len(), 1);
    assert!(!nodes[0].healthy);
}

#[tokio::test]
async fn whole_gpus_can_be_requested_as_gpu_milli() {
    let config =
        KubeConfig { whole_gpu_resource: "grus.io/gpu-milli".into(), pod_groups: false, ..KubeConfig::default() };
    let (mut backend, server) = context(config);
    let scenario = server.run(vec![
        Call::post(PODS)
            .body(|pod| {
                let resources = &pod["spec"]["containers"][0]["resources"];
                assert_eq!(resources["limits"]["grus.io/gpu-milli"], json!("8000"));
                assert!(resources["limits"].get("nvidia.com/gpu").is_none());
            })
            .echo(201),
        binding("grus-42-main-0", "dgx-1"),
    ]);
    let result = backend.launch(&gang_launch(0, "dgx-1")).await;
    scenario.verify().await;
    result.unwrap();
}

#[tokio::test]
async fn relaunching_while_the_stopped_pod_terminates_asks_for_a_retry() {
    let (mut backend, server) = context(KubeConfig { pod_groups: false, ..KubeConfig::default() });
    let terminating = Pod::replica(42, "main", 0).epoch(3).bound_to("dgx-1").phase("Running").terminating();
    let scenario = server.run(vec![
        Call::post(PODS).fail(409, "AlreadyExists", "pods \"grus-42-main-0\" already exists"),
        Call::get(&format!("{PODS}/grus-42-main-0")).answer(200, to_json(&terminating)),
    ]);
    let result = backend.launch(&gang_launch(0, "dgx-1")).await;
    scenario.verify().await;
    assert!(matches!(result, Err(BackendError::Unavailable(_))), "{result:?}");
}

/// Under Kubernetes the exchanged Redis credentials live in a Secret of the agent's namespace:
/// none while it is missing or as the chart creates it (empty), then written by server-side
/// apply with the three keys and read back whole.
#[tokio::test]
async fn agent_credentials_are_kept_in_a_secret() {
    use grus_agent::credentials::{CredentialStore, StoredCredentials};
    let (client, server) = fixtures::client();
    let path = "/api/v1/namespaces/grus-system/secrets/grus-agent-redis";
    let kept =
        StoredCredentials { cluster: "east".into(), username: "grus-agent-east".into(), password: "s3cr3t".into() };
    let b64 = |s: &str| serde_json::to_value(k8s_openapi::ByteString(s.as_bytes().to_vec())).unwrap();
    let stored = json!({
        "apiVersion": "v1", "kind": "Secret", "metadata": { "name": "grus-agent-redis", "namespace": "grus-system" },
        "type": "Opaque",
        "data": { "cluster": b64("east"), "username": b64("grus-agent-east"), "password": b64("s3cr3t") }
    });
    let expected = stored["data"].clone();
    let scenario = server.run(vec![
        Call::get(path).fail(404, "NotFound", "secrets \"grus-agent-redis\" not found"),
        Call::get(path)
            .answer(200, json!({ "apiVersion": "v1", "kind": "Secret", "metadata": { "name": "grus-agent-redis" } })),
        Call::patch(&format!("{path}?force=true&fieldManager=grus-agent"))
            .body(move |b| {
                assert_eq!(b["data"], expected, "{b}");
                assert_eq!(b["type"], "Opaque");
                assert_eq!(b["metadata"]["labels"]["app.kubernetes.io/managed-by"], "grus-agent");
            })
            .echo(200),
        Call::get(path).answer(200, stored),
    ]);
    let store = CredentialStore::secret(client, "grus-system", "grus-agent-redis");
    assert_eq!(store.load().await.unwrap(), None);
    assert_eq!(store.load().await.unwrap(), None);
    store.store(&kept).await.unwrap();
    assert_eq!(store.load().await.unwrap(), Some(kept));
    scenario.verify().await;
}

/// Replica of job `job` of inference service `chat` (port 8000, ready when /healthz answers).
fn service_launch(job: u64) -> ReplicaLaunch {
    let mut launch = share_launch();
    launch.key = key(job, "server", 0);
    launch.task.name = "server".to_string();
    launch.service = Some(ServiceReplicaSpec {
        name: "chat".into(),
        revision: 2,
        port: 8000,
        readiness: Some(ReadinessSpec { path: "/healthz".into(), initial_delay_s: 5, period_s: 3 }),
    });
    launch
}

const SERVICES: &str = "/api/v1/namespaces/grus-vision/services";

#[tokio::test]
async fn a_service_replica_gets_a_readiness_probe_and_the_service_object_comes_and_goes_with_its_replicas() {
    let selector =
        json!({ "grus.io/managed-by": "grus-agent", "grus.io/service": "chat", "grus.io/service-project": "vision" });
    let (mut backend, server) = context(KubeConfig { pod_groups: false, ..KubeConfig::default() });
    let expected = selector.clone();
    let scenario = server.run(vec![
        Call::post(SERVICES)
            .body(move |svc| {
                assert_eq!(svc["metadata"]["name"], json!("chat"));
                assert_eq!(svc["spec"]["selector"], expected);
                assert_eq!(
                    svc["spec"]["ports"],
                    json!([{ "name": "http", "port": 8000, "targetPort": 8000, "protocol": "TCP" }])
                );
            })
            .echo(201),
        Call::post(PODS)
            .body(move |pod| {
                let labels = &pod["metadata"]["labels"];
                for (k, v) in selector.as_object().unwrap() {
                    assert_eq!(&labels[k], v, "{k}");
                }
                let c = &pod["spec"]["containers"][0];
                assert_eq!(c["ports"], json!([{ "name": "http", "containerPort": 8000, "protocol": "TCP" }]));
                assert_eq!(
                    c["readinessProbe"],
                    json!({ "httpGet": { "path": "/healthz", "port": 8000 }, "initialDelaySeconds": 5, "periodSeconds": 3 })
                );
            })
            .echo(201),
        binding("grus-50-server-0", "gpu-a1"),
        // The second replica: the object is known, only the pod.
        pod_create("grus-51-server-0", "gpu-a1"),
        binding("grus-51-server-0", "gpu-a1"),
        // Forgetting the last replica deletes the object.
        Call::delete(&format!("{SERVICES}/chat")).answer(200, json!({ "kind": "Status", "status": "Success" })),
    ]);
    backend.launch(&service_launch(50)).await.unwrap();
    backend.launch(&service_launch(51)).await.unwrap();
    let first = backend.forget_job(50).await;
    let last = backend.forget_job(51).await;
    scenario.verify().await;
    first.unwrap();
    last.unwrap();
}

#[tokio::test]
async fn a_service_object_already_there_is_kept() {
    let (mut backend, server) = context(KubeConfig { pod_groups: false, ..KubeConfig::default() });
    let scenario = server.run(vec![
        Call::post(SERVICES).fail(409, "AlreadyExists", "services \"chat\" already exists"),
        pod_create("grus-50-server-0", "gpu-a1"),
        binding("grus-50-server-0", "gpu-a1"),
    ]);
    let launched = backend.launch(&service_launch(50)).await;
    scenario.verify().await;
    launched.unwrap();
}

#[tokio::test]
async fn a_workspace_gets_its_own_service_and_its_address() {
    let mut launch = share_launch();
    launch.workspace =
        Some(WorkspaceSpec { port: 8888, idle_after_s: 1800, idle_action: grus_protocol::wire::IdleAction::Stop });
    let (mut backend, server) = context(KubeConfig { pod_groups: false, ..KubeConfig::default() });
    let scenario = server.run(vec![
        Call::post(SERVICES)
            .body(|svc| {
                assert_eq!(svc["metadata"]["name"], json!("grus-ws-7"));
                assert_eq!(svc["spec"]["selector"], json!({ "grus.io/managed-by": "grus-agent", "grus.io/job": "7" }));
                assert_eq!(svc["spec"]["ports"][0]["port"], json!(8888));
            })
            .echo(201),
        Call::post(PODS)
            .body(|pod| {
                assert_eq!(pod["metadata"]["labels"]["grus.io/workspace"], json!("true"));
                assert_eq!(pod["spec"]["containers"][0]["ports"][0]["containerPort"], json!(8888));
            })
            .echo(201),
        binding("grus-7-notebook-0", "gpu-a1"),
        Call::delete(&format!("{SERVICES}/grus-ws-7")).answer(200, json!({ "kind": "Status", "status": "Success" })),
    ]);
    backend.launch(&launch).await.unwrap();
    let forgotten = backend.forget_job(7).await;
    scenario.verify().await;
    forgotten.unwrap();
    assert_eq!(
        backend.endpoint("vision", 7, ServedPort::Workspace { port: 8888 }).as_deref(),
        Some("http://grus-ws-7.grus-vision.svc.cluster.local:8888/")
    );
    assert_eq!(
        backend.endpoint("vision", 50, ServedPort::Service { name: "chat", port: 8000 }).as_deref(),
        Some("http://chat.grus-vision.svc.cluster.local:8000/")
    );
}

#[tokio::test]
async fn a_replicas_output_is_its_pod_log_with_timestamps_and_a_pod_that_is_gone_has_none() {
    let (mut backend, server) = context(KubeConfig { pod_groups: false, ..KubeConfig::default() });
    let log = "2026-11-27T10:00:00.250Z epoch 1 loss=2.1\n2026-11-27T10:00:01Z epoch 2 loss=1.9\n";
    let scenario =
        server.run(vec![
            pod_create("grus-7-notebook-0", "gpu-a1"),
            binding("grus-7-notebook-0", "gpu-a1"),
            // A plain read asks for a tail, with timestamps, bounded in bytes.
            Call::get(&format!("{PODS}/grus-7-notebook-0/log?limitBytes=8388608&tailLines=10000&timestamps=true"))
                .text(log),
            Call::get(&format!("{PODS}/grus-7-notebook-0/log?limitBytes=8388608&tailLines=1&timestamps=true"))
                .text(log),
            Call::get(&format!("{PODS}/grus-7-notebook-0/log?limitBytes=8388608&tailLines=10000&timestamps=true"))
                .fail(404, "NotFound", "pods \"grus-7-notebook-0\" not found"),
        ]);
    let launch = share_launch();
    backend.launch(&launch).await.unwrap();
    let q = |tail| LogQuery { task: None, replica: None, tail, since_ms: None, max_bytes: 1 << 16 };
    let all = backend.logs(&launch.key, &q(None)).await;
    let last = backend.logs(&launch.key, &q(Some(1))).await;
    let gone = backend.logs(&launch.key, &q(None)).await;
    let never = backend.logs(&key(8, "main", 0), &q(None)).await;
    scenario.verify().await;
    let all = all.unwrap();
    let texts: Vec<(i64, &str)> = all.lines.iter().map(|l| (l.at_ms % 10_000, l.text.as_str())).collect();
    assert_eq!(texts, [(250, "epoch 1 loss=2.1"), (1_000, "epoch 2 loss=1.9")]);
    assert_eq!(all.source, LogSource::Live);
    // The API server answered more than the tail asked: the reply keeps the last line.
    assert_eq!(last.unwrap().lines.len(), 1);
    assert_eq!(gone.unwrap().source, LogSource::Gone);
    assert_eq!(never.unwrap().source, LogSource::Gone, "a replica never launched here asks nothing");
}

#[tokio::test]
async fn a_running_replicas_resource_use_is_read_from_its_kubelet_through_the_node_proxy() {
    use grus_agent::backend::kube::usage::{UsagePoller, UsageTarget};
    let (client, server) = fixtures::client();
    let summary = |cpu_nano: u64, rx: u64| {
        json!({
            "node": { "nodeName": "gpu-a1" },
            "pods": [
                { "podRef": { "name": "grus-7-main-0", "namespace": "grus-vision", "uid": "u1" },
                  "cpu": { "usageNanoCores": cpu_nano },
                  "memory": { "workingSetBytes": 3u64 << 30 },
                  "network": { "rxBytes": rx, "txBytes": 10 } },
                { "podRef": { "name": "someone-else", "namespace": "default", "uid": "u2" },
                  "cpu": { "usageNanoCores": 1 } }
            ]
        })
    };
    let cadvisor = |read: u64| {
        format!(
            "container_fs_reads_bytes_total{{container=\"main\",device=\"/dev/nvme0n1\",namespace=\"grus-vision\",pod=\"grus-7-main-0\"}} {read}\n\
             container_fs_writes_bytes_total{{container=\"main\",device=\"/dev/nvme0n1\",namespace=\"grus-vision\",pod=\"grus-7-main-0\"}} 0\n"
        )
    };
    const SUMMARY: &str = "/api/v1/nodes/gpu-a1/proxy/stats/summary";
    const CADVISOR: &str = "/api/v1/nodes/gpu-a1/proxy/metrics/cadvisor";
    let scenario = server.run(vec![
        Call::get(SUMMARY).answer(200, summary(2_500_000_000, 1_000)),
        Call::get(CADVISOR).text(&cadvisor(5_000)),
        Call::get(SUMMARY).answer(200, summary(1_000_000_000, 21_000)),
        Call::get(CADVISOR).text(&cadvisor(45_000)),
        // A kubelet that cannot be reached gives no reading, not a stale one.
        Call::get(SUMMARY).fail(503, "ServiceUnavailable", "no route to the node"),
    ]);
    let targets = vec![
        UsageTarget {
            key: key(7, "main", 0),
            node: "gpu-a1".into(),
            namespace: "grus-vision".into(),
            pod: "grus-7-main-0".into(),
        },
        // A pod the kubelet does not list (yet) gives no reading.
        UsageTarget {
            key: key(7, "main", 1),
            node: "gpu-a1".into(),
            namespace: "grus-vision".into(),
            pod: "grus-7-main-1".into(),
        },
    ];
    let mut poller = UsagePoller::new(client);
    let first = poller.poll(&targets, 10_000).await;
    let second = poller.poll(&targets, 12_000).await;
    let third = poller.poll(&targets, 14_000).await;
    scenario.verify().await;
    assert_eq!(first.len(), 1);
    assert_eq!((first[0].job, first[0].task.as_str(), first[0].replica), (7, "main", 0));
    assert_eq!((first[0].cpu_milli, first[0].memory_mib), (2_500, 3 * 1024));
    assert_eq!((first[0].disk_read_bps, first[0].net_rx_bps), (0, 0), "rates need two reads");
    assert_eq!(second[0].cpu_milli, 1_000);
    assert_eq!((second[0].disk_read_bps, second[0].net_rx_bps, second[0].net_tx_bps), (20_000, 10_000, 0));
    assert!(third.is_empty());
}
