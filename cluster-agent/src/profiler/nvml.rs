//! The NVML probe: real readings from the NVIDIA driver through nvml-wrapper.
//!
//! nvml-wrapper loads `libnvidia-ml.so` at run time, so the agent builds and starts on machines
//! without a driver; [`nvml_or_noop`] then falls back to [`NoopProbe`] with one warning.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Once};

use nvml_wrapper::enum_wrappers::device::TemperatureSensor;
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::Nvml;

use super::cgroup::pod_uid_of_pid;
use super::{merge_pod_usage, GpuProbe, GpuReading, NoopProbe, PodGpuUsage, PodRef, PodResolver, ProbeError, Sample};

const MIB: u64 = 1024 * 1024;

/// What stays true of a device between samples, remembered so that a device the driver lost
/// is still reported (as unhealthy, under the same uuid, hence the same plugin ids).
#[derive(Clone, Debug)]
struct Identity {
    uuid: Option<String>,
    model: String,
    memory_total_mib: u64,
}

pub struct NvmlProbe {
    nvml: Nvml,
    node: String,
    proc_root: PathBuf,
    pods: Option<Arc<dyn PodResolver>>,
    known: Mutex<BTreeMap<u32, Identity>>,
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
        let nvml = Nvml::init()?;
        Ok(NvmlProbe {
            nvml,
            node: node.to_string(),
            proc_root: PathBuf::from("/proc"),
            pods,
            known: Mutex::new(BTreeMap::new()),
        })
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
        let mut known = self.known.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
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
                    };
                    known.insert(index, id.clone());
                    id
                }
            };
            let healthy = memory.is_ok() && utilization.is_ok();
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
                numa: None,
                healthy,
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
            numa: None,
            healthy: false,
        }
    }
}
