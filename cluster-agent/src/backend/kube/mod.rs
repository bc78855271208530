//! The `kube` backend: replicas run as Pods that the agent binds to the nodes its own
//! scheduler chose, on one Kubernetes cluster.
//!
//! # The pod contract
//!
//! For each placed replica the backend creates, in the project's namespace
//! ([`KubeConfig::namespace_for_project`], `grus-<project>` by default):
//!
//! - a Pod named `grus-<job id>-<task>-<replica>` ([`labels::pod_name`]: DNS-safe; a task
//!   name that had to be altered or shortened gets a hash suffix), with
//!   `spec.schedulerName: grus` (so kube-scheduler leaves it alone), `restartPolicy: Never`,
//!   one container `main` running the task's image, command and env (plus `GRUS_JOB_ID`,
//!   `GRUS_TASK`, `GRUS_REPLICA`, `GRUS_REPLICAS`, `GRUS_EPOCH`), CPU and memory requests,
//!   and `nvidia.com/gpu: <n>` for whole GPUs or `grus.io/gpu-milli: <milli>` for a share;
//! - labels `grus.io/managed-by: grus-agent`, `grus.io/job`, `grus.io/task` (label-safe form),
//!   `grus.io/replica`, `grus.io/epoch`, and `scheduling.x-k8s.io/pod-group: grus-<job>` in a
//!   gang;
//! - annotations `grus.io/devices: index:milli[,index:milli]` — the devices the agent assigned
//!   on the node, which **the device plugin reads** to expose exactly those GPUs —
//!   `grus.io/gpu-memory-mib` when the task limits GPU memory, and `grus.io/task-name`,
//!   `grus.io/job-name`, `grus.io/project`, `grus.io/queue`, `grus.io/node` for the record;
//! - then a `pods/binding` to the chosen node.
//!
//! A gang job also gets a `scheduling.x-k8s.io/v1alpha1` PodGroup `grus-<job>` with
//! `spec.minMember` (scheduler-plugins' coscheduling CRD), created before its first pod.
//!
//! A replica of an inference service also gets labels `grus.io/service` and
//! `grus.io/service-project`, a container port `http` and, when the service has one, an HTTP
//! readiness probe; the service gets a Kubernetes Service named after it in the namespace
//! ([`service`]: created with its first replica here, deleted when the last one is forgotten),
//! whose endpoints are its Ready pods.
//!
//! Everything is idempotent: an existing pod with the same epoch is the same launch (it is
//! bound if it was not), even if it has ended — to run a replica again in the same epoch, stop
//! it first. A pod still terminating, or one from an older epoch (fenced off, so deleted at
//! once without grace), makes the launch report `Unavailable`: the agent retries when the name
//! is free. A pod from a newer epoch makes it `Refused`.
//!
//! # Permissions (the agent's ClusterRole)
//!
//! A job that checkpoints is asked by the annotation `grus.io/checkpoint-requested` (and a
//! POST to the pod when it names a port and path) and acknowledges by setting
//! `grus.io/checkpoint` on its pod to the checkpoint's reference (its service account needs
//! `pods: patch` on itself); the next run finds the reference in `GRUS_CHECKPOINT_REF`.
//!
//! `nodes`: get, list, watch; `pods`: create, get, list, watch, delete, patch; `pods/binding`:
//! create; `pods/log`: get (a replica's output, `logs.rs`); `nodes/proxy`: get (each replica's
//! CPU, memory, disk and network use from the kubelet, [`usage`]); `services`: create, delete; `podgroups.scheduling.x-k8s.io`: create, list, delete.
//! Namespaces are not created: each project's must exist.
//!
//! Nodes come from `status.allocatable` and GPU feature discovery's labels ([`node`]); the
//! rebuild after a restart lists pods by `grus.io/managed-by`; [`Backend::changes`] is fed by
//! watches started on its first call ([`watch`]).

pub mod labels;
pub mod logs;
pub mod node;
pub mod pod;
pub mod service;
pub mod usage;
pub mod watch;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Binding, Node, ObjectReference, Pod, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use kube::{Api, Client};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use grus_protocol::logs::{select_lines, LogQuery, LogReply, LogSource};
use grus_protocol::wire::{CheckpointHttp, NodeInfo, ReplicaUsage, CHECKPOINT_REQUESTED_ANNOTATION};

use self::watch::{NodeStore, PodTracker, Raw};
use crate::backend::{Backend, BackendError, BackendEvent, ObservedReplica, ReplicaKey, ReplicaLaunch};

/// How the kube backend maps Grus onto the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeConfig {
    /// Namespace of each project's pods; projects not listed use `namespace_prefix + project`.
    pub project_namespaces: BTreeMap<String, String>,
    pub namespace_prefix: String,
    /// Namespaces whose pods are listed and watched; empty means all namespaces (which needs a
    /// ClusterRole, as the node watch does anyway).
    pub watch_namespaces: Vec<String>,
    /// `spec.schedulerName` of every pod.
    pub scheduler_name: String,
    /// Create a PodGroup per gang job (needs scheduler-plugins' PodGroup CRD; a cluster
    /// without it only logs a warning).
    pub pod_groups: bool,
    /// Extended resource a whole-GPU replica requests: `nvidia.com/gpu` (one per GPU, the
    /// NVIDIA device plugin's) by default; `grus.io/gpu-milli` (1000 per GPU) on clusters where
    /// only Grus' device plugin runs.
    pub whole_gpu_resource: String,
}

impl Default for KubeConfig {
    fn default() -> Self {
        KubeConfig {
            project_namespaces: BTreeMap::new(),
            namespace_prefix: "grus-".to_string(),
            watch_namespaces: Vec::new(),
            scheduler_name: "grus".to_string(),
            pod_groups: true,
            whole_gpu_resource: labels::resource::GPU.to_string(),
        }
    }
}

impl KubeConfig {
    pub fn namespace_for_project(&self, project: &str) -> String {
        match self.project_namespaces.get(project) {
            Some(ns) => ns.clone(),
            None => format!("{}{}", self.namespace_prefix, project),
        }
    }

    /// One pod stream per watched namespace, or one over all of them.
    fn scopes(&self) -> Vec<Option<String>> {
        if self.watch_namespaces.is_empty() {
            vec![None]
        } else {
            self.watch_namespaces.iter().cloned().map(Some).collect()
        }
    }
}

/// scheduler-plugins' PodGroup (`scheduling.x-k8s.io/v1alpha1`), used untyped: one field is
/// written and none is read, which does not justify generated types.
pub fn pod_group_resource() -> ApiResource {
    ApiResource {
        group: "scheduling.x-k8s.io".to_string(),
        version: "v1alpha1".to_string(),
        api_version: "scheduling.x-k8s.io/v1alpha1".to_string(),
        kind: "PodGroup".to_string(),
        plural: "podgroups".to_string(),
    }
}

/// Page size of list calls, so a large cluster is read in bounded responses.
const PAGE: u32 = 500;

/// Runs replicas as bound Pods. Build it with [`KubeBackend::new`]; watches start on the first
/// [`Backend::changes`] call, so tests that script only launches see only their calls.
pub struct KubeBackend {
    client: Client,
    config: KubeConfig,
    /// Namespace and name of each replica's pod, from launches and observations.
    locations: HashMap<ReplicaKey, (String, String)>,
    /// Namespace of the PodGroup of each gang job launched since start.
    pod_groups: HashMap<u64, String>,
    /// The Service objects of inference services, and the jobs that keep them.
    services: service::ServiceObjects,
    nodes: NodeStore,
    pods: PodTracker,
    raw: Option<mpsc::UnboundedReceiver<Raw>>,
    tasks: Vec<JoinHandle<()>>,
    pending: Vec<BackendEvent>,
    nodes_changed: bool,
    /// The background reader of the replicas' resource use, started on the first
    /// [`Backend::usage`].
    usage: Option<usage::UsageFeed>,
}

impl Drop for KubeBackend {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl KubeBackend {
    /// A backend on the cluster of the local kubeconfig, or the in-cluster service account.
    pub async fn connect(config: KubeConfig) -> Result<KubeBackend, BackendError> {
        let client = Client::try_default()
            .await
            .map_err(|e| BackendError::Unavailable(format!("no Kubernetes client configuration: {e}")))?;
        Ok(KubeBackend::new(client, config))
    }

    pub fn new(client: Client, config: KubeConfig) -> KubeBackend {
        let pods = PodTracker::new(config.scopes());
        KubeBackend {
            client,
            config,
            locations: HashMap::new(),
            pod_groups: HashMap::new(),
            services: service::ServiceObjects::default(),
            nodes: NodeStore::default(),
            pods,
            raw: None,
            tasks: Vec::new(),
            pending: Vec::new(),
            nodes_changed: false,
            usage: None,
        }
    }

    pub fn config(&self) -> &KubeConfig {
        &self.config
    }

    /// Processes what the watches forwarded so far (never waits).
    fn drain(&mut self) {
        let Some(rx) = self.raw.as_mut() else { return };
        while let Ok(raw) = rx.try_recv() {
            match raw {
                Raw::Node(event) => self.nodes_changed |= self.nodes.apply(*event),
                Raw::Pod(stream, event) => {
                    if let watcher::Event::Apply(p) | watcher::Event::InitApply(p) = event.as_ref() {
                        remember(&mut self.locations, p);
                    }
                    self.pods.apply(stream, *event, &mut self.pending);
                }
            }
        }
    }

    fn pods_in(&self, ns: &str) -> Api<Pod> {
        Api::namespaced(self.client.clone(), ns)
    }

    async fn ensure_pod_group(
        &mut self,
        ns: &str,
        launch: &ReplicaLaunch,
        min_members: u32,
    ) -> Result<(), BackendError> {
        let job = launch.key.job;
        if self.pod_groups.contains_key(&job) {
            return Ok(());
        }
        let ar = pod_group_resource();
        let mut group = DynamicObject::new(&labels::pod_group_name(job), &ar)
            .within(ns)
            .data(serde_json::json!({ "spec": { "minMember": min_members } }));
        group.metadata.labels = Some(BTreeMap::from([
            (labels::MANAGED_BY.to_string(), labels::MANAGER.to_string()),
            (labels::JOB.to_string(), job.to_string()),
            (labels::EPOCH.to_string(), launch.epoch.to_string()),
        ]));
        let api: Api<DynamicObject> = Api::namespaced_with(self.client.clone(), ns, &ar);
        match api.create(&PostParams::default(), &group).await {
            Ok(_) => {}
            Err(e) if status(&e) == Some(409) => {}
            Err(e) if status(&e) == Some(404) => {
                // No CRD: gangs still start together because the agent binds them together.
                warn!(job, namespace = ns, "PodGroup CRD not installed; launching the gang without a PodGroup");
            }
            Err(e) => return Err(api_error("create PodGroup", e)),
        }
        self.pod_groups.insert(job, ns.to_string());
        Ok(())
    }

    /// Creates the Service object of the replica's inference service (or of the workspace it
    /// is) unless it is known to exist; one already there (409) is kept as it is.
    async fn ensure_service(&mut self, ns: &str, launch: &ReplicaLaunch) -> Result<(), BackendError> {
        let job = launch.key.job;
        let object = match (&launch.service, &launch.workspace) {
            (Some(spec), _) => service::build_service(&launch.project, spec, ns),
            (None, Some(w)) => service::build_workspace_service(job, w.port, ns),
            (None, None) => return Ok(()),
        };
        let key = (ns.to_owned(), object.metadata.name.clone().unwrap_or_default());
        if !self.services.add(key.clone(), job) {
            return Ok(());
        }
        let object_key = key;
        let api: Api<Service> = Api::namespaced(self.client.clone(), ns);
        match api.create(&PostParams::default(), &object).await {
            Ok(_) => {}
            Err(e) if status(&e) == Some(409) => {}
            Err(e) => return Err(api_error("create service", e)),
        }
        self.services.created(object_key);
        Ok(())
    }

    async fn bind(&self, ns: &str, name: &str, node: &str) -> Result<(), BackendError> {
        let binding = Binding {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some(ns.to_string()),
                ..ObjectMeta::default()
            },
            target: ObjectReference {
                api_version: Some("v1".to_string()),
                kind: Some("Node".to_string()),
                name: Some(node.to_string()),
                ..ObjectReference::default()
            },
        };
        let pods = self.pods_in(ns);
        match pods.create_subresource::<_, serde_json::Value>("binding", name, &PostParams::default(), &binding).await {
            Ok(_) => Ok(()),
            // Already bound (a retried launch): fine if it is bound where we want it.
            Err(e) if status(&e) == Some(409) => {
                let pod = pods.get(name).await.map_err(|e| api_error("read pod", e))?;
                match pod.spec.and_then(|s| s.node_name) {
                    Some(bound) if bound == node => Ok(()),
                    other => Err(BackendError::Refused(format!(
                        "pod {ns}/{name} is bound to {} instead of {node}",
                        other.as_deref().unwrap_or("no node")
                    ))),
                }
            }
            Err(e) => Err(api_error("bind pod", e)),
        }
    }

    /// A pod that already exists under the replica's name: the same launch, or a stale one.
    async fn relaunch(&self, ns: &str, name: &str, launch: &ReplicaLaunch) -> Result<(), BackendError> {
        let pods = self.pods_in(ns);
        let existing = pods.get(name).await.map_err(|e| api_error("read pod", e))?;
        let epoch =
            existing.metadata.labels.as_ref().and_then(|l| l.get(labels::EPOCH)).and_then(|e| e.parse::<u64>().ok());
        let terminating = existing.metadata.deletion_timestamp.is_some();
        match epoch {
            // A stopped replica relaunched in the same epoch (a task restart): its old pod must
            // be gone first; it is not this launch.
            Some(e) if e == launch.epoch && terminating => {
                Err(BackendError::Unavailable(format!("pod {ns}/{name} is still terminating; retry")))
            }
            Some(e) if e == launch.epoch => match existing.spec.and_then(|s| s.node_name) {
                None => self.bind(ns, name, &launch.node).await,
                Some(bound) if bound == launch.node => Ok(()),
                Some(bound) => Err(BackendError::Refused(format!(
                    "pod {ns}/{name} of epoch {e} is bound to {bound}, not {}",
                    launch.node
                ))),
            },
            Some(e) if e > launch.epoch => {
                Err(BackendError::Refused(format!("pod {ns}/{name} belongs to the newer epoch {e}")))
            }
            _ => {
                // An older epoch was fenced off (DESIGN.md invariant 2): remove it now, without a
                // grace period, and let the agent retry once the name is free.
                info!(namespace = ns, pod = name, old = ?epoch, new = launch.epoch, "deleting a pod of a stale epoch");
                match pods
                    .delete(name, &DeleteParams { grace_period_seconds: Some(0), ..DeleteParams::default() })
                    .await
                {
                    Ok(_) => {}
                    Err(e) if status(&e) == Some(404) => {}
                    Err(e) => return Err(api_error("delete stale pod", e)),
                }
                Err(BackendError::Unavailable(format!("pod {ns}/{name} of a stale epoch is being deleted; retry")))
            }
        }
    }

    /// Where a replica's pod is, looking it up by labels when this process has not seen it.
    async fn locate(&mut self, key: &ReplicaKey) -> Result<Option<(String, String)>, BackendError> {
        if let Some(found) = self.locations.get(key) {
            return Ok(Some(found.clone()));
        }
        let selector = format!(
            "{}={},{}={},{}={}",
            labels::MANAGED_BY,
            labels::MANAGER,
            labels::JOB,
            key.job,
            labels::REPLICA,
            key.replica
        );
        for pod in self.list_pods(&selector).await? {
            if pod::replica_key(&pod).is_ok_and(|(k, _)| k == *key) {
                remember(&mut self.locations, &pod);
            }
        }
        Ok(self.locations.get(key).cloned())
    }

    async fn list_pods(&self, selector: &str) -> Result<Vec<Pod>, BackendError> {
        let mut all = Vec::new();
        for scope in self.config.scopes() {
            let api: Api<Pod> = match scope {
                Some(ns) => Api::namespaced(self.client.clone(), &ns),
                None => Api::all(self.client.clone()),
            };
            all.extend(list_all(&api, selector).await.map_err(|e| api_error("list pods", e))?);
        }
        Ok(all)
    }
}

/// Every object matching `selector`, page by page.
async fn list_all<K: Clone + DeserializeOwned + std::fmt::Debug>(api: &Api<K>, selector: &str) -> kube::Result<Vec<K>> {
    let mut lp = ListParams::default().limit(PAGE);
    if !selector.is_empty() {
        lp = lp.labels(selector);
    }
    let mut items = Vec::new();
    loop {
        let page = api.list(&lp).await?;
        items.extend(page.items);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => lp = lp.continue_token(&token),
            None => return Ok(items),
        }
    }
}

fn remember(locations: &mut HashMap<ReplicaKey, (String, String)>, p: &Pod) {
    if let (Ok((key, _)), Some(ns), Some(name)) = (pod::replica_key(p), &p.metadata.namespace, &p.metadata.name) {
        locations.insert(key, (ns.clone(), name.clone()));
    }
}

/// The HTTP status of an API error, if the server answered.
fn status(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// A 4xx answer is a refusal (retrying the same request will not help, except 429); anything
/// else means the API server could not be reached or is unwell.
fn api_error(what: &str, e: kube::Error) -> BackendError {
    match &e {
        kube::Error::Api(s) if (400..500).contains(&s.code) && s.code != 429 => {
            BackendError::Refused(format!("{what}: {} {}: {}", s.code, s.reason, s.message))
        }
        _ => BackendError::Unavailable(format!("{what}: {e}")),
    }
}

impl Backend for KubeBackend {
    /// The in-cluster address of the job's Service object.
    fn endpoint(&self, project: &str, job: u64, served: crate::backend::ServedPort<'_>) -> Option<String> {
        let ns = self.config.namespace_for_project(project);
        Some(match served {
            crate::backend::ServedPort::Workspace { port } => {
                service::url(&ns, &service::workspace_object_name(job), port)
            }
            crate::backend::ServedPort::Service { name, port } => service::url(&ns, &service::object_name(name), port),
        })
    }

    fn name(&self) -> &'static str {
        "kube"
    }

    async fn nodes(&mut self) -> Result<Vec<NodeInfo>, BackendError> {
        self.drain();
        if !self.nodes.synced {
            let api: Api<Node> = Api::all(self.client.clone());
            let listed = list_all(&api, "").await.map_err(|e| api_error("list nodes", e))?;
            let nodes: Vec<NodeInfo> = listed.iter().filter_map(watch::convert).collect();
            self.nodes.replace(&nodes);
        }
        Ok(self.nodes.nodes.values().cloned().collect())
    }

    async fn launch(&mut self, launch: &ReplicaLaunch) -> Result<(), BackendError> {
        let ns = self.config.namespace_for_project(&launch.project);
        if let (Some(gang), true) = (&launch.gang, self.config.pod_groups) {
            self.ensure_pod_group(&ns, launch, gang.min_members).await?;
        }
        self.ensure_service(&ns, launch).await?;
        let pod = pod::build_pod(launch, &ns, &self.config);
        let name = pod.metadata.name.clone().unwrap_or_default();
        self.locations.insert(launch.key.clone(), (ns.clone(), name.clone()));
        match self.pods_in(&ns).create(&PostParams::default(), &pod).await {
            Ok(_) => self.bind(&ns, &name, &launch.node).await,
            Err(e) if status(&e) == Some(409) => self.relaunch(&ns, &name, launch).await,
            Err(e) => Err(api_error("create pod", e)),
        }?;
        debug!(replica = %launch.key, namespace = ns, pod = name, node = launch.node, "launched");
        Ok(())
    }

    async fn stop(&mut self, key: &ReplicaKey, grace: Duration) -> Result<(), BackendError> {
        let Some((ns, name)) = self.locate(key).await? else {
            return Ok(()); // no pod: already gone
        };
        // Round up: a sub-second grace must not become 0, which kills without SIGTERM.
        let seconds = u32::try_from(grace.as_millis().div_ceil(1000)).unwrap_or(u32::MAX);
        let dp = DeleteParams { grace_period_seconds: Some(seconds), ..DeleteParams::default() };
        self.pods.stopping.insert(key.clone());
        match self.pods_in(&ns).delete(&name, &dp).await {
            Ok(_) => Ok(()),
            Err(e) if status(&e) == Some(404) => {
                self.locations.remove(key);
                Ok(())
            }
            Err(e) => {
                self.pods.stopping.remove(key);
                Err(api_error("delete pod", e))
            }
        }
    }

    /// Sets [`CHECKPOINT_REQUESTED_ANNOTATION`] on the pod (a merge patch), then, with `http`,
    /// POSTs to the pod's IP (best effort, two seconds: the annotation is the request of
    /// record).
    async fn request_checkpoint(
        &mut self,
        key: &ReplicaKey,
        _epoch: u64,
        http: Option<&CheckpointHttp>,
    ) -> Result<(), BackendError> {
        let Some((ns, name)) = self.locate(key).await? else { return Ok(()) };
        let asked =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis()).to_string();
        let patch = serde_json::json!({ "metadata": { "annotations": { CHECKPOINT_REQUESTED_ANNOTATION: asked } } });
        let pod = match self.pods_in(&ns).patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(pod) => pod,
            Err(e) if status(&e) == Some(404) => return Ok(()),
            Err(e) => return Err(api_error("annotate pod for a checkpoint", e)),
        };
        let ip = pod.status.and_then(|s| s.pod_ip);
        if let (Some(http), Some(ip)) = (http, ip) {
            let url = format!("http://{ip}:{}{}", http.port, http.path);
            let client = reqwest::Client::builder().timeout(Duration::from_secs(2)).build();
            let sent = match client {
                Ok(c) => c.post(&url).send().await.map(|r| r.status().to_string()).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            if let Err(e) = sent {
                warn!(replica = %key, url, error = %e, "the checkpoint request by HTTP failed; the annotation stays");
            }
        }
        Ok(())
    }

    async fn logs(&mut self, key: &ReplicaKey, query: &LogQuery) -> Result<LogReply, BackendError> {
        let Some((ns, name)) = self.locations.get(key).cloned() else { return Ok(crate::backend::gone(key)) };
        let now_ms =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
        match self.pods_in(&ns).logs(&name, &logs::params(query, now_ms)).await {
            Ok(text) => {
                let (lines, truncated) = select_lines(&logs::parse(&text), query);
                Ok(LogReply {
                    task: key.task.clone(),
                    replica: key.replica,
                    source: LogSource::Live,
                    lines,
                    truncated,
                    ended: false,
                    error: None,
                })
            }
            Err(e) if status(&e) == Some(404) => Ok(crate::backend::gone(key)),
            Err(e) => Err(api_error("read pod log", e)),
        }
    }

    fn usage(&mut self) -> Vec<ReplicaUsage> {
        let targets = self.pods.running();
        let feed = self.usage.get_or_insert_with(|| {
            let (feed, task) = usage::spawn(self.client.clone());
            self.tasks.push(task);
            feed
        });
        feed.exchange(targets)
    }

    async fn forget_job(&mut self, job: u64) -> Result<(), BackendError> {
        self.locations.retain(|k, _| k.job != job);
        for (ns, name) in self.services.forget(job) {
            let api: Api<Service> = Api::namespaced(self.client.clone(), &ns);
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(e) if status(&e) == Some(404) => {}
                Err(e) => return Err(api_error("delete service", e)),
            }
        }
        if !self.config.pod_groups {
            return Ok(());
        }
        let ar = pod_group_resource();
        let namespaces = match self.pod_groups.remove(&job) {
            Some(ns) => vec![ns],
            None => {
                // Launched before a restart: find it by its labels.
                let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &ar);
                let selector = format!("{}={},{}={}", labels::MANAGED_BY, labels::MANAGER, labels::JOB, job);
                match list_all(&api, &selector).await {
                    Ok(groups) => groups.into_iter().filter_map(|g| g.metadata.namespace).collect(),
                    Err(e) if status(&e) == Some(404) => Vec::new(),
                    Err(e) => return Err(api_error("list PodGroups", e)),
                }
            }
        };
        for ns in namespaces {
            let api: Api<DynamicObject> = Api::namespaced_with(self.client.clone(), &ns, &ar);
            match api.delete(&labels::pod_group_name(job), &DeleteParams::default()).await {
                Ok(_) => {}
                Err(e) if status(&e) == Some(404) => {}
                Err(e) => return Err(api_error("delete PodGroup", e)),
            }
        }
        Ok(())
    }

    async fn replicas(&mut self) -> Result<Vec<ObservedReplica>, BackendError> {
        let selector = format!("{}={}", labels::MANAGED_BY, labels::MANAGER);
        let mut out = Vec::new();
        for p in self.list_pods(&selector).await? {
            match pod::observe(&p) {
                Ok(replica) => {
                    remember(&mut self.locations, &p);
                    self.services.seed(&p);
                    self.pods.seed(&p, replica.clone());
                    out.push(replica);
                }
                Err(e) => warn!(
                    namespace = p.metadata.namespace.as_deref().unwrap_or("?"),
                    pod = p.metadata.name.as_deref().unwrap_or("?"),
                    error = %e,
                    "skipping malformed managed pod"
                ),
            }
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    async fn changes(&mut self) -> Result<Vec<BackendEvent>, BackendError> {
        if self.raw.is_none() {
            let (rx, tasks) = watch::spawn(&self.client, &self.config.scopes());
            self.raw = Some(rx);
            self.tasks = tasks;
        }
        self.drain();
        let mut events = std::mem::take(&mut self.pending);
        if std::mem::take(&mut self.nodes_changed) {
            events.push(BackendEvent::NodesChanged);
        }
        Ok(events)
    }
}
