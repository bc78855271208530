//! The NVML probe: real readings from the NVIDIA driver through nvml-wrapper.
//!
//! nvml-wrapper loads `libnvidia-ml.so` at run time, so the agent builds and starts on machines
//! without a driver; [`nvml_or_noop`] then falls back to [`NoopProbe`] with one warning.
//!
//! Health follows NVIDIA's device plugin: a device is unhealthy when the driver stops answering
//! for it, or, for good, after a critical XID error other than the ones a faulty application
//! causes on its own (13, 31, 43, 45, 68, 109), which say nothing about the hardware.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Once};

use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enum_wrappers::device::TemperatureSensor;
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, EventSet, Nvml};

use super::cgroup::pod_uid_of_pid;
use super::mig::MigReader;
use super::{merge_pod_usage, GpuProbe, GpuReading, NoopProbe, PodGpuUsage, PodRef, PodResolver, ProbeError, Sample};

const MIB: u64 = 1024 * 1024;

/// XIDs raised by application faults (NVIDIA device plugin's list): not a reason to fence a GPU.
const APPLICATION_XIDS: [u64; 6] = [13, 31, 43, 45, 68, 109];

/// What stays true of a device between samples, remembered so that a device the driver lost
/// is still reported (as unhealthy, under the same uuid, hence the same plugin ids).
#[derive(Clone, Debug)]
struct Identity {
    uuid: Option<String>,
    model: String,
    memory_total_mib: u64,
    numa: Option<u32>,
}

/// Mutable state between samples.
#[derive(Default)]
struct ProbeState {
    known: BTreeMap<u32, Identity>,
    /// Critical-XID event sets, one per device (a failed registration consumes its set).
    events: Vec<(u32, EventSet<'static>)>,
    /// Devices fenced after a critical XID, until the agent restarts.
    xid_fenced: BTreeSet<u32>,
}

pub struct NvmlProbe {
    /// Leaked on purpose: event sets borrow the library handle, which lives as long as the
    /// process anyway (one probe per agent).
    nvml: &'static Nvml,
    node: String,
    proc_root: PathBuf,
    pods: Option<Arc<dyn PodResolver>>,
    state: Mutex<ProbeState>,
    /// The driver's MIG calls; `None` on a driver without them.
    mig: Option<MigReader>,
}

/// NVML when the driver is there, else a probe that sees nothing (one warning, no panic).
pub fn nvml_or_noop(node: &str, pods: Option<Arc<dyn PodResolver>>) -> Arc<dyn super::GpuProbe> {
    match NvmlProbe::new(node, pods) {
        Ok(probe) => Arc::new(probe),
        Err(error) => {
            static WARN: Once = Once::new();
            WARN.call_once(|| tracing::warn!(%error, "NVML is not available; GPU metrics are off on this node"));
            Arc::new(NoopProbe)
        }
    }
}

impl NvmlProbe {
    pub fn new(node: &str, pods: Option<Arc<dyn PodResolver>>) -> Result<Self, ProbeError> {
        let nvml: &'static Nvml = Box::leak(Box::new(Nvml::init()?));
        let mut state = ProbeState::default();
        for index in 0..nvml.device_count()? {
            let Ok(device) = nvml.device_by_index(index) else { continue };
            match nvml.create_event_set().map(|set| device.register_events(EventTypes::CRITICAL_XID_ERROR, set)) {
                Ok(Ok(set)) => state.events.push((index, set)),
                Ok(Err(error)) => tracing::info!(index, error = %error.error, "no XID events for this GPU"),
                Err(error) => tracing::info!(index, %error, "no XID events for this GPU"),
            }
        }
        let mig = match MigReader::open("libnvidia-ml.so.1") {
            Ok(reader) => Some(reader),
            Err(why) => {
                tracing::info!(%why, "MIG layouts are not read on this node");
                None
            }
        };
        Ok(NvmlProbe {
            nvml,
            node: node.to_string(),
            proc_root: PathBuf::from("/proc"),
            pods,
            state: Mutex::new(state),
            mig,
        })
    }

    fn state(&self) -> MutexGuard<'_, ProbeState> {
        // Only sample() changes the state, one field at a time; a poisoned lock is consistent.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Drains pending XID events without waiting, fencing devices on hardware XIDs.
    fn drain_xids(state: &mut ProbeState) {
        let ProbeState { events, xid_fenced, .. } = state;
        for (index, set) in events.iter() {
            loop {
                match set.wait(0) {
                    Ok(event) => {
                        let xid = match event.event_data {
                            Some(XidError::Value(xid)) => Some(xid),
                            _ => None,
                        };
                        if xid.is_some_and(|xid| APPLICATION_XIDS.contains(&xid)) {
                            tracing::debug!(index, ?xid, "application XID");
                        } else if xid_fenced.insert(*index) {
                            tracing::error!(index, ?xid, "critical XID: GPU marked unhealthy until the agent restarts");
                        }
                    }
                    Err(NvmlError::Timeout) => break,
                    Err(error) => {
                        tracing::debug!(index, %error, "reading XID events");
                        break;
                    }
                }
            }
        }
    }

    fn pod_of(&self, pid: u32) -> Option<PodRef> {
        let uid = pod_uid_of_pid(&self.proc_root, pid)?;
        let resolved = self.pods.as_ref().and_then(|pods| pods.pod_by_uid(&uid));
        // Unresolved pods are still told apart, by UID.
        Some(resolved.unwrap_or(PodRef { namespace: String::new(), name: uid }))
    }
}

impl GpuProbe for NvmlProbe {
    fn name(&self) -> &'static str {
        "nvml"
    }

    fn sample(&self) -> Result<Sample, ProbeError> {
        let count = self.nvml.device_count()?;
        let mut state = self.state();
        Self::drain_xids(&mut state);
        let ProbeState { known, xid_fenced, .. } = &mut *state;
        let mut sample = Sample::default();
        let mut usages = Vec::new();
        for index in 0..count {
            let device = match self.nvml.device_by_index(index) {
                Ok(device) => device,
                Err(error) => {
                    if let Some(id) = known.get(&index) {
                        tracing::debug!(index, %error, "GPU lost");
                        sample.gpus.push(self.lost(index, id));
                    }
                    continue;
                }
            };
            let memory = device.memory_info();
            let utilization = device.utilization_rates();
            let identity = match known.get(&index) {
                Some(id) => id.clone(),
                None => {
                    let id = Identity {
                        uuid: device.uuid().ok(),
                        model: device.name().unwrap_or_else(|_| "unknown".to_string()),
                        memory_total_mib: memory.as_ref().map(|m| m.total / MIB).unwrap_or(0),
                        numa: numa_node(&device),
                    };
                    known.insert(index, id.clone());
                    id
                }
            };
            // Only errors that mean the device is gone count: MIG and some boards answer
            // NotSupported for utilization and are perfectly usable.
            let failed =
                [memory.as_ref().err(), utilization.as_ref().err()].into_iter().flatten().any(is_device_failure);
            let healthy = !failed && !xid_fenced.contains(&index);
            sample.gpus.push(GpuReading {
                node: self.node.clone(),
                index,
                uuid: identity.uuid,
                model: identity.model,
                utilization_pct: utilization.map(|u| u.gpu as f32).unwrap_or(0.0),
                memory_used_mib: memory.as_ref().map(|m| m.used / MIB).unwrap_or(0),
                memory_total_mib: identity.memory_total_mib,
                power_w: device.power_usage().ok().map(|mw| mw as f32 / 1000.0),
                temperature_c: device.temperature(TemperatureSensor::Gpu).ok().map(|c| c as f32),
                numa: identity.numa,
                healthy,
                mig: self.mig.as_ref().and_then(|r| r.instances(index).ok().flatten()),
            });
            for process in device.running_compute_processes().unwrap_or_default() {
                let UsedGpuMemory::Used(bytes) = process.used_gpu_memory else { continue };
                if let Some(pod) = self.pod_of(process.pid) {
                    usages.push(PodGpuUsage {
                        node: self.node.clone(),
                        gpu_index: index,
                        pod,
                        memory_used_mib: bytes / MIB,
                    });
                }
            }
        }
        sample.pods = merge_pod_usage(usages);
        Ok(sample)
    }
}

impl NvmlProbe {
    fn lost(&self, index: u32, id: &Identity) -> GpuReading {
        GpuReading {
            node: self.node.clone(),
            index,
            uuid: id.uuid.clone(),
            model: id.model.clone(),
            utilization_pct: 0.0,
            memory_used_mib: 0,
            memory_total_mib: id.memory_total_mib,
            power_w: None,
            temperature_c: None,
            numa: id.numa,
            healthy: false,
            mig: None,
        }
    }
}

/// Errors that say the device itself is unusable (as opposed to a query it does not support).
fn is_device_failure(error: &NvmlError) -> bool {
    matches!(error, NvmlError::GpuLost | NvmlError::ResetRequired | NvmlError::Unknown)
}

/// The device's NUMA node from sysfs (NVML's own call needs a newer driver); `None` on
/// single-socket machines, where the kernel reports -1.
fn numa_node(device: &Device<'_>) -> Option<u32> {
    let bus_id = device.pci_info().ok()?.bus_id;
    numa_node_in(Path::new("/sys/bus/pci/devices"), &bus_id)
}

/// NVML spells the bus id `00000000:3B:00.0` (32-bit domain, upper case); sysfs `0000:3b:00.0`.
pub(crate) fn numa_node_in(sysfs_devices: &Path, nvml_bus_id: &str) -> Option<u32> {
    let bus_id = nvml_bus_id.trim_end_matches('\0').to_ascii_lowercase();
    let short = bus_id.get(bus_id.len().checked_sub(12)?..)?;
    let raw = std::fs::read_to_string(sysfs_devices.join(short).join("numa_node")).ok()?;
    raw.trim().parse::<i64>().ok().and_then(|n| u32::try_from(n).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numa_node_is_read_from_sysfs_under_the_short_bus_id() {
        let sysfs = tempfile::tempdir().unwrap();
        let dev = sysfs.path().join("0000:3b:00.0");
        std::fs::create_dir(&dev).unwrap();
        std::fs::write(dev.join("numa_node"), "1\n").unwrap();
        assert_eq!(numa_node_in(sysfs.path(), "00000000:3B:00.0"), Some(1));
        std::fs::write(dev.join("numa_node"), "-1\n").unwrap();
        assert_eq!(numa_node_in(sysfs.path(), "00000000:3B:00.0"), None);
        assert_eq!(numa_node_in(sysfs.path(), "00000000:AF:00.0"), None);
        assert_eq!(numa_node_in(sysfs.path(), "short"), None);
    }
}
