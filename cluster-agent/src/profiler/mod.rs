//! The GPU profiler: per-device readings and per-pod GPU memory, from NVML or the sim.
//!
//! A [`GpuProbe`] takes one [`Sample`]; [`spawn_sampler`] takes one every interval and
//! publishes it on a watch channel. Three consumers read that channel: the Prometheus
//! endpoint ([`prometheus::metrics_router`], DCGM exporter names so existing dashboards work),
//! the agent's Metrics events ([`to_wire`]) and the device plugin's health feed
//! (`device_plugin::plugin_gpus_feed`).
//!
//! Probes: [`nvml::NvmlProbe`] on real nodes (process → pod through [`cgroup`]),
//! the sim backend's `SimControl` (readings follow what the simulator runs), and [`NoopProbe`] where NVML is absent, so a node
//! without a driver still runs the agent.

pub mod cgroup;
pub mod mig;
pub mod nvml;
pub mod prometheus;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// One device's reading.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuReading {
    /// The node (Kubernetes node name) the device is on.
    pub node: String,
    pub index: u32,
    pub uuid: Option<String>,
    pub model: String,
    /// Share of the last sample period a kernel was running, 0..=100.
    pub utilization_pct: f32,
    pub memory_used_mib: u64,
    pub memory_total_mib: u64,
    pub power_w: Option<f32>,
    pub temperature_c: Option<f32>,
    pub numa: Option<u32>,
    /// The driver answers for the device; an unhealthy device gets no new shares.
    pub healthy: bool,
    /// In MIG mode: its GPU instances (`None`: not in MIG mode, or not known).
    pub mig: Option<Vec<mig::MigInstanceReading>>,
}

/// A pod, by name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodRef {
    pub namespace: String,
    pub name: String,
}

/// GPU memory held by one pod's processes on one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodGpuUsage {
    pub node: String,
    pub gpu_index: u32,
    pub pod: PodRef,
    pub memory_used_mib: u64,
}

/// Everything one probe pass saw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    pub gpus: Vec<GpuReading>,
    pub pods: Vec<PodGpuUsage>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("NVML: {0}")]
    Nvml(#[from] nvml_wrapper::error::NvmlError),
}

/// Reads the GPUs of this node (or of the simulated cluster). Blocking: call it off the async
/// runtime ([`spawn_sampler`] does).
pub trait GpuProbe: Send + Sync {
    fn name(&self) -> &'static str;
    fn sample(&self) -> Result<Sample, ProbeError>;
}

/// Maps a pod UID (from a process's cgroup) to the pod's name. The kube backend provides one
/// from its pod cache; without one, pods are labelled by UID.
pub trait PodResolver: Send + Sync {
    fn pod_by_uid(&self, uid: &str) -> Option<PodRef>;
}

/// A probe that sees no GPU: where NVML is missing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopProbe;

impl GpuProbe for NoopProbe {
    fn name(&self) -> &'static str {
        "noop"
    }

    fn sample(&self) -> Result<Sample, ProbeError> {
        Ok(Sample::default())
    }
}

/// Samples `probe` now and then every `every`, until every receiver is dropped. A failed pass
/// keeps the previous sample (one warning per streak of failures).
pub fn spawn_sampler(probe: Arc<dyn GpuProbe>, every: Duration) -> watch::Receiver<Arc<Sample>> {
    let (tx, rx) = watch::channel(Arc::new(Sample::default()));
    tokio::spawn(async move {
        let mut failing = false;
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                _ = tx.closed() => return,
            }
            let probe = Arc::clone(&probe);
            match tokio::task::spawn_blocking(move || probe.sample()).await {
                Ok(Ok(sample)) => {
                    failing = false;
                    tx.send_if_modified(|current| {
                        let changed = **current != sample;
                        if changed {
                            *current = Arc::new(sample);
                        }
                        changed
                    });
                }
                Ok(Err(error)) if !failing => {
                    failing = true;
                    tracing::warn!(%error, "GPU probe failed; keeping the last reading");
                }
                Ok(Err(_)) => {}
                Err(error) => tracing::warn!(%error, "GPU probe task died"),
            }
        }
    });
    rx
}

/// The sample as the wire's Metrics event body.
pub fn to_wire(sample: &Sample) -> Vec<grus_protocol::wire::GpuMetrics> {
    sample
        .gpus
        .iter()
        .map(|g| grus_protocol::wire::GpuMetrics {
            node: g.node.clone(),
            index: g.index,
            busy_pct: g.utilization_pct.clamp(0.0, 100.0),
            memory_used_mib: g.memory_used_mib,
            power_w: g.power_w,
            temperature_c: g.temperature_c,
        })
        .collect()
}

/// Sums usages of the same pod on the same device (one pod often has several processes).
pub(crate) fn merge_pod_usage(usages: impl IntoIterator<Item = PodGpuUsage>) -> Vec<PodGpuUsage> {
    let mut merged: BTreeMap<(String, u32, PodRef), u64> = BTreeMap::new();
    for u in usages {
        *merged.entry((u.node, u.gpu_index, u.pod)).or_default() += u.memory_used_mib;
    }
    merged
        .into_iter()
        .map(|((node, gpu_index, pod), memory_used_mib)| PodGpuUsage { node, gpu_index, pod, memory_used_mib })
        .collect()
}
