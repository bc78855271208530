//! The sim probe: readings synthesised from what the sim backend runs on each device.
//!
//! The sim backend holds a [`SimGpus`] handle: it declares nodes and their GPUs, flips health,
//! and starts and stops shares as replicas run. A device's utilization is the sum of its shares
//! (a 250-milli replica keeps a quarter of the GPU busy), its memory is what the shares hold,
//! and power and temperature follow utilization on a simple linear model, so dashboards and the
//! utilization-aware scheduler see plausible, deterministic numbers.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use grus_protocol::wire::NodeInfo;

use super::{GpuProbe, GpuReading, PodGpuUsage, PodRef, ProbeError, Sample};

const IDLE_POWER_W: f32 = 60.0;
const POWER_W_PER_PCT: f32 = 3.4;
const IDLE_TEMP_C: f32 = 32.0;
const TEMP_C_PER_PCT: f32 = 0.5;

#[derive(Clone, Debug)]
struct SimShare {
    milli: u32,
    memory_mib: u64,
}

#[derive(Clone, Debug)]
struct SimDevice {
    uuid: Option<String>,
    model: String,
    memory_total_mib: u64,
    numa: u32,
    healthy: bool,
    shares: BTreeMap<PodRef, SimShare>,
}

/// What runs on the simulated GPUs; cheap to clone, shared between the sim backend and the
/// probe.
#[derive(Clone, Debug, Default)]
pub struct SimGpus {
    devices: Arc<Mutex<BTreeMap<(String, u32), SimDevice>>>,
}

impl SimGpus {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<(String, u32), SimDevice>> {
        // Every change is a single map operation, so a poisoned lock still holds a consistent map.
        self.devices.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Declares (or updates) a node's GPUs; shares on devices that stay are kept, devices that
    /// are gone are dropped.
    pub fn set_node(&self, node: &NodeInfo) {
        let mut devices = self.lock();
        devices.retain(|(name, index), _| name != &node.name || node.gpus.iter().any(|g| g.index == *index));
        for gpu in &node.gpus {
            let device = devices.entry((node.name.clone(), gpu.index)).or_insert_with(|| SimDevice {
                uuid: None,
                model: String::new(),
                memory_total_mib: 0,
                numa: 0,
                healthy: true,
                shares: BTreeMap::new(),
            });
            device.uuid = gpu.uuid.clone();
            device.model = gpu.model.clone();
            device.memory_total_mib = gpu.memory_mib;
            device.numa = u32::from(gpu.numa);
            device.healthy = gpu.healthy && node.healthy;
        }
    }

    pub fn remove_node(&self, node: &str) {
        self.lock().retain(|(name, _), _| name != node);
    }

    /// Returns false when the device is unknown.
    pub fn set_healthy(&self, node: &str, index: u32, healthy: bool) -> bool {
        match self.lock().get_mut(&(node.to_string(), index)) {
            Some(device) => {
                device.healthy = healthy;
                true
            }
            None => false,
        }
    }

    /// A pod starts using `milli` of a device and `memory_mib` of its memory (default: the
    /// milli fraction of the device's memory). Starting again replaces the share. Returns false
    /// when the device is unknown.
    pub fn start(&self, node: &str, index: u32, pod: PodRef, milli: u32, memory_mib: Option<u64>) -> bool {
        let mut devices = self.lock();
        let Some(device) = devices.get_mut(&(node.to_string(), index)) else { return false };
        let milli = milli.min(1000);
        let memory_mib = memory_mib.unwrap_or(device.memory_total_mib * u64::from(milli) / 1000);
        device.shares.insert(pod, SimShare { milli, memory_mib });
        true
    }

    /// A pod stops: its shares on every device of the node end.
    pub fn stop(&self, node: &str, pod: &PodRef) {
        for ((name, _), device) in self.lock().iter_mut() {
            if name == node {
                device.shares.remove(pod);
            }
        }
    }

    fn sample(&self) -> Sample {
        let devices = self.lock();
        let mut sample = Sample::default();
        for ((node, index), device) in devices.iter() {
            let milli: u32 = device.shares.values().map(|s| s.milli).sum();
            let utilization = (milli.min(1000) as f32) / 10.0;
            let memory: u64 = device.shares.values().map(|s| s.memory_mib).sum();
            let (power, temperature) = if device.healthy {
                (Some(IDLE_POWER_W + POWER_W_PER_PCT * utilization), Some(IDLE_TEMP_C + TEMP_C_PER_PCT * utilization))
            } else {
                (None, None)
            };
            sample.gpus.push(GpuReading {
                node: node.clone(),
                index: *index,
                uuid: device.uuid.clone(),
                model: device.model.clone(),
                utilization_pct: if device.healthy { utilization } else { 0.0 },
                memory_used_mib: memory.min(device.memory_total_mib),
                memory_total_mib: device.memory_total_mib,
                power_w: power,
                temperature_c: temperature,
                numa: Some(device.numa),
                healthy: device.healthy,
            });
            sample.pods.extend(device.shares.iter().map(|(pod, share)| PodGpuUsage {
                node: node.clone(),
                gpu_index: *index,
                pod: pod.clone(),
                memory_used_mib: share.memory_mib,
            }));
        }
        sample
    }
}

/// A [`GpuProbe`] over a [`SimGpus`] handle.
#[derive(Clone, Debug)]
pub struct SimProbe {
    gpus: SimGpus,
}

impl SimProbe {
    pub fn new(gpus: SimGpus) -> Self {
        SimProbe { gpus }
    }
}

impl GpuProbe for SimProbe {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn sample(&self) -> Result<Sample, ProbeError> {
        Ok(self.gpus.sample())
    }
}
