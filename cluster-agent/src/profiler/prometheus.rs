//! `/metrics` in the Prometheus text format, under the DCGM exporter's metric and label names,
//! so dashboards and alerts written for dcgm-exporter work unchanged.
//!
//! Device series carry `pod` and `namespace` when exactly one pod uses the device (as
//! dcgm-exporter does for a pod holding a whole GPU) and empty values otherwise. Shared GPUs —
//! the case dcgm-exporter cannot break down — get one `grus_gpu_pod_fb_used` series per pod
//! from per-process accounting.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use tokio::sync::watch;

use super::{GpuReading, PodRef, Sample};

/// The content type of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A router serving `GET /metrics` from the sampler's latest sample.
pub fn metrics_router(samples: watch::Receiver<Arc<Sample>>) -> Router {
    Router::new().route("/metrics", get(serve)).with_state(samples)
}

async fn serve(State(samples): State<watch::Receiver<Arc<Sample>>>) -> impl IntoResponse {
    let sample = Arc::clone(&samples.borrow());
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], render(&sample))
}

type Value = fn(&GpuReading) -> Option<String>;

/// (name, help, value) of each device metric, in dcgm-exporter's units.
const DEVICE_METRICS: [(&str, &str, Value); 5] = [
    ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", |g| Some(number(g.utilization_pct))),
    ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", |g| {
        Some(g.memory_total_mib.saturating_sub(g.memory_used_mib).to_string())
    }),
    ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", |g| Some(g.memory_used_mib.to_string())),
    ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", |g| g.power_w.map(number)),
    ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", |g| g.temperature_c.map(number)),
];

const POD_METRIC: &str = "grus_gpu_pod_fb_used";

/// The exposition text for a sample.
pub fn render(sample: &Sample) -> String {
    // The one pod on each device, if there is exactly one.
    let mut pods_on: BTreeMap<(&str, u32), Vec<&PodRef>> = BTreeMap::new();
    for usage in &sample.pods {
        pods_on.entry((usage.node.as_str(), usage.gpu_index)).or_default().push(&usage.pod);
    }
    let mut gpus: Vec<&GpuReading> = sample.gpus.iter().collect();
    gpus.sort_by(|a, b| (&a.node, a.index).cmp(&(&b.node, b.index)));

    let mut out = String::new();
    for (name, help, value) in DEVICE_METRICS {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for gpu in &gpus {
            let Some(value) = value(gpu) else { continue };
            let pod = match pods_on.get(&(gpu.node.as_str(), gpu.index)).map(Vec::as_slice) {
                Some([only]) => Some(*only),
                _ => None,
            };
            let _ = writeln!(out, "{name}{{{}}} {value}", labels(gpu, pod));
        }
    }
    if !sample.pods.is_empty() {
        let _ = writeln!(out, "# HELP {POD_METRIC} Framebuffer memory used by one pod's processes (in MiB).");
        let _ = writeln!(out, "# TYPE {POD_METRIC} gauge");
        for usage in &sample.pods {
            let Some(gpu) = gpus.iter().find(|g| g.node == usage.node && g.index == usage.gpu_index) else { continue };
            let _ = writeln!(out, "{POD_METRIC}{{{}}} {}", labels(gpu, Some(&usage.pod)), usage.memory_used_mib);
        }
    }
    out
}

fn labels(gpu: &GpuReading, pod: Option<&PodRef>) -> String {
    format!(
        "gpu=\"{}\",UUID=\"{}\",modelName=\"{}\",Hostname=\"{}\",pod=\"{}\",namespace=\"{}\"",
        gpu.index,
        escape(gpu.uuid.as_deref().unwrap_or("")),
        escape(&gpu.model),
        escape(&gpu.node),
        escape(pod.map_or("", |p| p.name.as_str())),
        escape(pod.map_or("", |p| p.namespace.as_str())),
    )
}

/// Label value escaping of the text format: backslash, double quote and line feed.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Integers without a fraction (`42`, as dcgm-exporter prints them), others as Rust prints
/// them (`41.5`); non-finite values as the format spells them.
fn number(v: f32) -> String {
    if v.is_nan() {
        "NaN".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else {
        format!("{v}")
    }
}
