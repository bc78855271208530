//! Watches on Nodes and on the agent's Pods, and the bookkeeping that turns their raw events
//! into [`BackendEvent`]s: one `Replica` event per phase change (repeated updates of a pod in
//! the same phase say nothing), one `NodesChanged` per batch in which a converted node differs.
//!
//! The watch streams run on their own tasks (kube's `watcher`, which relists and backs off on
//! errors) and only forward events over a channel; all state lives here and is touched by the
//! one task that drives the backend.

use std::collections::{BTreeMap, HashMap, HashSet};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use grus_protocol::wire::{NodeInfo, Termination, CHECKPOINT_ANNOTATION};

use super::{labels, node, pod};
use crate::backend::{BackendEvent, ObservedReplica, ReplicaKey, ReplicaPhase};

/// What a watch task forwards. Pod events carry the index of their stream (one per namespace).
pub enum Raw {
    Node(Box<watcher::Event<Node>>),
    Pod(usize, Box<watcher::Event<Pod>>),
}

/// Starts one Node watch and one Pod watch per namespace (`None`: all namespaces).
pub fn spawn(client: &Client, namespaces: &[Option<String>]) -> (mpsc::UnboundedReceiver<Raw>, Vec<JoinHandle<()>>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut tasks = Vec::new();
    let nodes: Api<Node> = Api::all(client.clone());
    tasks.push(forward(nodes, watcher::Config::default(), tx.clone(), |e| Raw::Node(Box::new(e))));
    let selector = format!("{}={}", labels::MANAGED_BY, labels::MANAGER);
    for (stream, ns) in namespaces.iter().enumerate() {
        let pods: Api<Pod> = match ns {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        let config = watcher::Config::default().labels(&selector);
        tasks.push(forward(pods, config, tx.clone(), move |e| Raw::Pod(stream, Box::new(e))));
    }
    (rx, tasks)
}

fn forward<K, F>(api: Api<K>, config: watcher::Config, tx: mpsc::UnboundedSender<Raw>, wrap: F) -> JoinHandle<()>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
    K::DynamicType: Default,
    F: Fn(watcher::Event<K>) -> Raw + Send + 'static,
{
    tokio::spawn(async move {
        let mut stream = watcher(api, config).default_backoff().boxed();
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => {
                    if tx.send(wrap(event)).is_err() {
                        return; // the backend is gone
                    }
                }
                // The watcher relists after its backoff; nothing is lost but time.
                Err(e) => {
                    warn!(kind = K::kind(&K::DynamicType::default()).as_ref(), error = %e, "watch failed, retrying")
                }
            }
        }
    })
}

/// The converted nodes, kept current by the Node watch.
#[derive(Default)]
pub struct NodeStore {
    pub nodes: BTreeMap<String, NodeInfo>,
    /// True once the watch has listed every node: from then on `nodes` is complete.
    pub synced: bool,
    init: Option<BTreeMap<String, NodeInfo>>,
}

impl NodeStore {
    /// Applies one event; true when the nodes as the agent sees them changed.
    pub fn apply(&mut self, event: watcher::Event<Node>) -> bool {
        match event {
            watcher::Event::Init => {
                self.init = Some(BTreeMap::new());
                false
            }
            watcher::Event::InitApply(n) => {
                if let (Some(buf), Some(info)) = (self.init.as_mut(), convert(&n)) {
                    buf.insert(info.name.clone(), info);
                }
                false
            }
            watcher::Event::InitDone => {
                let listed = self.init.take().unwrap_or_default();
                self.synced = true;
                let changed = listed != self.nodes;
                self.nodes = listed;
                changed
            }
            watcher::Event::Apply(n) => match (convert(&n), n.metadata.name) {
                (Some(info), _) => self.nodes.insert(info.name.clone(), info.clone()).as_ref() != Some(&info),
                // An unreadable node is as good as gone: the agent must not place on it.
                (None, Some(name)) => self.nodes.remove(&name).is_some(),
                (None, None) => false,
            },
            watcher::Event::Delete(n) => n.metadata.name.is_some_and(|name| self.nodes.remove(&name).is_some()),
        }
    }

    pub fn replace(&mut self, nodes: &[NodeInfo]) {
        self.nodes = nodes.iter().map(|n| (n.name.clone(), n.clone())).collect();
    }
}

/// A node converted for the agent, or `None` (logged) when it is malformed.
pub fn convert(n: &Node) -> Option<NodeInfo> {
    match node::node_info(n) {
        Ok(info) => Some(info),
        Err(e) => {
            warn!(node = n.metadata.name.as_deref().unwrap_or("?"), error = %e, "skipping malformed node");
            None
        }
    }
}

struct Tracked {
    namespace: String,
    replica: ObservedReplica,
    /// The checkpoint annotation as last seen (`CHECKPOINT_ANNOTATION`).
    checkpoint: Option<String>,
}

/// The last phase reported for each managed pod, by uid (a relaunch under the same name is a
/// new pod with a new uid).
#[derive(Default)]
pub struct PodTracker {
    pods: HashMap<String, Tracked>,
    /// The namespace each pod stream watches, by stream index (`None`: all namespaces).
    scopes: Vec<Option<String>>,
    /// Replicas the agent asked to stop: their deletion is `Stopped`, anyone else's `Failed`.
    pub stopping: HashSet<ReplicaKey>,
    /// Uids seen since each stream's last `Init`, to find pods deleted while it was down.
    init: HashMap<usize, HashSet<String>>,
}

impl PodTracker {
    /// A tracker for pod streams over `scopes` (by stream index; `None`: all namespaces).
    pub fn new(scopes: Vec<Option<String>>) -> PodTracker {
        PodTracker { scopes, ..PodTracker::default() }
    }

    /// Every running replica's pod and node, whose resource use is read.
    pub fn running(&self) -> Vec<super::usage::UsageTarget> {
        self.pods
            .values()
            .filter(|t| t.replica.phase == ReplicaPhase::Running)
            .map(|t| super::usage::UsageTarget {
                key: t.replica.key.clone(),
                node: t.replica.node.clone(),
                namespace: t.namespace.clone(),
                pod: super::labels::pod_name(t.replica.key.job, &t.replica.key.task, t.replica.key.replica),
            })
            .collect()
    }

    /// Remembers a replica the agent already knows about (from a rebuild), so the watch's
    /// first listing does not report it again.
    pub fn seed(&mut self, pod: &Pod, replica: ObservedReplica) {
        let checkpoint = checkpoint_of(pod);
        self.pods.insert(uid(pod), Tracked { namespace: namespace(pod), replica, checkpoint });
    }

    pub fn apply(&mut self, stream: usize, event: watcher::Event<Pod>, out: &mut Vec<BackendEvent>) {
        match event {
            watcher::Event::Init => {
                self.init.insert(stream, HashSet::new());
            }
            watcher::Event::InitApply(p) => {
                if let Some(seen) = self.init.get_mut(&stream) {
                    seen.insert(uid(&p));
                }
                self.update(&p, out);
            }
            watcher::Event::Apply(p) => self.update(&p, out),
            watcher::Event::Delete(p) => {
                let gone = self.pods.remove(&uid(&p)).map(|t| t.replica);
                self.deleted(gone.or_else(|| pod::observe(&p).ok()), &p, out);
            }
            watcher::Event::InitDone => {
                let Some(seen) = self.init.remove(&stream) else { return };
                let scope = self.scopes.get(stream).cloned().flatten();
                let missing: Vec<String> = self
                    .pods
                    .iter()
                    .filter(|(uid, t)| scope.as_ref().is_none_or(|ns| *ns == t.namespace) && !seen.contains(*uid))
                    .map(|(uid, _)| uid.clone())
                    .collect();
                for uid in missing {
                    if let Some(t) = self.pods.remove(&uid) {
                        self.deleted(Some(t.replica), &Pod::default(), out);
                    }
                }
            }
        }
    }

    fn update(&mut self, p: &Pod, out: &mut Vec<BackendEvent>) {
        let id = uid(p);
        let replica = match pod::observe(p) {
            Ok(r) => r,
            Err(e) => {
                warn!(pod = p.metadata.name.as_deref().unwrap_or("?"), error = %e, "skipping malformed pod");
                return;
            }
        };
        let terminating = p.metadata.deletion_timestamp.is_some();
        // The workload acknowledges a checkpoint by setting the annotation (a new value each
        // time); reported before the phase, as it was written before the pod stopped.
        let checkpoint = checkpoint_of(p);
        let seen = self.pods.get(&id).and_then(|t| t.checkpoint.clone());
        if let Some(reference) = checkpoint.clone().filter(|c| Some(c) != seen.as_ref()) {
            out.push(BackendEvent::Checkpointed { key: replica.key.clone(), epoch: replica.epoch, reference });
        }
        if let Some(t) = self.pods.get_mut(&id) {
            t.checkpoint = checkpoint.clone();
        }
        match self.pods.get_mut(&id) {
            Some(t) => {
                // A pod being deleted goes through Failed/Succeeded as its containers are killed;
                // its end is reported once, when it is gone.
                if terminating || (t.replica.phase == replica.phase && t.replica.node == replica.node) {
                    return;
                }
                t.replica = replica.clone();
            }
            None => {
                self.pods.insert(id, Tracked { namespace: namespace(p), replica: replica.clone(), checkpoint });
                if terminating {
                    return;
                }
            }
        }
        debug!(replica = %replica.key, phase = ?replica.phase, "pod phase changed");
        out.push(BackendEvent::Replica(replica));
    }

    fn deleted(&mut self, last: Option<ObservedReplica>, p: &Pod, out: &mut Vec<BackendEvent>) {
        let Some(mut replica) = last else { return };
        let requested = self.stopping.remove(&replica.key);
        if replica.phase.is_terminal() {
            return; // already reported; this is only the clean-up
        }
        replica.phase = if requested { ReplicaPhase::Stopped } else { deletion(p) };
        out.push(BackendEvent::Replica(replica));
    }
}

fn checkpoint_of(p: &Pod) -> Option<String> {
    p.metadata.annotations.as_ref()?.get(CHECKPOINT_ANNOTATION).filter(|v| !v.is_empty()).cloned()
}

fn namespace(p: &Pod) -> String {
    p.metadata.namespace.clone().unwrap_or_default()
}

fn uid(p: &Pod) -> String {
    match &p.metadata.uid {
        Some(uid) => uid.clone(),
        None => {
            format!("{}/{}", p.metadata.namespace.as_deref().unwrap_or(""), p.metadata.name.as_deref().unwrap_or(""))
        }
    }
}

/// Why a pod vanished without the agent asking: the `DisruptionTarget` condition Kubernetes
/// sets on evictions and preemptions, when present.
/// A pod deleted by Kubernetes for a disruption (a drain, a taint, the kube scheduler's
/// preemption) ended `Evicted`; by anyone else, `Lost`.
fn deletion(p: &Pod) -> ReplicaPhase {
    let disruption = p
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "DisruptionTarget" && c.status == "True"));
    match disruption {
        Some(c) => ReplicaPhase::ended(
            Termination::Evicted,
            format!(
                "pod deleted by Kubernetes: {}{}",
                c.reason.as_deref().unwrap_or("DisruptionTarget"),
                c.message.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
            ),
        ),
        None => ReplicaPhase::ended(Termination::Lost, "pod deleted outside grus"),
    }
}
