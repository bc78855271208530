//! The backend boundary: what the agent asks of the thing that actually runs replicas.
//!
//! Two implementations: `sim` (simulated nodes and GPUs, for development and end-to-end
//! tests) and `kube` (Pods bound to nodes through `pods/binding` on a real cluster). The agent
//! decides placement; a backend only launches, stops and observes. Every call is idempotent,
//! because after a crash the agent replays commands it may already have applied.

use std::collections::BTreeMap;
use std::time::Duration;

use grus_protocol::logs::{LogQuery, LogReply, LogSource};
use grus_protocol::wire::{CheckpointHttp, DeviceRef, NodeInfo, ReplicaExit, ReplicaUsage, TaskSpec, Termination};

pub mod kube;
pub mod sim;

/// Identity of one replica.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplicaKey {
    pub job: u64,
    pub task: String,
    pub replica: u32,
}

impl std::fmt::Display for ReplicaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "job {} task {} replica {}", self.job, self.task, self.replica)
    }
}

/// The gang a replica belongs to (a PodGroup on Kubernetes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GangInfo {
    pub min_members: u32,
}

/// Everything a backend needs to run one placed replica.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicaLaunch {
    pub key: ReplicaKey,
    pub epoch: u64,
    pub job_name: String,
    pub project: String,
    pub queue: String,
    pub task: TaskSpec,
    /// Node chosen by the agent's scheduler, and the devices (or shares) on it.
    pub node: String,
    pub devices: Vec<DeviceRef>,
    pub gang: Option<GangInfo>,
    /// The job's labels (the sim backend reads `grus.io/sim-*` from them).
    pub labels: BTreeMap<String, String>,
    /// The inference service the replica serves, if it is one's.
    pub service: Option<grus_protocol::wire::ServiceReplicaSpec>,
    /// The workspace it is, if it is one.
    pub workspace: Option<grus_protocol::wire::WorkspaceSpec>,
}

/// The reply for a replica the backend has nothing of.
pub fn gone(key: &ReplicaKey) -> LogReply {
    LogReply {
        task: key.task.clone(),
        replica: key.replica,
        source: LogSource::Gone,
        lines: Vec::new(),
        truncated: false,
        ended: true,
        error: None,
    }
}

/// A replica's phase as the backend observes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplicaPhase {
    /// Bound to its node, not yet running (image pull, slow start).
    Placed,
    Running,
    Succeeded,
    Failed {
        reason: String,
        exit: ReplicaExit,
    },
    /// Stopped on request (Cancel, Evict).
    Stopped,
}

impl ReplicaPhase {
    /// Ended with a non-zero `code` of its own: `Error`.
    pub fn exited(code: i32, reason: impl Into<String>) -> ReplicaPhase {
        ReplicaPhase::Failed { reason: reason.into(), exit: ReplicaExit::new(Some(code), Termination::Error) }
    }

    /// Ended for `termination`, without an exit code of its own (lost, evicted, never started).
    pub fn ended(termination: Termination, reason: impl Into<String>) -> ReplicaPhase {
        ReplicaPhase::Failed { reason: reason.into(), exit: ReplicaExit::new(None, termination) }
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self, ReplicaPhase::Succeeded | ReplicaPhase::Failed { .. } | ReplicaPhase::Stopped)
    }
}

/// What the backend knows of one replica: enough to rebuild the agent's state after a restart.
#[derive(Clone, Debug, PartialEq)]
pub struct ObservedReplica {
    pub key: ReplicaKey,
    pub epoch: u64,
    pub node: String,
    pub devices: Vec<DeviceRef>,
    pub phase: ReplicaPhase,
}

#[derive(Clone, Debug, PartialEq)]
pub enum BackendEvent {
    /// A replica changed phase.
    Replica(ObservedReplica),
    /// Nodes or devices changed (added, lost, health): re-read [`Backend::nodes`].
    NodesChanged,
    /// A replica acknowledged the checkpoint it was asked for: its reference.
    Checkpointed { key: ReplicaKey, epoch: u64, reference: String },
}

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("node `{0}` is not known to the backend")]
    UnknownNode(String),
    #[error("the backend refused the request: {0}")]
    Refused(String),
    #[error("the backend is unreachable: {0}")]
    Unavailable(String),
    #[error("backend state on disk: {0}")]
    State(String),
}

/// What runs replicas. Implementations are driven from one task; they need not be `Sync`.
#[allow(async_fn_in_trait)]
pub trait Backend {
    fn name(&self) -> &'static str;

    /// Every node with its GPUs, as the backend sees them now.
    async fn nodes(&mut self) -> Result<Vec<NodeInfo>, BackendError>;

    /// Starts a replica on its node. Launching a replica that already exists with the same
    /// epoch succeeds and changes nothing.
    async fn launch(&mut self, launch: &ReplicaLaunch) -> Result<(), BackendError>;

    /// Stops a replica after at most `grace`. Stopping one that is gone succeeds.
    async fn stop(&mut self, key: &ReplicaKey, grace: Duration) -> Result<(), BackendError>;

    /// Asks a replica to write a checkpoint (`JobSpec::checkpoint`); its acknowledgement
    /// comes back as [`BackendEvent::Checkpointed`]. Asking again asks again.
    async fn request_checkpoint(
        &mut self,
        key: &ReplicaKey,
        epoch: u64,
        http: Option<&CheckpointHttp>,
    ) -> Result<(), BackendError>;

    /// Removes what the backend keeps per job once all its replicas have ended (PodGroup).
    async fn forget_job(&mut self, job: u64) -> Result<(), BackendError>;

    /// Every replica the backend runs or remembers, for a rebuild after a restart.
    async fn replicas(&mut self) -> Result<Vec<ObservedReplica>, BackendError>;

    /// Changes observed since the last call.
    async fn changes(&mut self) -> Result<Vec<BackendEvent>, BackendError>;

    /// A replica's output as `query` selects it (oldest first, at most `query.max_bytes` of
    /// text), with `source: Gone` when the backend has nothing of it.
    async fn logs(&mut self, key: &ReplicaKey, query: &LogQuery) -> Result<LogReply, BackendError>;

    /// Each running replica's latest CPU, memory, disk and network use, as far as the backend
    /// has read it; never waits on the cluster (the kube backend reads in the background).
    fn usage(&mut self) -> Vec<ReplicaUsage>;

    /// Where a job that serves a port is reached once it runs (reported with its `running`);
    /// `None`: this backend gives it no address.
    fn endpoint(&self, project: &str, job: u64, served: ServedPort<'_>) -> Option<String>;
}

/// The port a job serves, and what serves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServedPort<'a> {
    /// An interactive workspace: reached on its own.
    Workspace { port: u16 },
    /// A replica of an inference service: reached through the service's address.
    Service { name: &'a str, port: u16 },
}

impl<'a> ServedPort<'a> {
    /// What the job serves, from its spec; `None`: a batch job.
    pub fn of(spec: &'a grus_protocol::wire::JobSpec) -> Option<ServedPort<'a>> {
        match (&spec.workspace, &spec.service) {
            (Some(w), _) => Some(ServedPort::Workspace { port: w.port }),
            (None, Some(s)) => Some(ServedPort::Service { name: &s.name, port: s.port }),
            (None, None) => None,
        }
    }
}
