//! Plain data carried inside commands and events: the job as dispatched, node inventory,
//! capacity summaries, GPU metrics and job/replica states.
//!
//! Field names are snake_case, the same as the job YAML of DESIGN.md. Unknown fields are
//! ignored (a newer minor version may add some); missing optional fields take defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A job as the api dispatches it to one cluster.
fn yes() -> bool {
    true
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub id: u64,
    pub name: String,
    pub project: String,
    pub queue: String,
    /// The resolved priority value (class names are resolved by the api).
    pub priority: i32,
    #[serde(default)]
    pub preemptible: bool,
    /// May have other work evicted to make room for it (its tenant's rights, as the api last
    /// read them when dispatching). Absent (an older api): yes.
    #[serde(default = "yes")]
    pub may_preempt: bool,
    pub tasks: Vec<TaskSpec>,
    #[serde(default)]
    pub gang: Option<GangSpec>,
    #[serde(default)]
    pub elastic: Option<ElasticSpec>,
    #[serde(default)]
    pub policies: Vec<PolicySpec>,
    #[serde(default)]
    pub max_runtime_s: Option<u64>,
    #[serde(default)]
    pub min_runtime_s: Option<u64>,
    /// How long the control plane expects it to run (the 90th percentile of its history,
    /// `grus_scheduler::predict`), when it has history. Backfill trusts it where the job gives
    /// no `max_runtime_s`. An older agent ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_runtime_s: Option<u64>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub node_selector: BTreeMap<String, String>,
    /// The node pools the job may use, in order of preference (its gang goes whole into one);
    /// empty: any node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<String>,
    pub submitted_by: String,
    /// Submission time, milliseconds since the Unix epoch.
    pub submitted_at_ms: i64,
    /// The job checkpoints: before it is stopped to make room (eviction, suspension, shrink)
    /// the agent asks it to write a checkpoint and waits, within the grace period, for its
    /// acknowledgement. Absent (an older api, or a job that does not): stopped at the deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<CheckpointSpec>,
    /// An interactive workspace (a notebook-style session for one user) rather than a batch
    /// job: one replica serving `port`, stopped or suspended after `idle_after_s` without GPU
    /// activity. Absent: a batch job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<WorkspaceSpec>,
    /// One replica of an inference service (the api's service controller creates, replaces and
    /// stops them). Absent: not part of a service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReplicaSpec>,
}

/// What makes a job one replica of an inference service: the service it serves (its name is
/// unique in the project), the revision of the service's spec it runs, and how it is reached.
/// Kubernetes: its pod carries [`SERVICE_LABEL`] and a readiness probe, and one Service object
/// per service and cluster selects the ready ones.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceReplicaSpec {
    pub name: String,
    pub revision: u32,
    /// The port the replica serves on.
    pub port: u16,
    /// How a replica is judged ready to take requests; absent: once it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<ReadinessSpec>,
}

/// An HTTP GET readiness check: ready while `GET <path>` on the replica's port answers 2xx/3xx.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadinessSpec {
    pub path: String,
    /// Seconds after the start before the first check.
    #[serde(default)]
    pub initial_delay_s: u32,
    /// Seconds between checks.
    #[serde(default = "ten")]
    pub period_s: u32,
}

fn ten() -> u32 {
    10
}

/// The pod label naming the service a replica serves (its value: the service's name), which
/// the service's Kubernetes Service object selects.
pub const SERVICE_LABEL: &str = "grus.io/service";

/// What makes a job an interactive workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceSpec {
    /// The port its server (Jupyter, VS Code...) listens on, what its URL leads to.
    pub port: u16,
    /// Without GPU activity this long it is warned, then stopped or suspended.
    pub idle_after_s: u64,
    pub idle_action: IdleAction,
}

/// What happens to an idle workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleAction {
    /// Cancelled: it ends and gives everything back.
    Stop,
    /// Suspended: it gives back its GPUs and quota and may be resumed later.
    Suspend,
}

/// How a job checkpoints, and the checkpoint it resumes from.
///
/// Kubernetes: the agent asks by setting the pod annotation [`CHECKPOINT_REQUESTED_ANNOTATION`]
/// (the time of the request, ms; a downward API volume shows it to the workload) and, with
/// `http`, by a POST to the pod; the workload acknowledges by setting
/// [`CHECKPOINT_ANNOTATION`] to the checkpoint's reference. Every replica being stopped must
/// acknowledge. A resumed run gets `resume_from` as `GRUS_CHECKPOINT_REF` in its environment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<CheckpointHttp>,
    /// The reference of the last checkpoint an earlier run acknowledged (set by the api).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_from: Option<String>,
}

/// A POST to `http://<pod ip>:<port><path>` asks a pod to checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointHttp {
    pub port: u16,
    pub path: String,
}

/// Set by the agent on a pod asked to checkpoint: when it asked, ms since the Unix epoch.
pub const CHECKPOINT_REQUESTED_ANNOTATION: &str = "grus.io/checkpoint-requested";
/// Set by the workload on its pod once its checkpoint is written: the checkpoint's reference.
pub const CHECKPOINT_ANNOTATION: &str = "grus.io/checkpoint";
/// The environment variable a resumed replica finds its checkpoint's reference in.
pub const CHECKPOINT_ENV: &str = "GRUS_CHECKPOINT_REF";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskSpec {
    pub name: String,
    pub replicas: u32,
    pub image: String,
    #[serde(default)]
    pub command: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub resources: ResourcesSpec,
    #[serde(default)]
    pub topology: Option<TopologySpec>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourcesSpec {
    #[serde(default)]
    pub gpus: u32,
    /// Milli per GPU; absent means whole GPUs (1000).
    #[serde(default)]
    pub gpu_milli: Option<u32>,
    #[serde(default)]
    pub gpu_memory_mib: Option<u64>,
    #[serde(default)]
    pub gpu_models: Vec<String>,
    /// A MIG instance of this profile (`1g.10gb`, ...) on a GPU in MIG mode, instead of whole
    /// GPUs or a share: then `gpus` is 1 and `gpu_milli` the profile's equivalent (its compute
    /// slices in sevenths of 1000), which quotas, fair share and billing count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_profile: Option<String>,
    #[serde(default)]
    pub cpu_milli: u64,
    #[serde(default)]
    pub memory_mib: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopologyScope {
    #[default]
    Any,
    Node,
    Nvlink,
    Rack,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologySpec {
    pub scope: TopologyScope,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GangSpec {
    pub min_members: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElasticSpec {
    pub min: u32,
    pub max: u32,
}

/// What a policy reacts to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyTrigger {
    TaskSucceeded(String),
    TaskFailed(String),
    ReplicaFailed,
    JobTimeout,
}

/// What a policy does when it fires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyAction {
    CompleteJob,
    AbortJob,
    RestartJob { max: u32 },
    RestartTask,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicySpec {
    pub on: PolicyTrigger,
    #[serde(rename = "do")]
    pub action: PolicyAction,
}

/// A job's, task's or replica's lifecycle state (DESIGN.md's three-level state machines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Pending,
    Admitted,
    Dispatched,
    /// The agent refused or could not place the job; the allocator may re-dispatch it.
    Rejected,
    Scheduled,
    Placed,
    Running,
    Preempting,
    Preempted,
    Evicted,
    Succeeded,
    Failed,
    Cancelled,
}

impl State {
    /// Every state, in declaration order (tests and fuzzers draw from it).
    pub const ALL: [State; 13] = [
        State::Pending,
        State::Admitted,
        State::Dispatched,
        State::Rejected,
        State::Scheduled,
        State::Placed,
        State::Running,
        State::Preempting,
        State::Preempted,
        State::Evicted,
        State::Succeeded,
        State::Failed,
        State::Cancelled,
    ];

    pub fn is_terminal(self) -> bool {
        matches!(self, State::Succeeded | State::Failed | State::Cancelled | State::Evicted)
    }
}

/// Why a replica ended, in the words `kubectl describe pod` uses for a terminated container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// Exited with code 0.
    Completed,
    /// Exited with a non-zero code of its own.
    Error,
    /// Killed for using more memory than its limit.
    OomKilled,
    /// Evicted by the node (memory or disk pressure).
    Evicted,
    /// Ran past its maximum runtime.
    DeadlineExceeded,
    /// Stopped on request: cancelled, preempted or given back by a shrink.
    Stopped,
    /// Its node or pod disappeared under it.
    Lost,
    /// Its container could never start (a bad image name, a missing secret).
    CannotStart,
    /// A reason this version does not know (a newer agent's).
    #[serde(other)]
    Other,
}

impl Termination {
    pub const ALL: [Termination; 9] = [
        Termination::Completed,
        Termination::Error,
        Termination::OomKilled,
        Termination::Evicted,
        Termination::DeadlineExceeded,
        Termination::Stopped,
        Termination::Lost,
        Termination::CannotStart,
        Termination::Other,
    ];

    /// The stored and wire name (`oom_killed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Termination::Completed => "completed",
            Termination::Error => "error",
            Termination::OomKilled => "oom_killed",
            Termination::Evicted => "evicted",
            Termination::DeadlineExceeded => "deadline_exceeded",
            Termination::Stopped => "stopped",
            Termination::Lost => "lost",
            Termination::CannotStart => "cannot_start",
            Termination::Other => "other",
        }
    }

    /// The stored name back; an unknown one is `Other`.
    pub fn parse(s: &str) -> Termination {
        Termination::ALL.into_iter().find(|t| t.as_str() == s).unwrap_or(Termination::Other)
    }
}

/// How a replica ended: its main container's exit code when one is known (a replica stopped
/// before its container ran has none) and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaExit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    pub termination: Termination,
}

impl ReplicaExit {
    pub const COMPLETED: ReplicaExit = ReplicaExit { code: Some(0), termination: Termination::Completed };

    pub fn new(code: Option<i32>, termination: Termination) -> ReplicaExit {
        ReplicaExit { code, termination }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    /// Index on the node.
    pub index: u32,
    pub uuid: Option<String>,
    pub model: String,
    pub memory_mib: u64,
    #[serde(default)]
    pub numa: u8,
    #[serde(default)]
    pub nvlink_group: u8,
    pub healthy: bool,
    /// In MIG mode: it serves MIG instances only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mig: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeInfo {
    pub name: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub rack: Option<String>,
    /// The node pool it belongs to (the agent's `--node-pool` selectors); absent when the
    /// cluster has no pools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub healthy: bool,
    pub gpus: Vec<GpuInfo>,
}

/// Free capacity of one GPU model in a cluster, as the allocator needs it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelCapacity {
    pub model: String,
    pub total_gpus: u32,
    /// Free whole GPUs per node, largest first (nodes with none are left out).
    pub free_whole_per_node: Vec<u32>,
    /// Free milli per partially used device, largest first.
    pub free_milli_per_device: Vec<u32>,
    /// Most whole GPUs one gang can get inside each topology scope (`node`, `nvlink`, `rack`, `any`).
    #[serde(default)]
    pub largest_gang_gpus: BTreeMap<String, u32>,
    /// Room the agent's consolidation could make: each node where movable jobs (running,
    /// preemptible or checkpointing, not being evicted) hold whole GPUs of this model.
    #[serde(default)]
    pub movable_per_node: Vec<MovableRoom>,
    /// Per MIG profile, how many more instances the model's MIG-mode GPUs can take (each GPU
    /// counted on its own, filled with that profile alone). Absent: no GPU in MIG mode.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mig_free: BTreeMap<String, u32>,
}

/// One node's room once its movable jobs moved elsewhere ([`ModelCapacity::movable_per_node`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MovableRoom {
    /// Free whole GPUs on the node now.
    pub free: u32,
    /// Whole GPUs the movable jobs hold there.
    pub movable: u32,
    /// The highest priority among those jobs: only a gang of at least this priority moves them all.
    pub max_priority: i32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CapacitySummary {
    pub models: Vec<ModelCapacity>,
    pub cpu_free_milli: u64,
    pub memory_free_mib: u64,
    pub pending_jobs: u32,
    /// The same per node pool, when the cluster has pools (`models` covers every node).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<PoolCapacity>,
}

/// Free capacity of one node pool: its nodes' models, as [`CapacitySummary::models`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolCapacity {
    pub name: String,
    pub nodes: u32,
    pub models: Vec<ModelCapacity>,
}

/// One device's latest profiler reading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuMetrics {
    pub node: String,
    pub index: u32,
    /// Share of time a kernel was running, 0..=100.
    pub busy_pct: f32,
    pub memory_used_mib: u64,
    #[serde(default)]
    pub power_w: Option<f32>,
    #[serde(default)]
    pub temperature_c: Option<f32>,
}

/// One replica's use of its node's CPU, memory, disk and network over the last sample period
/// (Kubernetes: the kubelet's summary and cAdvisor through the node proxy; sim: synthetic).
/// Rates are per second; a counter the backend could not read is 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplicaUsage {
    pub job: u64,
    pub task: String,
    pub replica: u32,
    /// CPU in use, in thousandths of a core.
    pub cpu_milli: u64,
    /// Working-set memory.
    pub memory_mib: u64,
    #[serde(default)]
    pub disk_read_bps: u64,
    #[serde(default)]
    pub disk_write_bps: u64,
    #[serde(default)]
    pub net_rx_bps: u64,
    #[serde(default)]
    pub net_tx_bps: u64,
}

/// Where one replica runs and in which state, inside a [`JobSnapshot`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaSnapshot {
    pub task: String,
    pub replica: u32,
    pub state: State,
    pub node: Option<String>,
    #[serde(default)]
    pub devices: Vec<DeviceRef>,
}

/// One device (or a share of it) held by a replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRef {
    pub index: u32,
    pub milli: u32,
    /// The first memory slice of the MIG instance the replica holds on this GPU (its profile
    /// is the task's `mig_profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mig_start: Option<u8>,
}

impl DeviceRef {
    /// A whole GPU (1000) or a share of one.
    pub fn share(index: u32, milli: u32) -> DeviceRef {
        DeviceRef { index, milli, mig_start: None }
    }

    /// The devices as text: `index:milli[@mig_start]`, comma-separated (`0:1000,3:250`,
    /// `2:142@4`). What the kube backend writes on a pod and the device plugin reads.
    pub fn format_list(devices: &[DeviceRef]) -> String {
        let one = |d: &DeviceRef| match d.mig_start {
            Some(start) => format!("{}:{}@{start}", d.index, d.milli),
            None => format!("{}:{}", d.index, d.milli),
        };
        devices.iter().map(one).collect::<Vec<_>>().join(",")
    }

    /// Reads [`DeviceRef::format_list`] back. An empty text is no devices; a part that is not
    /// `index:milli[@start]` with milli in 1..=1000 and a start below 8 is an error naming it.
    pub fn parse_list(text: &str) -> Result<Vec<DeviceRef>, String> {
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        text.split(',')
            .map(|part| {
                let part = part.trim();
                let (index, rest) = part.split_once(':').ok_or_else(|| format!("`{part}` is not index:milli"))?;
                let (milli, start) = match rest.split_once('@') {
                    Some((milli, start)) => (milli, Some(start)),
                    None => (rest, None),
                };
                let index = index.trim().parse().map_err(|_| format!("bad device index in `{part}`"))?;
                let milli: u32 = milli.trim().parse().map_err(|_| format!("bad milli in `{part}`"))?;
                if milli == 0 || milli > 1000 {
                    return Err(format!("milli out of 1..=1000 in `{part}`"));
                }
                let mig_start = match start {
                    None => None,
                    Some(s) => Some(
                        s.trim()
                            .parse::<u8>()
                            .ok()
                            .filter(|s| *s < 8)
                            .ok_or_else(|| format!("bad MIG start in `{part}`"))?,
                    ),
                };
                Ok(DeviceRef { index, milli, mig_start })
            })
            .collect()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSnapshot {
    pub job: u64,
    pub epoch: u64,
    pub state: State,
    pub replicas: Vec<ReplicaSnapshot>,
}

/// The levels above the queues in fair share (tenant → project → queue): each tenant's weight,
/// each project's tenant and weight. Where a `SetQueues` carries one, its queues are keyed
/// `<project>/<queue>` (neither name may hold a `/`) and belong to the project their key names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShareHierarchy {
    #[serde(default)]
    pub tenants: BTreeMap<String, f64>,
    #[serde(default)]
    pub projects: BTreeMap<String, ProjectShare>,
}

/// A project's place in [`ShareHierarchy`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProjectShare {
    pub tenant: String,
    pub weight: f64,
}

impl ShareHierarchy {
    /// The key a queue of `project` named `queue` has in a `SetQueues` with a hierarchy.
    pub fn queue_key(project: &str, queue: &str) -> String {
        format!("{project}/{queue}")
    }

    /// The project a queue key names, if it names one.
    pub fn project_of(queue_key: &str) -> Option<&str> {
        queue_key.split_once('/').map(|(project, _)| project)
    }
}

/// Guarantee and limit of one queue, per resource name (`gpu`, `gpu/<model>`, `pool/<pool>`,
/// `cpu_milli`, `memory_mib`; GPU amounts in milli).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueQuota {
    #[serde(default)]
    pub guaranteed: BTreeMap<String, u64>,
    #[serde(default)]
    pub limit: BTreeMap<String, u64>,
    #[serde(default)]
    pub can_borrow: bool,
}
