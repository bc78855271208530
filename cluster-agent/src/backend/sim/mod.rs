//! The `sim` backend: simulated nodes and GPUs that run replicas for a set time.
//!
//! A replica's life is a pure function of its launch record and the clock: it is Placed for
//! its start delay, Running for its duration, then Succeeded (or Failed, if a fault says so).
//! Only launches, stops and faults are recorded, in an append-only journal in the state
//! directory, so the simulated cluster survives an agent restart (kill -9 included: the
//! journal is written before a call returns) and replays to the same phases.
//!
//! Job labels steer a replica: `grus.io/sim-duration-s`, `grus.io/sim-start-delay-s`,
//! `grus.io/sim-fail-after-s` with `grus.io/sim-fail-replicas` (`task/index,...`, default
//! all). A label suffixed with `.<task>` (`grus.io/sim-duration-s.main`) overrides it for
//! that task's replicas. A job that checkpoints writes its checkpoint `grus.io/sim-checkpoint-s`
//! (default 1) after it is asked, or never with `never`; its reference is
//! `sim://checkpoints/job-<id>/epoch-<epoch>`. [`SimControl`] injects faults at run time: fail a replica, lose or restore a node,
//! slow the start of replicas on a node.

mod logs;
pub mod spec;
mod usage;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use grus_protocol::wire::{CheckpointHttp, DeviceRef, NodeInfo, ReplicaUsage, Termination};
use serde::{Deserialize, Serialize};

use crate::backend::{
    gone, Backend, BackendError, BackendEvent, ObservedReplica, ReplicaKey, ReplicaLaunch, ReplicaPhase,
};
use crate::clock::Clock;
use crate::profiler::mig::MigInstanceReading;
use crate::profiler::{GpuProbe, GpuReading, PodGpuUsage, PodRef, ProbeError, Sample};
use grus_protocol::logs::{LogQuery, LogReply};

pub const LABEL_DURATION: &str = "grus.io/sim-duration-s";
pub const LABEL_START_DELAY: &str = "grus.io/sim-start-delay-s";
pub const LABEL_FAIL_AFTER: &str = "grus.io/sim-fail-after-s";
pub const LABEL_FAIL_REPLICAS: &str = "grus.io/sim-fail-replicas";
pub const LABEL_CHECKPOINT: &str = "grus.io/sim-checkpoint-s";
/// How busy the job keeps its GPUs, percent of its share (default 90): `0` is an idle
/// notebook, what a workspace's idle rule culls.
pub const LABEL_BUSY_PCT: &str = "grus.io/sim-busy-pct";
/// How long a simulated checkpoint takes when the job's labels do not say.
const DEFAULT_CHECKPOINT_MS: i64 = 1000;

const JOURNAL: &str = "sim-journal.jsonl";

/// One replica as the simulator remembers it (times in ms since the Unix epoch).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct SimReplica {
    job: u64,
    task: String,
    replica: u32,
    epoch: u64,
    #[serde(default)]
    project: String,
    /// The task's command, which its simulated output quotes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    command: Vec<String>,
    node: String,
    devices: Vec<DeviceRef>,
    /// The MIG profile its devices' instances are of (the task's), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mig_profile: Option<String>,
    /// How busy it keeps its share, percent ([`LABEL_BUSY_PCT`]); `None`: the default 90.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    busy_pct: Option<f32>,
    /// What the task asked for, which its synthetic use follows.
    #[serde(default)]
    cpu_milli: u64,
    #[serde(default)]
    memory_mib: u64,
    launched_at: i64,
    start_delay_ms: i64,
    /// Runs this long once started; `None` runs until stopped.
    duration_ms: Option<i64>,
    /// Fails this long after starting (before `duration_ms` ends).
    fail_after_ms: Option<i64>,
    /// Set when stopped (Cancel, Evict): the replica is gone at this time.
    stopped_at: Option<i64>,
    /// Set by a fault: failed at this time with this reason.
    failed: Option<(i64, String)>,
    /// How long writing a checkpoint takes once asked; `None`: it never acknowledges.
    #[serde(default = "default_checkpoint_ms")]
    checkpoint_ms: Option<i64>,
    /// When a checkpoint was last asked for.
    #[serde(default)]
    checkpoint_asked_at: Option<i64>,
}

fn default_checkpoint_ms() -> Option<i64> {
    Some(DEFAULT_CHECKPOINT_MS)
}

impl SimReplica {
    fn key(&self) -> ReplicaKey {
        ReplicaKey { job: self.job, task: self.task.clone(), replica: self.replica }
    }

    fn phase_at(&self, now: i64) -> ReplicaPhase {
        let start = self.launched_at + self.start_delay_ms;
        // The earliest of: stop, injected failure, scheduled failure, natural end.
        let mut end: Option<(i64, ReplicaPhase)> = None;
        let mut consider = |t: i64, p: ReplicaPhase| {
            if end.as_ref().is_none_or(|(e, _)| t < *e) {
                end = Some((t, p));
            }
        };
        if let Some(t) = self.stopped_at {
            consider(t, ReplicaPhase::Stopped);
        }
        if let Some((t, reason)) = &self.failed {
            consider(*t, ReplicaPhase::ended(Termination::Lost, reason.clone()));
        }
        if let Some(f) = self.fail_after_ms {
            consider(start + f, ReplicaPhase::exited(1, "simulated failure"));
        }
        if let Some(d) = self.duration_ms {
            consider(start + d, ReplicaPhase::Succeeded);
        }
        match end {
            Some((t, p)) if now >= t => p,
            _ if now >= start => ReplicaPhase::Running,
            _ => ReplicaPhase::Placed,
        }
    }

    /// The checkpoint's reference once it has been written (asked, its time passed, and the
    /// replica still alive when it was done).
    fn checkpoint_at(&self, now: i64) -> Option<String> {
        let done = self.checkpoint_asked_at? + self.checkpoint_ms?;
        let alive_then = !self.phase_at(done).is_terminal();
        (now >= done && alive_then).then(|| format!("sim://checkpoints/job-{}/epoch-{}", self.job, self.epoch))
    }

    fn observed(&self, now: i64) -> ObservedReplica {
        ObservedReplica {
            key: self.key(),
            epoch: self.epoch,
            node: self.node.clone(),
            devices: self.devices.clone(),
            phase: self.phase_at(now),
        }
    }
}

/// A journal line: everything that changes the simulation other than the passing of time.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum JournalEntry {
    // Boxed: a replica is several times larger than any other entry.
    Launch { replica: Box<SimReplica> },
    Stop { key: (u64, String, u32), at: i64 },
    Fail { key: (u64, String, u32), at: i64, reason: String },
    NodeHealth { node: String, healthy: bool, at: i64 },
    GpuHealth { node: String, index: u32, healthy: bool },
    SlowStart { node: String, extra_ms: i64 },
    Forget { job: u64 },
    CheckpointAsked { key: (u64, String, u32), at: i64 },
}

struct SimState {
    nodes: Vec<NodeInfo>,
    replicas: BTreeMap<ReplicaKey, SimReplica>,
    /// Phase last reported through `changes()`.
    reported: BTreeMap<ReplicaKey, ReplicaPhase>,
    /// Checkpoints reported through `changes()` (after a restart they are reported again; the
    /// agent's book takes each once).
    checkpoints_reported: BTreeSet<ReplicaKey>,
    slow_start_ms: BTreeMap<String, i64>,
    nodes_changed: bool,
    journal: Option<File>,
    default_duration_ms: Option<i64>,
}

impl SimState {
    fn apply(&mut self, entry: &JournalEntry) {
        match entry {
            JournalEntry::Launch { replica } => {
                self.replicas.insert(replica.key(), (**replica).clone());
            }
            JournalEntry::Stop { key, at } => {
                if let Some(r) = self.replicas.get_mut(&key_of(key)) {
                    r.stopped_at.get_or_insert(*at);
                }
            }
            JournalEntry::Fail { key, at, reason } => {
                if let Some(r) = self.replicas.get_mut(&key_of(key)) {
                    r.failed.get_or_insert((*at, reason.clone()));
                }
            }
            JournalEntry::NodeHealth { node, healthy, at } => {
                if let Some(n) = self.nodes.iter_mut().find(|n| n.name == *node) {
                    n.healthy = *healthy;
                    self.nodes_changed = true;
                }
                if !healthy {
                    for r in self.replicas.values_mut().filter(|r| r.node == *node) {
                        if !r.phase_at(*at).is_terminal() {
                            r.failed = Some((*at, format!("node {node} lost")));
                        }
                    }
                }
            }
            JournalEntry::GpuHealth { node, index, healthy } => {
                if let Some(g) = self
                    .nodes
                    .iter_mut()
                    .find(|n| n.name == *node)
                    .and_then(|n| n.gpus.iter_mut().find(|g| g.index == *index))
                {
                    g.healthy = *healthy;
                    self.nodes_changed = true;
                }
            }
            JournalEntry::CheckpointAsked { key, at } => {
                let key = key_of(key);
                if let Some(r) = self.replicas.get_mut(&key) {
                    r.checkpoint_asked_at = Some(*at);
                    self.checkpoints_reported.remove(&key);
                }
            }
            JournalEntry::SlowStart { node, extra_ms } => {
                self.slow_start_ms.insert(node.clone(), *extra_ms);
            }
            JournalEntry::Forget { job } => {
                // By key range: a scan of every replica per forgotten job was quadratic.
                for key in job_keys(&self.replicas, *job) {
                    self.replicas.remove(&key);
                }
                for key in job_keys(&self.reported, *job) {
                    self.reported.remove(&key);
                    self.checkpoints_reported.remove(&key);
                }
            }
        }
    }

    fn record(&mut self, entry: JournalEntry) -> Result<(), BackendError> {
        if let Some(file) = &mut self.journal {
            let mut line = serde_json::to_vec(&entry).map_err(|e| BackendError::State(e.to_string()))?;
            line.push(b'\n');
            file.write_all(&line).map_err(|e| BackendError::State(format!("write sim journal: {e}")))?;
        }
        self.apply(&entry);
        Ok(())
    }
}

/// The keys of `job`'s replicas in a map keyed by replica.
fn job_keys<V>(map: &BTreeMap<ReplicaKey, V>, job: u64) -> Vec<ReplicaKey> {
    let first = ReplicaKey { job, task: String::new(), replica: 0 };
    map.range(first..).map(|(k, _)| k).take_while(|k| k.job == job).cloned().collect()
}

fn key_of(k: &(u64, String, u32)) -> ReplicaKey {
    ReplicaKey { job: k.0, task: k.1.clone(), replica: k.2 }
}

fn tuple_of(k: &ReplicaKey) -> (u64, String, u32) {
    (k.job, k.task.clone(), k.replica)
}

/// A replica's share of one device, as the sim probe reports it.
struct RunningShare {
    pod: PodRef,
    milli: u32,
    /// The MIG instance it holds: profile and first memory slice.
    mig: Option<(String, u8)>,
    /// Percent of its share it keeps busy.
    busy_pct: f32,
}

/// (node, device index) -> what runs there.
type SharesByDevice = BTreeMap<(String, u32), Vec<RunningShare>>;

/// The simulated cluster. Cheap to clone handles: [`SimBackend::control`].
pub struct SimBackend {
    state: Arc<Mutex<SimState>>,
    clock: Arc<dyn Clock>,
}

/// Fault injection into a running [`SimBackend`].
#[derive(Clone)]
pub struct SimControl {
    state: Arc<Mutex<SimState>>,
    clock: Arc<dyn Clock>,
}

impl SimBackend {
    /// A simulated cluster of `nodes`. With a `state_dir`, the journal there is replayed first
    /// (a restart) and appended to afterwards; compaction drops jobs that were forgotten.
    pub fn new(
        nodes: Vec<NodeInfo>,
        state_dir: Option<&Path>,
        default_duration: Option<Duration>,
        clock: Arc<dyn Clock>,
    ) -> Result<SimBackend, BackendError> {
        let mut state = SimState {
            nodes,
            replicas: BTreeMap::new(),
            reported: BTreeMap::new(),
            checkpoints_reported: BTreeSet::new(),
            slow_start_ms: BTreeMap::new(),
            nodes_changed: false,
            journal: None,
            default_duration_ms: default_duration.map(|d| d.as_millis() as i64),
        };
        if let Some(dir) = state_dir {
            std::fs::create_dir_all(dir).map_err(|e| BackendError::State(format!("create {}: {e}", dir.display())))?;
            let path = dir.join(JOURNAL);
            let entries = read_journal(&path)?;
            for e in &entries {
                state.apply(e);
            }
            // What was running before the restart has been reported by the previous process; the
            // agent rebuilds from `replicas()`, so start reporting from the replayed phases.
            let now = clock.now_ms();
            state.reported = state.replicas.iter().map(|(k, r)| (k.clone(), r.phase_at(now))).collect();
            state.journal = Some(compact_journal(&path, &state)?);
        }
        Ok(SimBackend { state: Arc::new(Mutex::new(state)), clock })
    }

    pub fn control(&self) -> SimControl {
        SimControl { state: self.state.clone(), clock: self.clock.clone() }
    }

    fn lock(&self) -> MutexGuard<'_, SimState> {
        lock(&self.state)
    }
}

fn lock(state: &Mutex<SimState>) -> MutexGuard<'_, SimState> {
    // A panic while holding the lock leaves plain data behind; keep going with it.
    state.lock().unwrap_or_else(|p| p.into_inner())
}

fn read_journal(path: &Path) -> Result<Vec<JournalEntry>, BackendError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(BackendError::State(format!("open {}: {e}", path.display()))),
    };
    let mut entries = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| BackendError::State(format!("read {}: {e}", path.display())))?;
        match serde_json::from_str(&line) {
            Ok(e) => entries.push(e),
            // A torn last line from a kill mid-write: everything before it is intact.
            Err(e) => {
                tracing::warn!(path = %path.display(), line = i + 1, error = %e, "skipping unreadable sim journal line")
            }
        }
    }
    Ok(entries)
}

/// Rewrites the journal with only what is still needed, atomically, and opens it for append.
fn compact_journal(path: &Path, state: &SimState) -> Result<File, BackendError> {
    let io = |e: std::io::Error| BackendError::State(format!("compact {}: {e}", path.display()));
    let tmp: PathBuf = path.with_extension("jsonl.tmp");
    {
        let mut out = std::io::BufWriter::new(File::create(&tmp).map_err(io)?);
        let mut write = |e: &JournalEntry| -> Result<(), BackendError> {
            serde_json::to_writer(&mut out, e).map_err(|e| BackendError::State(e.to_string()))?;
            out.write_all(b"\n").map_err(io)
        };
        for n in state.nodes.iter().filter(|n| !n.healthy) {
            write(&JournalEntry::NodeHealth { node: n.name.clone(), healthy: false, at: 0 })?;
        }
        for n in &state.nodes {
            for g in n.gpus.iter().filter(|g| !g.healthy) {
                write(&JournalEntry::GpuHealth { node: n.name.clone(), index: g.index, healthy: false })?;
            }
        }
        for (node, extra_ms) in &state.slow_start_ms {
            write(&JournalEntry::SlowStart { node: node.clone(), extra_ms: *extra_ms })?;
        }
        for r in state.replicas.values() {
            write(&JournalEntry::Launch { replica: Box::new(r.clone()) })?;
        }
        out.flush().map_err(io)?;
        out.get_ref().sync_all().map_err(io)?;
    }
    std::fs::rename(&tmp, path).map_err(io)?;
    OpenOptions::new().append(true).open(path).map_err(io)
}

/// Seconds from `key.<task>`, else from `key`, as ms.
fn label_secs(labels: &BTreeMap<String, String>, key: &str, task: &str) -> Option<i64> {
    labels
        .get(&format!("{key}.{task}"))
        .or_else(|| labels.get(key))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| (s * 1000.0) as i64)
}

impl Backend for SimBackend {
    /// A made-up address (the `.invalid` domain never resolves): what the portal links to.
    fn endpoint(&self, project: &str, job: u64, served: crate::backend::ServedPort<'_>) -> Option<String> {
        Some(match served {
            crate::backend::ServedPort::Workspace { port } => format!("http://job-{job}.{project}.sim.invalid:{port}/"),
            crate::backend::ServedPort::Service { name, port } => {
                format!("http://{name}.{project}.sim.invalid:{port}/")
            }
        })
    }

    fn name(&self) -> &'static str {
        "sim"
    }

    async fn nodes(&mut self) -> Result<Vec<NodeInfo>, BackendError> {
        Ok(self.lock().nodes.clone())
    }

    async fn launch(&mut self, l: &ReplicaLaunch) -> Result<(), BackendError> {
        let now = self.clock.now_ms();
        let mut st = self.lock();
        if let Some(existing) = st.replicas.get(&l.key) {
            // Same epoch and still alive: a replay of the same launch. An ended replica of the
            // same epoch is launched again (RestartTask).
            if existing.epoch == l.epoch && !existing.phase_at(now).is_terminal() {
                return Ok(());
            }
            if existing.epoch > l.epoch {
                return Err(BackendError::Refused(format!("{} runs with newer epoch {}", l.key, existing.epoch)));
            }
        }
        let node =
            st.nodes.iter().find(|n| n.name == l.node).ok_or_else(|| BackendError::UnknownNode(l.node.clone()))?;
        if !node.healthy {
            return Err(BackendError::Refused(format!("node {} is down", l.node)));
        }
        // As a node's device plugins would: MIG instances exist only on GPUs in MIG mode, and
        // those serve nothing else.
        for d in &l.devices {
            let mig = node.gpus.iter().find(|g| g.index == d.index).is_some_and(|g| g.mig);
            if mig != d.mig_start.is_some() {
                return Err(BackendError::Refused(format!(
                    "GPU {} of node {} is {}in MIG mode",
                    d.index,
                    l.node,
                    if mig { "" } else { "not " }
                )));
            }
        }
        let fails = match l.labels.get(LABEL_FAIL_REPLICAS) {
            None => true,
            Some(list) => list.split(',').map(str::trim).any(|x| x == format!("{}/{}", l.key.task, l.key.replica)),
        };
        let task = l.key.task.as_str();
        let replica = SimReplica {
            job: l.key.job,
            task: l.key.task.clone(),
            replica: l.key.replica,
            epoch: l.epoch,
            project: l.project.clone(),
            command: l.task.command.clone(),
            node: l.node.clone(),
            devices: l.devices.clone(),
            mig_profile: l.task.resources.mig_profile.clone(),
            busy_pct: l
                .labels
                .get(LABEL_BUSY_PCT)
                .and_then(|v| v.trim().parse::<f32>().ok())
                .filter(|p| (0.0..=100.0).contains(p)),
            cpu_milli: l.task.resources.cpu_milli,
            memory_mib: l.task.resources.memory_mib,
            launched_at: now,
            start_delay_ms: label_secs(&l.labels, LABEL_START_DELAY, task).unwrap_or(0)
                + st.slow_start_ms.get(&l.node).copied().unwrap_or(0),
            duration_ms: label_secs(&l.labels, LABEL_DURATION, task).or(st.default_duration_ms),
            fail_after_ms: if fails { label_secs(&l.labels, LABEL_FAIL_AFTER, task) } else { None },
            stopped_at: None,
            failed: None,
            checkpoint_ms: match l.labels.get(LABEL_CHECKPOINT).map(|v| v.trim()) {
                Some("never") => None,
                _ => Some(label_secs(&l.labels, LABEL_CHECKPOINT, task).unwrap_or(DEFAULT_CHECKPOINT_MS)),
            },
            checkpoint_asked_at: None,
        };
        st.reported.remove(&l.key);
        st.checkpoints_reported.remove(&l.key);
        st.record(JournalEntry::Launch { replica: Box::new(replica) })
    }

    async fn stop(&mut self, key: &ReplicaKey, grace: Duration) -> Result<(), BackendError> {
        let at = self.clock.now_ms() + grace.as_millis() as i64;
        let mut st = self.lock();
        match st.replicas.get(key) {
            Some(r) if r.stopped_at.is_none() => st.record(JournalEntry::Stop { key: tuple_of(key), at }),
            _ => Ok(()),
        }
    }

    async fn request_checkpoint(
        &mut self,
        key: &ReplicaKey,
        epoch: u64,
        _http: Option<&CheckpointHttp>,
    ) -> Result<(), BackendError> {
        let at = self.clock.now_ms();
        let mut st = self.lock();
        match st.replicas.get(key) {
            Some(r) if r.epoch == epoch && !r.phase_at(at).is_terminal() => {
                st.record(JournalEntry::CheckpointAsked { key: tuple_of(key), at })
            }
            _ => Ok(()),
        }
    }

    async fn logs(&mut self, key: &ReplicaKey, query: &LogQuery) -> Result<LogReply, BackendError> {
        let now = self.clock.now_ms();
        Ok(self.lock().replicas.get(key).map_or_else(|| gone(key), |r| logs::read(r, now, query)))
    }

    fn usage(&mut self) -> Vec<ReplicaUsage> {
        let now = self.clock.now_ms();
        let st = self.lock();
        st.replicas
            .values()
            .filter(|r| r.phase_at(now) == ReplicaPhase::Running)
            .map(|r| {
                let busy = r.busy_pct.unwrap_or(DEFAULT_BUSY_PCT);
                usage::at(r, busy, r.launched_at + r.start_delay_ms, now)
            })
            .collect()
    }

    async fn forget_job(&mut self, job: u64) -> Result<(), BackendError> {
        let mut st = self.lock();
        if !job_keys(&st.replicas, job).is_empty() {
            st.record(JournalEntry::Forget { job })?;
        }
        Ok(())
    }

    async fn replicas(&mut self) -> Result<Vec<ObservedReplica>, BackendError> {
        let now = self.clock.now_ms();
        Ok(self.lock().replicas.values().map(|r| r.observed(now)).collect())
    }

    async fn changes(&mut self) -> Result<Vec<BackendEvent>, BackendError> {
        let now = self.clock.now_ms();
        let mut st = self.lock();
        let mut events = Vec::new();
        if std::mem::take(&mut st.nodes_changed) {
            events.push(BackendEvent::NodesChanged);
        }
        let st = &mut *st;
        for (key, r) in &st.replicas {
            let phase = r.phase_at(now);
            // A checkpoint written before the replica stopped is reported before its stop.
            if let Some(reference) = r.checkpoint_at(now) {
                if st.checkpoints_reported.insert(key.clone()) {
                    events.push(BackendEvent::Checkpointed { key: key.clone(), epoch: r.epoch, reference });
                }
            }
            if st.reported.get(key) != Some(&phase) {
                st.reported.insert(key.clone(), phase);
                events.push(BackendEvent::Replica(r.observed(now)));
            }
        }
        Ok(events)
    }
}

impl SimControl {
    /// Fails one replica now.
    pub fn fail_replica(&self, key: &ReplicaKey, reason: &str) -> Result<bool, BackendError> {
        let at = self.clock.now_ms();
        let mut st = lock(&self.state);
        match st.replicas.get(key) {
            Some(r) if !r.phase_at(at).is_terminal() => {
                st.record(JournalEntry::Fail { key: tuple_of(key), at, reason: reason.to_string() })?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Takes a node down (its replicas fail) or brings it back.
    pub fn set_node_health(&self, node: &str, healthy: bool) -> Result<bool, BackendError> {
        let at = self.clock.now_ms();
        let mut st = lock(&self.state);
        if !st.nodes.iter().any(|n| n.name == node) {
            return Ok(false);
        }
        st.record(JournalEntry::NodeHealth { node: node.to_string(), healthy, at })?;
        Ok(true)
    }

    /// Delays the start of replicas launched on `node` from now on.
    pub fn set_slow_start(&self, node: &str, extra: Duration) -> Result<(), BackendError> {
        lock(&self.state).record(JournalEntry::SlowStart { node: node.to_string(), extra_ms: extra.as_millis() as i64 })
    }

    /// Marks one GPU healthy or not (the device plugin stops offering an unhealthy one).
    pub fn set_gpu_health(&self, node: &str, index: u32, healthy: bool) -> Result<bool, BackendError> {
        let mut st = lock(&self.state);
        if !st.nodes.iter().any(|n| n.name == node && n.gpus.iter().any(|g| g.index == index)) {
            return Ok(false);
        }
        st.record(JournalEntry::GpuHealth { node: node.to_string(), index, healthy })?;
        Ok(true)
    }

    /// The nodes, and what runs on each device now.
    fn running_shares(&self) -> (Vec<NodeInfo>, SharesByDevice) {
        let now = self.clock.now_ms();
        let st = lock(&self.state);
        let mut shares = SharesByDevice::new();
        for r in st.replicas.values().filter(|r| r.phase_at(now) == ReplicaPhase::Running) {
            for d in &r.devices {
                shares.entry((r.node.clone(), d.index)).or_default().push(RunningShare {
                    pod: PodRef {
                        namespace: r.project.clone(),
                        name: format!("grus-{}-{}-{}", r.job, r.task, r.replica),
                    },
                    milli: d.milli,
                    mig: d.mig_start.zip(r.mig_profile.clone()).map(|(start, profile)| (profile, start)),
                    busy_pct: r.busy_pct.unwrap_or(DEFAULT_BUSY_PCT),
                });
            }
        }
        (st.nodes.clone(), shares)
    }

    /// Names of nodes that are down.
    pub fn down_nodes(&self) -> BTreeSet<String> {
        lock(&self.state).nodes.iter().filter(|n| !n.healthy).map(|n| n.name.clone()).collect()
    }
}

/// How busy a running share keeps its part of the device unless its job says otherwise.
const DEFAULT_BUSY_PCT: f32 = 90.0;

/// Readings that follow what runs: a running share keeps its part of the device ~90 % busy
/// ([`LABEL_BUSY_PCT`] changes that) and holds that part of its memory; power and temperature follow utilization linearly, so
/// dashboards and the utilization-aware scheduler see plausible, deterministic numbers.
impl GpuProbe for SimControl {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn sample(&self) -> Result<Sample, ProbeError> {
        let (nodes, shares) = self.running_shares();
        let mut sample = Sample::default();
        for n in &nodes {
            for g in &n.gpus {
                let here = shares.get(&(n.name.clone(), g.index)).map(Vec::as_slice).unwrap_or_default();
                let milli: u32 = here.iter().map(|s| s.milli).sum::<u32>().min(1000);
                let healthy = g.healthy && n.healthy;
                let busy: f32 = here.iter().map(|s| s.milli.min(1000) as f32 * s.busy_pct / 1000.0).sum();
                let utilization = if healthy { busy.min(100.0) } else { 0.0 };
                let memory_of = |m: u32| g.memory_mib * m as u64 / 1000 * 9 / 10;
                sample.gpus.push(GpuReading {
                    node: n.name.clone(),
                    index: g.index,
                    uuid: g.uuid.clone(),
                    model: g.model.clone(),
                    utilization_pct: utilization,
                    memory_used_mib: memory_of(milli),
                    memory_total_mib: g.memory_mib,
                    power_w: healthy.then_some(60.0 + 3.0 * utilization),
                    temperature_c: healthy.then_some(32.0 + 0.5 * utilization),
                    numa: Some(g.numa as u32),
                    healthy,
                    // Dynamic MIG: the instances are those running replicas hold.
                    mig: g.mig.then(|| {
                        let mut instances: Vec<MigInstanceReading> = here
                            .iter()
                            .filter_map(|s| s.mig.clone())
                            .map(|(profile, start)| MigInstanceReading {
                                uuid: Some(format!("MIG-sim-{}-{}-{start}", n.name, g.index)),
                                profile,
                                start,
                            })
                            .collect();
                        instances.sort_by_key(|m| m.start);
                        instances
                    }),
                });
                sample.pods.extend(here.iter().map(|s| PodGpuUsage {
                    node: n.name.clone(),
                    gpu_index: g.index,
                    pod: s.pod.clone(),
                    memory_used_mib: memory_of(s.milli),
                }));
            }
        }
        Ok(sample)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use grus_protocol::logs::LogSource;
    use grus_protocol::wire::{ResourcesSpec, TaskSpec};

    fn launch(job: u64, replica: u32, node: &str, labels: &[(&str, &str)]) -> ReplicaLaunch {
        ReplicaLaunch {
            key: ReplicaKey { job, task: "main".into(), replica },
            epoch: 1,
            job_name: format!("j{job}"),
            project: "p".into(),
            queue: "q".into(),
            task: TaskSpec {
                name: "main".into(),
                replicas: 1,
                image: "img".into(),
                command: vec![],
                env: BTreeMap::new(),
                resources: ResourcesSpec { gpus: 1, ..ResourcesSpec::default() },
                topology: None,
            },
            node: node.into(),
            devices: vec![DeviceRef::share(0, 1000)],
            gang: None,
            labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            service: None,
            workspace: None,
        }
    }

    fn phases(events: &[BackendEvent]) -> Vec<(u32, ReplicaPhase)> {
        events
            .iter()
            .filter_map(|e| match e {
                BackendEvent::Replica(r) => Some((r.key.replica, r.phase.clone())),
                _ => None,
            })
            .collect()
    }

    fn sim(dir: Option<&Path>, clock: &ManualClock) -> SimBackend {
        SimBackend::new(spec::parse_compact("2x2xT4").unwrap(), dir, None, Arc::new(clock.clone())).unwrap()
    }

    #[tokio::test]
    async fn a_replica_starts_after_its_delay_and_ends_after_its_duration() {
        let clock = ManualClock::at(1_000);
        let mut sim = sim(None, &clock);
        sim.launch(&launch(1, 0, "t4-000", &[(LABEL_DURATION, "10"), (LABEL_START_DELAY, "2")])).await.unwrap();
        assert_eq!(phases(&sim.changes().await.unwrap()), [(0, ReplicaPhase::Placed)]);
        assert!(sim.changes().await.unwrap().is_empty(), "no change, no event");
        clock.advance_ms(2_000);
        assert_eq!(phases(&sim.changes().await.unwrap()), [(0, ReplicaPhase::Running)]);
        clock.advance_ms(10_000);
        assert_eq!(phases(&sim.changes().await.unwrap()), [(0, ReplicaPhase::Succeeded)]);
    }

    fn texts(reply: &LogReply) -> Vec<String> {
        reply.lines.iter().map(|l| format!("{} {}", l.at_ms, l.text)).collect()
    }

    fn query(tail: Option<u32>, since_ms: Option<i64>) -> LogQuery {
        LogQuery { task: None, replica: None, tail, since_ms, max_bytes: 1 << 16 }
    }

    #[tokio::test]
    async fn output_is_a_function_of_the_launch_and_the_clock() {
        let clock = ManualClock::at(1_000);
        let mut sim = sim(None, &clock);
        let mut l = launch(4, 0, "t4-000", &[(LABEL_DURATION, "12"), (LABEL_START_DELAY, "1")]);
        l.task.command = vec!["python".into(), "train.py".into()];
        sim.launch(&l).await.unwrap();
        let key = l.key.clone();
        clock.advance_ms(7_000);
        let running = sim.logs(&key, &query(None, None)).await.unwrap();
        assert_eq!(
            texts(&running),
            [
                "1000 [sim] replica 0 of task main placed on node t4-000",
                "2000 [sim] started: python train.py",
                "7000 step 1: python train.py loss=2.3850"
            ]
        );
        assert!(!running.ended && running.source == LogSource::Live);
        clock.advance_ms(60_000);
        let ended = sim.logs(&key, &query(None, None)).await.unwrap();
        assert!(ended.ended);
        assert_eq!(ended.lines.last().unwrap().text, "[sim] exited with code 0");
        assert_eq!(ended.lines.last().unwrap().at_ms, 14_000, "at its end, not when read");
        // A follower's cursor and a tail select from the same lines.
        assert_eq!(texts(&sim.logs(&key, &query(None, Some(7_000))).await.unwrap()), texts(&ended)[3..]);
        let tail = sim.logs(&key, &query(Some(2), None)).await.unwrap();
        assert_eq!(texts(&tail), texts(&ended)[ended.lines.len() - 2..]);
        assert!(tail.truncated);
        // Unknown replicas are gone; a failure says why on stderr with exit code 1.
        let other = ReplicaKey { job: 9, task: "main".into(), replica: 0 };
        assert_eq!(sim.logs(&other, &query(None, None)).await.unwrap().source, LogSource::Gone);
        let failing = launch(5, 0, "t4-000", &[(LABEL_FAIL_AFTER, "1")]);
        sim.launch(&failing).await.unwrap();
        clock.advance_ms(2_000);
        let failed = sim.logs(&failing.key, &query(Some(2), None)).await.unwrap();
        let streams: Vec<_> = failed.lines.iter().map(|l| (l.stream, l.text.as_str())).collect();
        assert_eq!(
            streams,
            [
                (grus_protocol::logs::LogStream::Stderr, "error: simulated failure"),
                (grus_protocol::logs::LogStream::Stdout, "[sim] exited with code 1")
            ]
        );
    }

    #[tokio::test]
    async fn a_task_suffixed_label_overrides_the_job_label_for_that_task() {
        let clock = ManualClock::at(0);
        let mut sim = sim(None, &clock);
        let labels = [(LABEL_DURATION, "60"), ("grus.io/sim-duration-s.main", "1")];
        sim.launch(&launch(1, 0, "t4-000", &labels)).await.unwrap();
        let mut other = launch(1, 0, "t4-000", &labels);
        other.key.task = "sidecar".into();
        sim.launch(&other).await.unwrap();
        clock.advance_ms(1_000);
        let phases: BTreeMap<String, ReplicaPhase> =
            sim.replicas().await.unwrap().into_iter().map(|r| (r.key.task, r.phase)).collect();
        assert_eq!(phases["main"], ReplicaPhase::Succeeded);
        assert_eq!(phases["sidecar"], ReplicaPhase::Running);
    }

    #[tokio::test]
    async fn launch_is_idempotent_and_refuses_stale_epochs() {
        let clock = ManualClock::at(0);
        let mut sim = sim(None, &clock);
        let l = launch(1, 0, "t4-000", &[]);
        sim.launch(&l).await.unwrap();
        clock.advance_ms(5);
        sim.launch(&l).await.unwrap();
        assert_eq!(sim.replicas().await.unwrap().len(), 1);
        let mut newer = l.clone();
        newer.epoch = 2;
        sim.launch(&newer).await.unwrap();
        assert!(matches!(sim.launch(&l).await, Err(BackendError::Refused(_))));
        assert!(matches!(sim.launch(&launch(2, 0, "nope", &[])).await, Err(BackendError::UnknownNode(_))));
    }

    #[tokio::test]
    async fn faults_fail_replicas_and_nodes() {
        let clock = ManualClock::at(0);
        let mut sim = sim(None, &clock);
        sim.launch(&launch(1, 0, "t4-000", &[])).await.unwrap();
        sim.launch(&launch(1, 1, "t4-001", &[(LABEL_FAIL_AFTER, "1"), (LABEL_FAIL_REPLICAS, "main/1")])).await.unwrap();
        sim.launch(&launch(2, 0, "t4-001", &[(LABEL_FAIL_AFTER, "1"), (LABEL_FAIL_REPLICAS, "main/1")])).await.unwrap();
        sim.changes().await.unwrap();
        clock.advance_ms(1_000);
        let ev = sim.changes().await.unwrap();
        assert!(ev.iter().any(|e| matches!(e, BackendEvent::Replica(r) if r.key.job == 1 && r.key.replica == 1 && matches!(r.phase, ReplicaPhase::Failed { .. }))));
        assert!(
            !ev.iter().any(|e| matches!(e, BackendEvent::Replica(r) if r.key.job == 2)),
            "main/0 of job 2 is not listed"
        );
        let reps = sim.replicas().await.unwrap();
        assert!(reps.iter().any(|r| r.key.job == 2 && r.phase == ReplicaPhase::Running));
        let control = sim.control();
        assert!(control.set_node_health("t4-000", false).unwrap());
        let ev = sim.changes().await.unwrap();
        assert!(ev.contains(&BackendEvent::NodesChanged));
        assert!(ev.iter().any(|e| matches!(e, BackendEvent::Replica(r) if r.key.job == 1 && r.key.replica == 0 && matches!(&r.phase, ReplicaPhase::Failed { reason, exit } if reason.contains("lost") && exit.termination == Termination::Lost))));
        assert!(matches!(sim.launch(&launch(3, 0, "t4-000", &[])).await, Err(BackendError::Refused(_))));
    }

    #[tokio::test]
    async fn state_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::at(0);
        {
            let mut sim = sim(Some(dir.path()), &clock);
            sim.launch(&launch(1, 0, "t4-000", &[(LABEL_DURATION, "10")])).await.unwrap();
            sim.launch(&launch(2, 0, "t4-001", &[])).await.unwrap();
            sim.stop(&ReplicaKey { job: 2, task: "main".into(), replica: 0 }, Duration::ZERO).await.unwrap();
            sim.control().set_node_health("t4-001", false).unwrap();
            // Dropped without any shutdown step, like kill -9.
        }
        clock.advance_ms(3_000);
        let mut sim = sim(Some(dir.path()), &clock);
        let mut reps = sim.replicas().await.unwrap();
        reps.sort_by_key(|r| r.key.job);
        assert_eq!(reps.len(), 2);
        assert_eq!(reps[0].phase, ReplicaPhase::Running);
        assert_eq!(reps[1].phase, ReplicaPhase::Stopped);
        assert!(sim.control().down_nodes().contains("t4-001"));
        clock.advance_ms(10_000);
        assert_eq!(phases(&sim.changes().await.unwrap()), [(0, ReplicaPhase::Succeeded)]);
    }

    #[tokio::test]
    async fn running_replicas_report_synthetic_resource_use_that_follows_their_request_and_load() {
        let clock = ManualClock::at(0);
        let mut sim = sim(None, &clock);
        let mut busy = launch(1, 0, "t4-000", &[(LABEL_DURATION, "3600")]);
        busy.task.resources.cpu_milli = 8_000;
        busy.task.resources.memory_mib = 32_768;
        sim.launch(&busy).await.unwrap();
        sim.launch(&launch(2, 0, "t4-001", &[(LABEL_BUSY_PCT, "0"), (LABEL_START_DELAY, "5")])).await.unwrap();
        let first = sim.usage();
        assert_eq!(first.len(), 1, "a replica still starting uses nothing yet");
        let u = &first[0];
        assert_eq!((u.job, u.task.as_str(), u.replica), (1, "main", 0));
        assert!((6_000..=8_000).contains(&u.cpu_milli), "about 90 % of 8 cores: {}", u.cpu_milli);
        assert!(u.memory_mib < 32_768 / 2, "the working set starts small: {}", u.memory_mib);
        clock.advance_ms(20 * 60 * 1000);
        let later = sim.usage();
        let busy_now = later.iter().find(|u| u.job == 1).unwrap();
        assert_eq!(busy_now.memory_mib, 32_768 * 8 / 10, "grown to 80 % after ten minutes");
        assert!(busy_now.disk_read_bps + busy_now.net_rx_bps > 0);
        let idle = later.iter().find(|u| u.job == 2).unwrap();
        assert_eq!((idle.disk_read_bps, idle.net_rx_bps), (0, 0), "an idle job moves no data");
        assert!(idle.cpu_milli < 100, "an idle job barely uses its core: {}", idle.cpu_milli);
        // The same clock gives the same readings (a restart replays them).
        assert_eq!(sim.usage(), later);
        sim.stop(&ReplicaKey { job: 1, task: "main".into(), replica: 0 }, Duration::ZERO).await.unwrap();
        assert!(sim.usage().iter().all(|u| u.job != 1), "a stopped replica reports nothing");
    }

    #[tokio::test]
    async fn metrics_follow_what_runs() {
        let clock = ManualClock::at(0);
        let mut sim = sim(None, &clock);
        let mut l = launch(1, 0, "t4-000", &[]);
        l.devices = vec![DeviceRef::share(1, 500)];
        sim.launch(&l).await.unwrap();
        let sample = sim.control().sample().unwrap();
        let gpu = |node: &str, i: u32| sample.gpus.iter().find(|g| g.node == node && g.index == i).unwrap();
        assert_eq!(gpu("t4-000", 1).utilization_pct, 45.0, "a half share keeps its half ~90 % busy");
        assert_eq!(gpu("t4-000", 1).memory_used_mib, 15 * 1024 / 2 * 9 / 10);
        assert_eq!(gpu("t4-000", 0).utilization_pct, 0.0);
        assert_eq!(sample.pods.len(), 1);
        assert_eq!(sample.pods[0].pod, PodRef { namespace: "p".into(), name: "grus-1-main-0".into() });
        sim.control().set_gpu_health("t4-000", 0, false).unwrap();
        assert!(
            !sim.control().sample().unwrap().gpus.iter().find(|g| g.node == "t4-000" && g.index == 0).unwrap().healthy
        );
        clock.advance_ms(1);
        assert!(sim.changes().await.unwrap().contains(&BackendEvent::NodesChanged));
    }
}
