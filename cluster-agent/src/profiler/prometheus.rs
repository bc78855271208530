//! `/metrics` in the Prometheus text format, under the DCGM exporter's metric and label names,
//! so dashboards and alerts written for dcgm-exporter work unchanged.
//!
//! Device series carry `pod` and `namespace` when exactly one pod uses the device (as
//! dcgm-exporter does for a pod holding a whole GPU) and empty values otherwise. Shared GPUs —
//! the case dcgm-exporter cannot break down — get one `grus_gpu_pod_fb_used` series per pod
//! from per-process accounting.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus::{Encoder, GaugeVec, Opts, Registry, TextEncoder};
use tokio::sync::watch;

use super::{GpuReading, PodRef, Sample};

/// The content type of the text exposition format.
pub const CONTENT_TYPE: &str = prometheus::TEXT_FORMAT;

/// A router serving `GET /metrics` from the sampler's latest sample.
pub fn metrics_router(samples: watch::Receiver<Arc<Sample>>) -> Router {
    Router::new().route("/metrics", get(serve)).with_state(samples)
}

async fn serve(State(samples): State<watch::Receiver<Arc<Sample>>>) -> impl IntoResponse {
    let sample = Arc::clone(&samples.borrow());
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], render(&sample))
}

type Value = fn(&GpuReading) -> Option<f64>;

/// (name, help, value) of each device metric, in dcgm-exporter's units.
const DEVICE_METRICS: [(&str, &str, Value); 5] = [
    ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", |g| Some(decimal(g.utilization_pct))),
    ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", |g| {
        Some(g.memory_total_mib.saturating_sub(g.memory_used_mib) as f64)
    }),
    ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", |g| Some(g.memory_used_mib as f64)),
    ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", |g| g.power_w.map(decimal)),
    ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", |g| g.temperature_c.map(decimal)),
];

/// A reading as the device gave it: `f64::from(215.3f32)` is 215.3000030517578, which the
/// exposition would print in full; the f32's shortest decimal form is what was measured.
fn decimal(v: f32) -> f64 {
    v.to_string().parse().unwrap_or_else(|_| f64::from(v))
}

const POD_METRIC: &str = "grus_gpu_pod_fb_used";

/// dcgm-exporter's labels of a device series.
const LABELS: [&str; 6] = ["gpu", "UUID", "modelName", "Hostname", "pod", "namespace"];

/// The exposition text for a sample (families and labels in the crate's order: sorted by name).
pub fn render(sample: &Sample) -> String {
    // The one pod on each device, if there is exactly one.
    let mut pods_on: BTreeMap<(&str, u32), Vec<&PodRef>> = BTreeMap::new();
    for usage in &sample.pods {
        let on = pods_on.entry((usage.node.as_str(), usage.gpu_index)).or_default();
        if !on.contains(&&usage.pod) {
            on.push(&usage.pod);
        }
    }
    let registry = Registry::new();
    for (name, help, value) in DEVICE_METRICS {
        let family = gauges(&registry, name, help);
        for gpu in &sample.gpus {
            let Some(value) = value(gpu) else { continue };
            let pod = match pods_on.get(&(gpu.node.as_str(), gpu.index)).map(Vec::as_slice) {
                Some([only]) => Some(*only),
                _ => None,
            };
            family.with_label_values(&labels(gpu, pod).each_ref().map(String::as_str)).set(value);
        }
    }
    if !sample.pods.is_empty() {
        let family = gauges(&registry, POD_METRIC, "Framebuffer memory used by one pod's processes (in MiB).");
        for usage in &sample.pods {
            let Some(gpu) = sample.gpus.iter().find(|g| g.node == usage.node && g.index == usage.gpu_index) else {
                continue;
            };
            let labels = labels(gpu, Some(&usage.pod));
            // Added, not set: a pod listed twice for one device (two of its containers) is one
            // series holding both (a label set appears once in an exposition).
            family.with_label_values(&labels.each_ref().map(String::as_str)).add(usage.memory_used_mib as f64);
        }
    }
    let mut out = Vec::new();
    if let Err(e) = TextEncoder::new().encode(&registry.gather(), &mut out) {
        tracing::error!(error = %e, "GPU metrics cannot be encoded");
    }
    String::from_utf8(out).unwrap_or_default()
}

/// A gauge family with dcgm-exporter's labels, registered in `registry`.
fn gauges(registry: &Registry, name: &str, help: &str) -> GaugeVec {
    let family = GaugeVec::new(Opts::new(name, help), &LABELS).expect("a valid metric name and labels");
    registry.register(Box::new(family.clone())).expect("each family once");
    family
}

/// The values of [`LABELS`] for a device, and the one pod using it if there is one.
fn labels(gpu: &GpuReading, pod: Option<&PodRef>) -> [String; 6] {
    [
        gpu.index.to_string(),
        gpu.uuid.clone().unwrap_or_default(),
        gpu.model.clone(),
        gpu.node.clone(),
        pod.map_or_else(String::new, |p| p.name.clone()),
        pod.map_or_else(String::new, |p| p.namespace.clone()),
    ]
}
