//! Where a share's limits come from: the agent's own placement, not a cluster-wide node lock.
//!
//! The kubelet does not tell a device plugin which pod it admits. The agent already decided,
//! for every pod it creates, which GPUs and how many milli the pod gets, and wrote that on the
//! pod as annotations ([`ANNOTATION_DEVICES`] and friends). A [`PlacementSource`] answers "which
//! pod on this node waits for `units` ids right now": the kube implementation reads the pods
//! bound to this node that carry the annotations and have not been allocated yet (oldest
//! first: the kubelet admits pods one at a time); tests use [`InMemoryPlacement`].

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use grus_protocol::wire::DeviceRef;

use super::ids::units_for_milli;
use super::served::Served;

/// `index:milli[,index:milli]`: the devices (or shares) the agent placed the pod on.
pub const ANNOTATION_DEVICES: &str = "grus.io/devices";
/// The dispatch epoch the placement was made under (fencing token, see DESIGN.md).
pub const ANNOTATION_EPOCH: &str = "grus.io/epoch";
/// The job id.
pub const ANNOTATION_JOB: &str = "grus.io/job";
/// GPU memory per device for the share, in MiB; absent: the milli fraction of the device's memory.
pub const ANNOTATION_GPU_MEMORY_MIB: &str = "grus.io/gpu-memory-mib";
/// The MIG profile of the pod's instance (its devices then name the instance's first slice).
pub const ANNOTATION_MIG_PROFILE: &str = crate::backend::kube::labels::MIG_PROFILE;

/// One pod's devices as the agent placed them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub namespace: String,
    pub pod: String,
    /// Devices in the order the container will see them (`CUDA_DEVICE_*_LIMIT_<i>`).
    pub devices: Vec<DeviceRef>,
    /// GPU memory limit per device, in MiB.
    pub memory_mib: Option<u64>,
    /// The MIG profile of its instances, when it holds MIG instances.
    pub mig_profile: Option<String>,
}

impl Assignment {
    /// Ids this assignment takes from the kubelet (its `grus.io/gpu-milli` request, or one per
    /// MIG instance).
    pub fn units(&self) -> u32 {
        match self.mig_profile {
            Some(_) => self.devices.len() as u32,
            None => self.devices.iter().map(|d| units_for_milli(d.milli)).sum(),
        }
    }

    /// Whether the plugin serving `served` is the one this pod's devices come from.
    pub fn is_served_by(&self, served: &Served) -> bool {
        match served {
            Served::Shares => self.mig_profile.is_none(),
            Served::Mig(profile) => self.mig_profile.as_deref() == Some(profile.as_str()),
        }
    }

    /// Reads an assignment from a pod's annotations; `Ok(None)` when the pod carries none (it was
    /// not placed by the agent).
    pub fn from_annotations(
        namespace: &str,
        pod: &str,
        annotations: &BTreeMap<String, String>,
    ) -> Result<Option<Assignment>, AnnotationError> {
        let Some(devices) = annotations.get(ANNOTATION_DEVICES) else {
            return Ok(None);
        };
        let devices = parse_devices(devices)?;
        let memory_mib = match annotations.get(ANNOTATION_GPU_MEMORY_MIB) {
            Some(raw) => Some(
                raw.trim()
                    .parse()
                    .map_err(|_| AnnotationError::Invalid { key: ANNOTATION_GPU_MEMORY_MIB, value: raw.clone() })?,
            ),
            None => None,
        };
        let mig_profile = annotations.get(ANNOTATION_MIG_PROFILE).cloned();
        Ok(Some(Assignment {
            namespace: namespace.to_string(),
            pod: pod.to_string(),
            devices,
            memory_mib,
            mig_profile,
        }))
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AnnotationError {
    #[error("annotation `{key}` has an invalid value `{value}`")]
    Invalid { key: &'static str, value: String },
}

/// Parses the [`ANNOTATION_DEVICES`] value ([`DeviceRef::parse_list`]; empty is an error here:
/// a placed pod holds a device).
pub fn parse_devices(raw: &str) -> Result<Vec<DeviceRef>, AnnotationError> {
    let invalid = || AnnotationError::Invalid { key: ANNOTATION_DEVICES, value: raw.to_string() };
    match DeviceRef::parse_list(raw) {
        Ok(devices) if !devices.is_empty() => Ok(devices),
        _ => Err(invalid()),
    }
}

/// The agent's view of the pods waiting for devices on this node.
///
/// Called from the gRPC handlers, so implementations answer from memory (a watched pod cache)
/// and never block on the network.
pub trait PlacementSource: Send + Sync + 'static {
    /// The oldest pod on this node that waits for exactly `units` ids of the resource `served`
    /// and has not been allocated yet.
    fn pending_assignment(&self, served: &Served, units: u32) -> Option<Assignment>;

    /// The kubelet allocated devices for this pod: stop offering it.
    fn mark_consumed(&self, assignment: &Assignment);
}

/// A [`PlacementSource`] kept in memory: for tests and the sim.
#[derive(Debug, Default)]
pub struct InMemoryPlacement {
    pending: Mutex<VecDeque<Assignment>>,
}

impl InMemoryPlacement {
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a pod behind the ones already waiting.
    pub fn push(&self, assignment: Assignment) {
        self.lock().push_back(assignment);
    }

    pub fn pending(&self) -> Vec<Assignment> {
        self.lock().iter().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Assignment>> {
        // A panic while holding this lock cannot leave the queue half-updated (every change is
        // one push or remove), so a poisoned lock is still consistent.
        self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl PlacementSource for InMemoryPlacement {
    fn pending_assignment(&self, served: &Served, units: u32) -> Option<Assignment> {
        self.lock().iter().find(|a| a.is_served_by(served) && a.units() == units).cloned()
    }

    fn mark_consumed(&self, assignment: &Assignment) {
        let mut pending = self.lock();
        if let Some(at) = pending.iter().position(|a| a.namespace == assignment.namespace && a.pod == assignment.pod) {
            pending.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn annotations_parse_into_an_assignment() {
        let a = Assignment::from_annotations(
            "ml",
            "nb-0",
            &annotations(&[(ANNOTATION_DEVICES, "1:250, 3:1000"), (ANNOTATION_GPU_MEMORY_MIB, "4096")]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(a.devices, vec![DeviceRef::share(1, 250), DeviceRef::share(3, 1000)]);
        assert_eq!(a.memory_mib, Some(4096));
        assert_eq!(a.units(), 125);
        assert_eq!(DeviceRef::format_list(&a.devices), "1:250,3:1000");
    }

    #[test]
    fn pods_without_annotations_are_not_ours_and_bad_values_are_errors() {
        assert_eq!(Assignment::from_annotations("ml", "p", &annotations(&[])), Ok(None));
        for bad in ["", "1", "1:", "x:100", "1:0", "1:1001", "1:100,", "-1:100"] {
            assert!(
                Assignment::from_annotations("ml", "p", &annotations(&[(ANNOTATION_DEVICES, bad)])).is_err(),
                "{bad}"
            );
        }
        let bad_mem = annotations(&[(ANNOTATION_DEVICES, "0:100"), (ANNOTATION_GPU_MEMORY_MIB, "lots")]);
        assert!(Assignment::from_annotations("ml", "p", &bad_mem).is_err());
    }

    #[test]
    fn in_memory_placement_serves_the_oldest_matching_pod_once() {
        let placement = InMemoryPlacement::new();
        let pod = |name: &str, milli| Assignment {
            namespace: "ml".into(),
            pod: name.into(),
            devices: vec![DeviceRef::share(0, milli)],
            memory_mib: None,
            mig_profile: None,
        };
        placement.push(pod("a", 500));
        placement.push(pod("b", 250));
        placement.push(pod("c", 250));
        let mig = Assignment {
            pod: "m".into(),
            devices: vec![DeviceRef { index: 1, milli: 142, mig_start: Some(0) }],
            mig_profile: Some("1g.10gb".into()),
            ..pod("m", 142)
        };
        placement.push(mig.clone());
        assert_eq!(placement.pending_assignment(&Served::Shares, 25).unwrap().pod, "b");
        placement.mark_consumed(&pod("b", 250));
        assert_eq!(placement.pending_assignment(&Served::Shares, 25).unwrap().pod, "c");
        assert_eq!(placement.pending_assignment(&Served::Shares, 7), None);
        assert_eq!(placement.pending_assignment(&Served::Shares, 1), None, "a MIG pod is not a share's");
        assert_eq!(placement.pending_assignment(&Served::Mig("1g.10gb".into()), 1), Some(mig));
        assert_eq!(placement.pending_assignment(&Served::Mig("3g.40gb".into()), 1), None);
    }
}
