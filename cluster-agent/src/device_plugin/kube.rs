//! The [`PlacementSource`] on a real node: the pods bound here that the agent annotated.
//!
//! A reflector keeps the pods of this node (`spec.nodeName=<node>`) in memory, so the gRPC
//! handlers answer from the cache. A pod waits for its devices while it is Pending, carries
//! [`ANNOTATION_DEVICES`](super::ANNOTATION_DEVICES), asks for `grus.io/gpu-milli` and has not been marked
//! [`ANNOTATION_ALLOCATED`]. Once the kubelet allocated it, the pod is remembered locally at once
//! and annotated in the background, so an agent restart does not offer it again.
//!
//! The same cache answers the profiler's pod UID → name lookups ([`PodResolver`]).

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Patch, PatchParams};
use kube::runtime::{reflector, watcher, WatchStreamExt};
use kube::{Api, Client};

use super::placement::{Assignment, PlacementSource};
use super::served::Served;
use crate::profiler::{PodRef, PodResolver};

/// Set by the plugin once the kubelet allocated devices to the pod (value: the units).
pub const ANNOTATION_ALLOCATED: &str = "grus.io/allocated";

/// Pods of this node from a watched cache.
pub struct KubePlacement {
    pods: reflector::Store<Pod>,
    api: Api<Pod>,
    /// UIDs allocated by this process, until the annotation shows up in the cache.
    consumed: Mutex<HashSet<String>>,
}

impl KubePlacement {
    /// Starts watching the pods of `node`; the watch lives as long as the runtime.
    pub fn spawn(client: Client, node: &str) -> Arc<KubePlacement> {
        let (pods, writer) = reflector::store();
        let api: Api<Pod> = Api::all(client);
        let config = watcher::Config::default().fields(&format!("spec.nodeName={node}"));
        let stream = reflector(writer, watcher(api.clone(), config)).default_backoff().touched_objects();
        tokio::spawn(async move {
            stream
                .for_each(|event| async move {
                    if let Err(error) = event {
                        tracing::warn!(%error, "watching this node's pods");
                    }
                })
                .await;
        });
        Arc::new(KubePlacement { pods, api, consumed: Mutex::new(HashSet::new()) })
    }

    fn consumed(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        // Inserts are single operations; a poisoned set is still consistent.
        self.consumed.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl PlacementSource for KubePlacement {
    fn pending_assignment(&self, served: &Served, units: u32) -> Option<Assignment> {
        let pods = self.pods.state();
        let consumed = self.consumed();
        pending_in(pods.iter().map(AsRef::as_ref), served, units, &consumed).map(|(_, assignment)| assignment)
    }

    fn mark_consumed(&self, assignment: &Assignment) {
        let pods = self.pods.state();
        let Some(pod) = pods.iter().find(|p| {
            p.metadata.namespace.as_deref() == Some(assignment.namespace.as_str())
                && p.metadata.name.as_deref() == Some(assignment.pod.as_str())
        }) else {
            return;
        };
        if let Some(uid) = &pod.metadata.uid {
            self.consumed().insert(uid.clone());
        }
        let api: Api<Pod> = Api::namespaced(self.api.clone().into_client(), &assignment.namespace);
        let name = assignment.pod.clone();
        let patch = serde_json::json!({
            "metadata": { "annotations": { ANNOTATION_ALLOCATED: assignment.units().to_string() } }
        });
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        runtime.spawn(async move {
            if let Err(error) = api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
                // The local set still keeps the pod from being offered twice by this process.
                tracing::warn!(%error, pod = %name, "marking the pod allocated");
            }
        });
    }
}

impl PodResolver for KubePlacement {
    fn pod_by_uid(&self, uid: &str) -> Option<PodRef> {
        self.pods.state().iter().find(|p| p.metadata.uid.as_deref() == Some(uid)).map(|p| PodRef {
            namespace: p.metadata.namespace.clone().unwrap_or_default(),
            name: p.metadata.name.clone().unwrap_or_default(),
        })
    }
}

/// The oldest pod among `pods` that waits for exactly `units` ids of the resource `served`,
/// with its assignment. Pods with broken annotations are skipped (and logged): the kubelet
/// must not be blocked by one bad pod.
pub fn pending_in<'a>(
    pods: impl IntoIterator<Item = &'a Pod>,
    served: &Served,
    units: u32,
    consumed: &HashSet<String>,
) -> Option<(&'a Pod, Assignment)> {
    let resource = served.resource_name();
    let empty = BTreeMap::new();
    let mut candidates: Vec<(&Pod, Assignment)> = pods
        .into_iter()
        .filter(|pod| pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Pending"))
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
        .filter(|pod| pod.metadata.uid.as_ref().is_none_or(|uid| !consumed.contains(uid)))
        .filter(|pod| {
            let annotations = pod.metadata.annotations.as_ref().unwrap_or(&empty);
            !annotations.contains_key(ANNOTATION_ALLOCATED)
        })
        .filter(|pod| requested_units(pod, &resource) == Some(units))
        .filter_map(|pod| {
            let annotations = pod.metadata.annotations.as_ref().unwrap_or(&empty);
            let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
            let name = pod.metadata.name.as_deref().unwrap_or_default();
            match Assignment::from_annotations(namespace, name, annotations) {
                Ok(Some(assignment)) if assignment.is_served_by(served) => Some((pod, assignment)),
                Ok(Some(_)) => None,
                Ok(None) => None,
                Err(error) => {
                    tracing::warn!(%error, namespace, pod = name, "skipping a pod with a bad placement");
                    None
                }
            }
        })
        .collect();
    candidates.sort_by(|(a, _), (b, _)| {
        let key = |p: &Pod| (p.metadata.creation_timestamp.as_ref().map(|t| t.0), p.metadata.name.clone());
        key(a).cmp(&key(b))
    });
    candidates.into_iter().next()
}

/// The pod's limit of `resource` over its containers (extended resources are requested
/// through limits; requests, when set, must equal them).
fn requested_units(pod: &Pod, resource: &str) -> Option<u32> {
    let spec = pod.spec.as_ref()?;
    let mut total = None;
    for container in &spec.containers {
        let resources = container.resources.as_ref();
        let quantity = resources
            .and_then(|r| r.limits.as_ref())
            .and_then(|l| l.get(resource))
            .or_else(|| resources.and_then(|r| r.requests.as_ref()).and_then(|r| r.get(resource)));
        if let Some(quantity) = quantity {
            let units: u32 = quantity.0.trim().parse().ok()?;
            total = Some(total.unwrap_or(0) + units);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device_plugin::{ANNOTATION_DEVICES, RESOURCE_NAME};

    fn pod(name: &str, created: &str, phase: &str, units: u32, annotations: serde_json::Value) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": name, "namespace": "ml", "uid": format!("uid-{name}"),
                "creationTimestamp": created, "annotations": annotations,
            },
            "spec": { "nodeName": "gpu-node-1", "containers": [
                { "name": "sidecar", "image": "busybox" },
                { "name": "main", "image": "train", "resources": { "limits": { RESOURCE_NAME: units.to_string() } } },
            ]},
            "status": { "phase": phase },
        }))
        .expect("a pod")
    }

    #[test]
    fn the_oldest_pending_annotated_pod_with_the_same_units_wins() {
        let placed = serde_json::json!({ ANNOTATION_DEVICES: "1:250", "grus.io/gpu-memory-mib": "8192" });
        let pods = vec![
            pod("young", "2026-01-01T00:00:09Z", "Pending", 25, placed.clone()),
            pod("running", "2026-01-01T00:00:01Z", "Running", 25, placed.clone()),
            pod(
                "other-size",
                "2026-01-01T00:00:02Z",
                "Pending",
                50,
                serde_json::json!({ ANNOTATION_DEVICES: "0:500" }),
            ),
            pod("not-ours", "2026-01-01T00:00:03Z", "Pending", 25, serde_json::json!({})),
            pod(
                "done",
                "2026-01-01T00:00:04Z",
                "Pending",
                25,
                serde_json::json!({ ANNOTATION_DEVICES: "1:250", ANNOTATION_ALLOCATED: "25" }),
            ),
            pod("broken", "2026-01-01T00:00:05Z", "Pending", 25, serde_json::json!({ ANNOTATION_DEVICES: "one" })),
            pod("old", "2026-01-01T00:00:06Z", "Pending", 25, placed),
        ];
        let (found, assignment) = pending_in(&pods, &Served::Shares, 25, &HashSet::new()).expect("a pending pod");
        assert_eq!(found.metadata.name.as_deref(), Some("old"));
        assert_eq!(assignment.memory_mib, Some(8192));
        assert_eq!(assignment.devices[0].index, 1);

        let consumed: HashSet<String> = ["uid-old".to_string()].into();
        assert_eq!(pending_in(&pods, &Served::Shares, 25, &consumed).unwrap().1.pod, "young");
        assert_eq!(pending_in(&pods, &Served::Shares, 50, &HashSet::new()).unwrap().1.pod, "other-size");
        assert!(pending_in(&pods, &Served::Shares, 7, &HashSet::new()).is_none());
    }
}
